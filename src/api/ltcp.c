/* ltcp: the real transport of tend.tcp (lua/tend/tcp.lua builds the actors
 * on it): core.tcp_listen and core.tcp_connect, the socket and listener
 * handles, and the few helpers tcp.lua needs (spawning a connection where
 * the caller is, ctx:write and ctx:close). */
#include <lauxlib.h>
#include <math.h>
#include <string.h>

#include "api/api.h"

/* Raises an error of kind with message "fn: text" and e.reason = reason. */
static int raise_named(lua_State *L, const char *kind, const char *fn,
                       const char *text, const char *reason) {
  lua_pushfstring(L, "%s: %s", fn, text);
  tend_error_new(L, kind, lua_tostring(L, -1));
  lua_pushstring(L, reason);
  lua_setfield(L, -2, "reason");
  return lua_error(L);
}

/* Field k of the options table at 1, as an integer (or def when absent). */
static int opt_int(lua_State *L, const char *k, int def) {
  lua_getfield(L, 1, k);
  int v = lua_isnil(L, -1) ? def : (int)luaL_checkinteger(L, -1);
  lua_pop(L, 1);
  return v;
}

static const char *opt_string(lua_State *L, const char *k) {
  lua_getfield(L, 1, k);
  const char *s = luaL_checkstring(L, -1);
  lua_pop(L, 1); /* still in the options table */
  return s;
}

/* The actor named by the ref in field k of the options table. */
static tend_actor *opt_actor(lua_State *L, tend_host *h, const char *k,
                             const char *fn) {
  lua_getfield(L, 1, k);
  tend_ref *r = tend_check_ref(L, -1, fn, k);
  tend_actor *a = tend_ref_actor(h, r);
  lua_pop(L, 1);
  return a;
}

/* ------------------------------------------------------------ listeners */

static tend_listener *check_listener(lua_State *L) {
  tend_listener **l = luaL_checkudata(L, 1, TEND_LISTENER_MT);
  return *l;
}

/* core.tcp_listen{ host, port, backlog, max_connections, listener }. */
static int l_listen(lua_State *L) {
  tend_host *h = tend_host_of(L);
  luaL_checktype(L, 1, LUA_TTABLE);
  const char *host = opt_string(L, "host");
  int port = opt_int(L, "port", 0);
  tend_actor *a = opt_actor(L, h, "listener", "tend.tcp.listen");
  if (a == NULL) luaL_error(L, "tend.tcp.listen: the listener actor is dead");
  tend_listener **ud = lua_newuserdatauv(L, sizeof *ud, 0);
  *ud = NULL;
  luaL_setmetatable(L, TEND_LISTENER_MT);
  *ud = tend_tcp_listen(L, h, host, port, opt_int(L, "backlog", 128),
                        opt_int(L, "max_connections", 1024), tend_actor_id(a),
                        tend_actor_gen(a));
  if (*ud == NULL) {
    const char *why = lua_tostring(L, -1);
    const char *colon = strrchr(why, ':');
    return raise_named(L, TEND_ERR_NAME(LISTEN_ERROR), "tend.tcp.listen", why,
                       colon ? colon + 2 : why);
  }
  tend_tcp_listener_set_handle(L, *ud, -1);
  return 1;
}

static int l_listener_port(lua_State *L) {
  lua_pushinteger(L, tend_tcp_listener_port(check_listener(L)));
  return 1;
}

static int l_listener_refused(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)tend_tcp_listener_refused(check_listener(L)));
  return 1;
}

static int l_listener_close(lua_State *L) {
  tend_tcp_listener_close(check_listener(L));
  return 0;
}

static int l_listener_gc(lua_State *L) {
  tend_listener **l = lua_touserdata(L, 1);
  if (*l) tend_tcp_listener_release(*l);
  *l = NULL;
  return 0;
}

/* ------------------------------------------------------------ connecting */

static tend_sock **check_ud(lua_State *L) {
  return luaL_checkudata(L, 1, TEND_SOCKET_MT);
}

static tend_sock *check_sock(lua_State *L) {
  tend_sock **s = check_ud(L);
  if (*s == NULL) luaL_error(L, "tend.tcp: the socket is gone");
  return *s;
}

