/* lhttp_server: the real transport of tend.http.serve
 * (lua/tend/http_server.lua builds the server and request actors on it):
 * core.httpd_listen, the server handle (port, refused, connections,
 * respond, stream, send, ws_*, close), core.httpd_child (a request's
 * actor), core.httpd_ref and core.httpd_event, a request's trace event.
 */
#include <lauxlib.h>
#include <string.h>

#include "api/api.h"

/* The server handle at 1. The methods have the handle's metatable as
 * upvalue 1: a comparison, not a lookup of its name in the registry. */
static tend_httpd *check_server(lua_State *L) {
  tend_httpd **s = lua_touserdata(L, 1);
  if (s == NULL || !lua_getmetatable(L, 1) ||
      !lua_rawequal(L, -1, lua_upvalueindex(1)))
    s = luaL_checkudata(L, 1, TEND_HTTPD_MT); /* raises */
  else
    lua_pop(L, 1);
  if (*s == NULL) luaL_error(L, "tend.http: the server is gone");
  return *s;
}

/* Field k of the options table at 1, as an integer (def when absent). */
static lua_Integer opt_int(lua_State *L, const char *k, lua_Integer def) {
  lua_getfield(L, 1, k);
  lua_Integer v = lua_isnil(L, -1) ? def : luaL_checkinteger(L, -1);
  lua_pop(L, 1);
  return v;
}

/* core.httpd_listen{ host, port, max_connections, max_body, timeout, tls,
 * owner } -> server; raises ListenError (e.reason: why) when it cannot
 * listen, an error naming tls.cert or tls.key when those files do not
 * serve. */
static int l_listen(lua_State *L) {
  tend_host *h = tend_host_of(L);
  luaL_checktype(L, 1, LUA_TTABLE);
  tend_httpd_spec spec;
  lua_getfield(L, 1, "host");
  spec.host = luaL_checkstring(L, -1); /* kept by the options table */
  lua_pop(L, 1);
  spec.port = (int)opt_int(L, "port", 0);
  spec.max_connections = (int)opt_int(L, "max_connections", 1024);
  spec.max_body = (size_t)opt_int(L, "max_body", 8 << 20);
  lua_getfield(L, 1, "timeout");
  lua_Number t = lua_isnil(L, -1) ? 30 : luaL_checknumber(L, -1);
  lua_pop(L, 1);
  spec.timeout_ms = t < 0.001 ? 1 : (uint64_t)(t * 1000);
  spec.tls_cert = spec.tls_key = NULL;
  lua_getfield(L, 1, "tls"); /* { cert = path, key = path }, checked */
  if (lua_istable(L, -1)) {
    lua_getfield(L, -1, "cert");
    lua_getfield(L, -2, "key");
    spec.tls_cert = luaL_checkstring(L, -2); /* kept on the stack */
    spec.tls_key = luaL_checkstring(L, -1);
  }
  lua_getfield(L, 1, "owner");
  tend_actor *a =
      tend_ref_actor(h, tend_check_ref(L, -1, "tend.http.serve", "owner"));
  lua_pop(L, 1);
  if (a == NULL) luaL_error(L, "tend.http.serve: the server actor is dead");
  tend_httpd **ud = lua_newuserdatauv(L, sizeof *ud, 0);
  *ud = NULL;
  luaL_setmetatable(L, TEND_HTTPD_MT);
  *ud = tend_httpd_listen(L, h, &spec, tend_actor_id(a), tend_actor_gen(a));
  if (*ud == NULL) {
    const char *why = lua_tostring(L, -1);
    if (strncmp(why, "tls.", 4) == 0) { /* a bad option, not a bind */
      lua_pushfstring(L, "tend.http.serve: %s", why);
      return lua_error(L); /* the caller says where */
    }
    const char *colon = strrchr(why, ':');
    lua_pushfstring(L, "tend.http.serve: %s", why);
    tend_error_new(L, TEND_ERR_NAME(LISTEN_ERROR), lua_tostring(L, -1));
    lua_pushstring(L, colon ? colon + 2 : why);
    lua_setfield(L, -2, "reason");
    return lua_error(L);
  }
  tend_httpd_set_handle(L, *ud, -1);
  return 1;
}

static int l_port(lua_State *L) {
  lua_pushinteger(L, tend_httpd_port(check_server(L)));
  return 1;
}

static int l_refused(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)tend_httpd_refused(check_server(L)));
  return 1;
}

static int l_connections(lua_State *L) {
  lua_pushinteger(L, tend_httpd_connections(check_server(L)));
  return 1;
}

/* s:respond(id, status, headers, body) -> true when sent, false when the
 * request is gone (its client left, or it was answered). headers true:
 * content-type text/plain; charset=utf-8 alone. */
