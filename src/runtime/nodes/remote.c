/* remote: proxies of actors on other nodes (see remote.h). */
#include "runtime/nodes/remote.h"

#include <lauxlib.h>
#include <string.h>

#include "runtime/core/lifecycle.h"
#include "runtime/core/promise.h"
#include "runtime/core/watch.h"

static void push_remotes(lua_State *L, tend_host *h) {
  if (h->remotes_ref == LUA_NOREF) {
    lua_newtable(L);
    lua_pushvalue(L, -1);
    h->remotes_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return;
  }
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->remotes_ref);
}

tend_actor *tend_remote_new(lua_State *L, tend_host *h, int node) {
  node = lua_absindex(L, node);
  luaL_checkstack(L, 8, "remote");
  tend_actor *p = tend_actor_new(L, h, NULL);
  int ctx = lua_gettop(L);
  p->state = TEND_ACTOR_RUNNING;
  p->role = TEND_ROLE_REMOTE;
  const char *me = h->node_name ? h->node_name : "";
  if (strcmp(lua_tostring(L, node), me) == 0) /* another scheduler's */
    lua_pushvalue(L, node + 4);
  else
    lua_pushfstring(L, "%s@%s", lua_tostring(L, node + 4),
                    lua_tostring(L, node));
  tend_actor_set_path(L, p, ctx);
  push_remotes(L, h);
  tend_actor_push_ref(L, h, p);
  lua_createtable(L, 6, 0);
  for (int i = 0; i < 6; i++) {
    lua_pushvalue(L, node + i);
    lua_rawseti(L, -2, i + 1);
  }
  lua_rawset(L, -3); /* remotes[ref] = {node, inc, id, gen, path, kind} */
  lua_pop(L, 1);
  tend_actor_push_ref(L, h, p);
  lua_remove(L, ctx);
  return p;
}

void tend_remote_push_coords(lua_State *L, tend_host *h, tend_actor *p) {
  push_remotes(L, h);
  tend_actor_push_ref(L, h, p);
  lua_rawget(L, -2);
  lua_remove(L, -2);
}

void tend_remote_end(lua_State *L, tend_host *h, tend_actor *p, int reason) {
  if (p->state == TEND_ACTOR_DEAD || p->role != TEND_ROLE_REMOTE) return;
  reason = lua_absindex(L, reason);
  push_remotes(L, h);
  tend_actor_push_ref(L, h, p);
  lua_pushnil(L);
  lua_rawset(L, -3);
  lua_pop(L, 1);
  lua_pushvalue(L, reason);
  tend_actor_set_ext(L, p, TEND_EXT(error_ref));
  p->stop_reason = TEND_STOP_FAILURE;
  tend_actor_die(L, h, p);
}

void tend_remote_disconnect(lua_State *L, tend_host *h, tend_actor *p,
                            int reason) {
  if (p->state == TEND_ACTOR_DEAD || p->role != TEND_ROLE_REMOTE) return;
  reason = lua_absindex(L, reason);
  p->flags |= TEND_AF_DISCONNECTED;
  tend_promise_fail_held(L, h, p, TEND_PROMISE_DEATH, reason);
  tend_actor_push_ref(L, h, p);
  tend_watch_target_died(L, h, p, -1, reason);
  lua_pop(L, 1);
}

void tend_remote_reconnect(tend_actor *p) {
  p->flags &= ~(uint32_t)TEND_AF_DISCONNECTED;
}