static int connect_k(lua_State *L, int status, lua_KContext k) {
  (void)status;
  (void)k;
  tend_host *h = tend_host_of(L);
  tend_sock *s = *(tend_sock **)lua_touserdata(L, 2);
  int wake = tend_sched_woken(L, h);
  if (wake == TEND_WAKE_OK) {
    tend_sched_take_reply(L, h);
    lua_pop(L, 1);
  } else {
    tend_tcp_connect_abandon(s);
  }
  const char *why = tend_tcp_connect_error(s);
  if (why == NULL) {
    lua_settop(L, 2);
    return 1;
  }
  lua_getfield(L, 1, "host");
  lua_getfield(L, 1, "port");
  lua_pushfstring(L, "%s:%d: %s", lua_tostring(L, -2),
                  (int)lua_tointeger(L, -1), why);
  return raise_named(L, TEND_ERR_NAME(CONNECT_ERROR), "tend.tcp.connect",
                     lua_tostring(L, -1), why);
}

/* core.tcp_connect{ host, port, timeout } -> socket (the actor waits). */
static int l_connect(lua_State *L) {
  tend_host *h = tend_host_of(L);
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  const char *host = opt_string(L, "host");
  int port = opt_int(L, "port", 0);
  lua_getfield(L, 1, "timeout");
  double t = lua_isnil(L, -1) ? 5 : luaL_checknumber(L, -1);
  lua_pop(L, 1);
  tend_actor *a = tend_sched_check_wait(L, h, "tend.tcp.connect");
  tend_sock **ud = lua_newuserdatauv(L, sizeof *ud, 0); /* at 2 */
  *ud = NULL;
  luaL_setmetatable(L, TEND_SOCKET_MT);
  *ud = tend_tcp_connect(L, h, a, host, port, tend_clock_ns(t));
  if (*ud == NULL)
    return raise_named(L, TEND_ERR_NAME(CONNECT_ERROR), "tend.tcp.connect",
                       lua_tostring(L, -1), lua_tostring(L, -1));
  tend_tcp_set_handle(L, *ud, 2);
  return tend_sched_wait(L, h, TEND_WAIT_ASK, connect_k);
}

/* ------------------------------------------------------------ sockets */

static const char *const framings[] = {"line", "length", "raw", NULL};

/* s:start{ owner, to, framing, max_line } */
static int l_start(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_sock *s = check_sock(L);
  lua_remove(L, 1); /* the options at 1 */
  luaL_checktype(L, 1, LUA_TTABLE);
  tend_actor *owner = opt_actor(L, h, "owner", "socket:start");
  tend_actor *to = opt_actor(L, h, "to", "socket:start");
  lua_getfield(L, 1, "framing");
  int framing = luaL_checkoption(L, -1, "line", framings);
  lua_pop(L, 1);
  int max_line = opt_int(L, "max_line", 65536);
  if (owner == NULL || to == NULL) { /* nobody to read: it closes */
    tend_tcp_close(s);
    return 0;
  }
  int r = tend_tcp_start(s, tend_actor_id(owner), tend_actor_gen(owner),
                         tend_actor_id(to), tend_actor_gen(to),
                         (tend_framing)framing, (size_t)max_line);
  if (r != 0 && r != UV_ENOTCONN)
    luaL_error(L, "socket:start: %s", uv_strerror(r));
  return 0;
}

static int write_k(lua_State *L, int status, lua_KContext k) {
  (void)status;
  (void)k;
  tend_host *h = tend_host_of(L);
  if (tend_sched_woken(L, h) == TEND_WAKE_OK) {
    tend_sched_take_reply(L, h);
    lua_pop(L, 1);
  }
  lua_pushboolean(L, 1);
  return 1;
}

/* s:write(data) -> true (waits while the queue is over its mark), or
 * false, "closed" when the connection has ended (gen_tcp's {error,
 * closed}: a peer that closes while a reply is being written is a race,
 * not a bug of the writer). */
static int l_write(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_sock *s = check_sock(L);
  size_t n;
  const char *data = luaL_checklstring(L, 2, &n);
  int r = tend_tcp_write(s, data, n);
  if (r < 0) { /* closed, or it failed and is now closed */
    lua_pushboolean(L, 0);
    lua_pushstring(L, r == UV_ENOTCONN ? "closed" : uv_strerror(r));
    return 2;
  }
  if (r == 1) { /* over the mark */
    tend_actor *a = tend_host_current(h);
    int w = a && lua_isyieldable(L) ? tend_tcp_wait_drain(L, h, a, s) : -1;
    if (w == 0) return tend_sched_wait(L, h, TEND_WAIT_ASK, write_k);
    if (w < 0)
      return raise_named(L, TEND_ERR_NAME(OVERLOADED), "tend.tcp.write",
                         "over 1 MiB queued for this connection and the caller "
                         "cannot wait (the data is queued; slow down)",
                         "overloaded");
  }
  lua_pushboolean(L, 1);
  return 1;
}