static int l_respond(lua_State *L) {
  tend_httpd *s = check_server(L);
  lua_Integer id = luaL_checkinteger(L, 2);
  lua_Integer status = luaL_checkinteger(L, 3);
  if (status < 100 || status > 999)
    luaL_error(L, "tend.http: status: expected 100-999, got %d", (int)status);
  int hidx = lua_istable(L, 4) ? 4 : lua_toboolean(L, 4) ? TEND_HTTPD_PLAIN : 0;
  size_t n = 0;
  const char *body = luaL_optlstring(L, 5, "", &n);
  lua_pushboolean(
      L, tend_httpd_respond(L, s, (int64_t)id, (int)status, hidx, body, n));
  return 1;
}

/* s:stream(id, status, headers, actor) -> true when started (its head
 * sent; actor is told { tend = "http_more", id } when H2O wants the next
 * chunk), false when the request is gone. */
static int l_stream(lua_State *L) {
  tend_httpd *s = check_server(L);
  lua_Integer id = luaL_checkinteger(L, 2);
  lua_Integer status = luaL_checkinteger(L, 3);
  if (status < 100 || status > 999)
    luaL_error(L, "tend.http: status: expected 100-999, got %d", (int)status);
  int hidx = lua_istable(L, 4) ? 4 : 0;
  tend_actor *a = tend_ref_actor(tend_host_of(L),
                                 tend_check_ref(L, 5, "tend.http", "actor"));
  if (a == NULL) {
    lua_pushboolean(L, 0);
    return 1;
  }
  lua_pushboolean(L, tend_httpd_stream(L, s, (int64_t)id, (int)status, hidx,
                                       tend_actor_id(a), tend_actor_gen(a)));
  return 1;
}

/* s:send(id, chunk) the next chunk of a streamed answer; s:send(id, nil)
 * ends it; s:send(id, nil, true) ends it short (an error). -> true when
 * sent, false when the request is gone. */
static int l_send(lua_State *L) {
  tend_httpd *s = check_server(L);
  lua_Integer id = luaL_checkinteger(L, 2);
  size_t n = 0;
  const char *data = luaL_optlstring(L, 3, NULL, &n);
  int end = data != NULL ? 0 : lua_toboolean(L, 4) ? 2 : 1;
  lua_pushboolean(L, tend_httpd_stream_send(L, s, (int64_t)id, data, n, end));
  return 1;
}

/* s:ws_upgrade(id, actor) -> the connection's id; false when the request
 * is gone; nil when it is not a WebSocket handshake. */
static int l_ws_upgrade(lua_State *L) {
  tend_httpd *s = check_server(L);
  lua_Integer id = luaL_checkinteger(L, 2);
  tend_actor *a = tend_ref_actor(tend_host_of(L),
                                 tend_check_ref(L, 3, "tend.http", "actor"));
  int64_t w = a == NULL
                  ? 0
                  : tend_httpd_ws_upgrade(s, (int64_t)id, tend_actor_id(a),
                                          tend_actor_gen(a));
  if (w > 0)
    lua_pushinteger(L, (lua_Integer)w);
  else if (w == 0)
    lua_pushboolean(L, 0);
  else
    lua_pushnil(L);
  return 1;
}

/* s:ws_send(wid, data, binary) -> the bytes still queued, or false when
 * the connection is gone. */
static int l_ws_send(lua_State *L) {
  tend_httpd *s = check_server(L);
  lua_Integer wid = luaL_checkinteger(L, 2);
  size_t n;
  const char *data = luaL_checklstring(L, 3, &n);
  int64_t q =
      tend_httpd_ws_send(L, s, (int64_t)wid, data, n, lua_toboolean(L, 4));
  if (q < 0)
    lua_pushboolean(L, 0);
  else
    lua_pushinteger(L, (lua_Integer)q);
  return 1;
}

/* s:ws_queued(wid) -> bytes queued, or false when gone. */
static int l_ws_queued(lua_State *L) {
  tend_httpd *s = check_server(L);
  int64_t q = tend_httpd_ws_queued(s, (int64_t)luaL_checkinteger(L, 2));
  if (q < 0)
    lua_pushboolean(L, 0);
  else
    lua_pushinteger(L, (lua_Integer)q);
  return 1;
}

/* s:ws_close(wid, code) -> true, or false when gone. */
static int l_ws_close(lua_State *L) {
  tend_httpd *s = check_server(L);
  lua_Integer wid = luaL_checkinteger(L, 2);
  lua_Integer code = luaL_optinteger(L, 3, 1000);
  lua_pushboolean(L, tend_httpd_ws_close(L, s, (int64_t)wid, (int)code));
  return 1;
}

