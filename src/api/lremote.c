/* lremote: the node layer's hold on proxies (runtime/remote.h), for
 * lua/tend/node.lua. Not part of the tend module (lua/tend.lua leaves
 * node_* and remote_* out). */
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "api/api.h"

/* The runtime's hook for a message to a proxy: router(proxy, msg, sender or
 * nil). Its error (a message that cannot travel) is raised in the sender's code
 * when the send was made by Lua code (a coroutine); from the loop (a timer), it
 * is logged. */
static void remote_send(lua_State *L, tend_host *h, tend_actor *p,
                        tend_value *v, uint32_t sid, uint32_t sgen) {
  tend_node_push_router(L, h);
  tend_actor_push_ref(L, h, p);
  tend_value_push(L, h, v);
  tend_value_drop(L, h, v);
  tend_ref_push(L, h, sid, sgen);
  if (lua_pcall(L, 3, 0, 0) == LUA_OK) return;
  if (L != tend_host_state(h)) lua_error(L);
  tend_host_log(h, TEND_LOG_WARN, "/system/node", "%s",
                luaL_tolstring(L, -1, NULL));
  lua_pop(L, 2);
}

/* core.node_identity(name, inc): this host is node `name`, incarnation
 * inc (refs it sends carry them). */
static int l_identity(lua_State *L) {
  tend_host *h = tend_host_of(L);
  size_t n;
  const char *name = luaL_checklstring(L, 1, &n);
  lua_Integer inc = luaL_checkinteger(L, 2);
  if (tend_node_set_identity(h, name, n, (uint64_t)inc) != 0)
    return luaL_error(L, "node: out of memory");
  return 0;
}

/* core.remote_hooks(send, decode): the router of messages to proxies and
 * the maker of refs to other nodes' actors (see runtime/codec.h). */
static int l_hooks(lua_State *L) {
  tend_host *h = tend_host_of(L);
  luaL_checktype(L, 1, LUA_TFUNCTION);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  tend_node_set_hooks(L, h, 1, 2, remote_send);
  return 0;
}

/* core.remote_new(node, inc, id, gen, path, kind) -> a new proxy's ref. */
static int l_new(lua_State *L) {
  luaL_checkstring(L, 1);
  luaL_checkinteger(L, 2);
  luaL_checkinteger(L, 3);
  luaL_checkinteger(L, 4);
  luaL_checkstring(L, 5);
  luaL_checkinteger(L, 6);
  lua_settop(L, 6);
  tend_remote_new(L, tend_host_of(L), 1);
  return 1;
}

static tend_actor *check_proxy(lua_State *L, int idx, const char *fn) {
  tend_host *h = tend_host_of(L);
  tend_ref *r = tend_check_ref(L, idx, fn, "ref");
  tend_actor *a = tend_actor_live(h, r->id, r->gen);
  return a && tend_actor_is_remote(a) ? a : NULL;
}

/* core.remote_end(ref, reason): the proxy ends (nothing if it is gone). */
static int l_end(lua_State *L) {
  tend_actor *p = check_proxy(L, 1, "remote_end");
  lua_settop(L, 2);
  if (p) tend_remote_end(L, tend_host_of(L), p, 2);
  return 0;
}

/* core.remote_disconnect(ref, reason): the proxy's node is not connected
 * (its watches and held asks fail with reason); nothing if it is gone. */
static int l_disconnect(lua_State *L) {
  tend_actor *p = check_proxy(L, 1, "remote_disconnect");
  lua_settop(L, 2);
  if (p) tend_remote_disconnect(L, tend_host_of(L), p, 2);
  return 0;
}

/* core.remote_reconnect(ref): the proxy's node is connected again. */
static int l_reconnect(lua_State *L) {
  tend_actor *p = check_proxy(L, 1, "remote_reconnect");
  if (p) tend_remote_reconnect(p);
  return 0;
}

/* core.remote_coords(ref) -> {node, inc, id, gen, path, kind} of a live
 * proxy, or nil. */
static int l_coords(lua_State *L) {
  tend_actor *p = check_proxy(L, 1, "remote_coords");
  if (p == NULL) return 0;
  tend_remote_push_coords(L, tend_host_of(L), p);
  return 1;
}

/* core.node_event(path, detail [, to]): a "node" trace event. */
static int l_event(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_event e = TEND_EVENT_INIT(TEND_EV_NODE, NULL);
  e.path = luaL_checkstring(L, 1);
  e.detail = luaL_checkstring(L, 2);
  e.to = luaL_optstring(L, 3, NULL);
  tend_event_emit(L, h, &e);
  return 0;
}

/* core.node_spawn(factory, opts) -> ref: an actor of the node layer,
 * under /system. */
static int l_spawn(lua_State *L) {
  tend_host *h = tend_host_of(L);
  if (tend_host_system(h) == NULL)
    luaL_error(L, "node: the host is shutting down");
  return tend_spawn_under(L, tend_host_system(h), 0, "node");
}

/* core.node_exe() -> the path of this tend binary (uv_exepath: valgrind
 * reports the program it runs), to start other nodes with. */
static int l_exe(lua_State *L) {
  char buf[4096];
  size_t n = sizeof buf;
  if (uv_exepath(buf, &n) != 0)
    return luaL_error(L, "node: no executable path");
  lua_pushlstring(L, buf, n);
  return 1;
}

/* core.node_clock() -> wall-clock microseconds (a node's incarnation: a
 * restarted node's is larger). */
static int l_clock(lua_State *L) {
  uv_timeval64_t tv;
  if (uv_gettimeofday(&tv) != 0) return luaL_error(L, "node: no clock");
  lua_pushinteger(L, (lua_Integer)tv.tv_sec * 1000000 + tv.tv_usec);
  return 1;
}

void tend_open_remote(lua_State *L) {
  static const luaL_Reg fns[] = {{"node_identity", l_identity},
                                 {"remote_hooks", l_hooks},
                                 {"remote_new", l_new},
                                 {"remote_end", l_end},
                                 {"remote_coords", l_coords},
                                 {"node_event", l_event},
                                 {"remote_disconnect", l_disconnect},
                                 {"remote_reconnect", l_reconnect},
                                 {"node_spawn", l_spawn},
                                 {"node_exe", l_exe},
                                 {"node_clock", l_clock},
                                 {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
}