static int l_close(lua_State *L) {
  tend_tcp_close(check_sock(L));
  return 0;
}

static int l_reset(lua_State *L) {
  tend_tcp_reset(check_sock(L));
  return 0;
}

static int l_closed(lua_State *L) {
  lua_pushboolean(L, tend_tcp_is_closed(check_sock(L)));
  return 1;
}

static int l_peer(lua_State *L) {
  char buf[80];
  int r = tend_tcp_peer(check_sock(L), buf, sizeof buf);
  if (r != 0)
    return raise_named(L, TEND_ERR_NAME(NOT_CONNECTED), "tend.tcp.peer",
                       uv_strerror(r), "closed");
  lua_pushstring(L, buf);
  return 1;
}

static int l_sock_gc(lua_State *L) {
  tend_sock **s = lua_touserdata(L, 1);
  if (*s) tend_tcp_release(*s);
  *s = NULL;
  return 0;
}

static int l_sock_tostring(lua_State *L) {
  tend_sock *s = *check_ud(L);
  char buf[80];
  if (s && tend_tcp_peer(s, buf, sizeof buf) == 0)
    lua_pushfstring(L, "Socket(%s)", buf);
  else
    lua_pushliteral(L, "Socket(closed)");
  return 1;
}

/* ------------------------------------------------------------ helpers */

/* Can the running actor have children? (a task, a backoff supervisor and
 * a guardian cannot) */
static tend_actor *parent_here(tend_host *h) {
  tend_actor *a = tend_host_current(h);
  if (a && !tend_actor_is_task(a) && !tend_actor_is_backoff(a) &&
      !tend_actor_is_guardian(a))
    return a;
  return NULL;
}

static int l_can_parent(lua_State *L) {
  lua_pushboolean(L, parent_here(tend_host_of(L)) != NULL);
  return 1;
}

/* core.tcp_spawn(factory, opts, fn) -> ref: a child of the running actor,
 * or of /user when it cannot have children. */
static int l_spawn(lua_State *L) {
  tend_host *h = tend_host_of(L);
  const char *fn = luaL_optstring(L, 3, "tend.tcp");
  lua_pushstring(L, fn); /* kept below the spawn's arguments */
  lua_insert(L, 1);
  lua_settop(L, 3);
  tend_actor *parent = parent_here(h);
  if (parent == NULL) parent = tend_host_user(h);
  if (parent == NULL) luaL_error(L, "%s: the host is shutting down", fn);
  return tend_spawn_under(L, parent, 1, lua_tostring(L, 1));
}

/* core.tcp_ctx_methods{ name = function } adds ctx methods. */
static int l_ctx_methods(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_getmetatable(L, TEND_CTX_MT);
  lua_getfield(L, -1, "methods");
  lua_pushnil(L);
  while (lua_next(L, 1)) {
    lua_pushvalue(L, -2);
    lua_insert(L, -2);
    lua_rawset(L, -4);
  }
  return 0;
}

static int l_is_ref(lua_State *L) {
  lua_pushboolean(L, tend_ref_test(L, 1) != NULL);
  return 1;
}

void tend_open_tcp(lua_State *L) {
  static const luaL_Reg sock[] = {{"start", l_start}, {"write", l_write},
                                  {"close", l_close}, {"reset", l_reset},
                                  {"peer", l_peer},   {"closed", l_closed},
                                  {NULL, NULL}};
  static const luaL_Reg lst[] = {{"port", l_listener_port},
                                 {"refused", l_listener_refused},
                                 {"close", l_listener_close},
                                 {NULL, NULL}};
  luaL_newmetatable(L, TEND_SOCKET_MT);
  luaL_newlib(L, sock);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, l_sock_gc);
  lua_setfield(L, -2, "__gc");
  lua_pushcfunction(L, l_sock_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pushboolean(L, 1); /* an identity: --copy-messages keeps it */
  lua_setfield(L, -2, "__tend_handle");
  lua_pop(L, 1);
  luaL_newmetatable(L, TEND_LISTENER_MT);
  luaL_newlib(L, lst);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, l_listener_gc);
  lua_setfield(L, -2, "__gc");
  lua_pushboolean(L, 1);
  lua_setfield(L, -2, "__tend_handle");
  lua_pop(L, 1);
  static const luaL_Reg fns[] = {{"tcp_listen", l_listen},
                                 {"tcp_connect", l_connect},
                                 {"tcp_spawn", l_spawn},
                                 {"tcp_can_parent", l_can_parent},
                                 {"tcp_ctx_methods", l_ctx_methods},
                                 {"tcp_is_ref", l_is_ref},
                                 {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
}