static int l_close(lua_State *L) {
  tend_httpd_close(check_server(L));
  return 0;
}

static int l_gc(lua_State *L) {
  tend_httpd **s = lua_touserdata(L, 1);
  if (*s) tend_httpd_release(*s);
  *s = NULL;
  return 0;
}

/* core.httpd_child(ctx, factory) -> ref: a temporary child of ctx's
 * actor (a request's or a WebSocket connection's), spawned as
 * ctx:spawn(factory, { restart = "temporary" }) does, without reading an
 * options table per request.
 * core.httpd_child(ctx, factory, msg) -> n: the same, sent msg from ctx's
 * actor at once; n, its number, makes its ref through core.httpd_ref only
 * when one is needed (a request's actor dies with no ref made). */
static int l_child(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_actor *parent = tend_check_own_ctx(L, 1, "tend.http.serve");
  luaL_checktype(L, 2, LUA_TFUNCTION);
  int msg = lua_gettop(L) >= 3;
  lua_settop(L, 3);
  tend_spawn_opts o;
  tend_spawn_opts_init(&o);
  o.restart = TEND_TEMPORARY;
  o.record = msg;
  tend_actor_check_spawn(L, h, parent, 0, "tend.http.serve");
  tend_actor *a = tend_actor_spawn(L, h, parent, 2, &o);
  if (!msg) return 1;
  uint32_t id = tend_actor_id(a), gen = tend_actor_gen(a);
  tend_actor_send(L, h, id, gen, 3, tend_actor_id(parent),
                  tend_actor_gen(parent));
  lua_pushinteger(L, (lua_Integer)(((uint64_t)gen << 32) | id));
  return 1;
}

/* core.httpd_ref(n) -> the ref of core.httpd_child's actor number n (its
 * canonical ref while it lives). */
static int l_ref(lua_State *L) {
  uint64_t n = (uint64_t)luaL_checkinteger(L, 1);
  tend_ref_push(L, tend_host_of(L), (uint32_t)n, (uint32_t)(n >> 32));
  return 1;
}

/* core.httpd_event(path, method, rpath, query, status, t0): the "http"
 * trace event of an answered request taken at t0 (core.now()), its target
 * rpath[?query] (logged at info; nothing is built, not even the clock
 * read, when no one would see it). */
static int l_event(lua_State *L) {
  tend_host *h = tend_host_of(L);
  if (tend_host_log_level(h) < TEND_LOG_INFO && !tend_event_wanted(h))
    return 0; /* not logged (an info line), not traced */
  tend_event e = TEND_EVENT_INIT(TEND_EV_HTTP, NULL);
  e.path = luaL_checkstring(L, 1);
  e.method = luaL_checkstring(L, 2);
  luaL_checkstring(L, 3);
  if (!lua_isnil(L, 4)) { /* the query: target = rpath?query */
    lua_pushvalue(L, 3);
    lua_pushliteral(L, "?");
    lua_pushvalue(L, 4);
    lua_concat(L, 3);
    lua_replace(L, 3);
  }
  e.target = lua_tostring(L, 3);
  e.status = luaL_checkinteger(L, 5);
  double s = (double)tend_host_now(h) / 1e9 - luaL_checknumber(L, 6);
  e.duration_ns = s > 0 ? (int64_t)(s * 1e9 + 0.5) : 0;
  tend_event_emit(L, h, &e);
  return 0;
}

void tend_open_http_server(lua_State *L) {
  static const luaL_Reg srv[] = {{"port", l_port},
                                 {"refused", l_refused},
                                 {"connections", l_connections},
                                 {"respond", l_respond},
                                 {"stream", l_stream},
                                 {"send", l_send},
                                 {"ws_upgrade", l_ws_upgrade},
                                 {"ws_send", l_ws_send},
                                 {"ws_queued", l_ws_queued},
                                 {"ws_close", l_ws_close},
                                 {"close", l_close},
                                 {NULL, NULL}};
  luaL_newmetatable(L, TEND_HTTPD_MT);
  luaL_newlibtable(L, srv);
  lua_pushvalue(L, -2); /* the metatable: check_server's upvalue */
  luaL_setfuncs(L, srv, 1);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, l_gc);
  lua_setfield(L, -2, "__gc");
  lua_pushboolean(L, 1); /* an identity: --copy-messages keeps it */
  lua_setfield(L, -2, "__tend_handle");
  lua_pop(L, 1);
  static const luaL_Reg fns[] = {{"httpd_listen", l_listen},
                                 {"httpd_child", l_child},
                                 {"httpd_ref", l_ref},
                                 {"httpd_event", l_event},
                                 {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
}
