/* lbackoff_query: asking a backoff supervisor from outside (Akka's
 * GetCurrentChild, GetRestartCount, Reset): tend.backoff.child,
 * tend.backoff.restart_count, tend.backoff.reset. They answer at once
 * (one Lua state: no ask is needed). A dead supervisor gives nil and a
 * message; anything else that is not a backoff supervisor raises. */
#include "api/api.h"

/* The backoff supervisor at idx, or NULL (nil and a message pushed) when
 * it is dead. */
static tend_actor *check_sup(lua_State *L, int idx, const char *fn) {
  tend_actor *a = tend_check_target(L, idx, fn, "sup", 0);
  if (a == NULL) {
    lua_pushfstring(L, "%s: %s is not alive", fn, luaL_tolstring(L, idx, NULL));
    lua_pushnil(L);
    lua_insert(L, -2); /* nil, message */
    return NULL;
  }
  if (tend_backoff_of(a) == NULL)
    luaL_error(L, "%s: sup: expected a backoff supervisor, got %s", fn,
               luaL_tolstring(L, idx, NULL));
  return a;
}

/* backoff_child(sup) -> the child's ref, or nil while it is stopped */
static int l_child(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_actor *a = check_sup(L, 1, "tend.backoff.child");
  if (a == NULL) return 2;
  tend_actor *c = tend_backoff_current_child(h, tend_backoff_of(a));
  if (c)
    tend_actor_push_ref(L, h, c);
  else
    lua_pushnil(L);
  return 1;
}

/* backoff_restart_count(sup) -> restarts since the last reset */
static int l_restart_count(lua_State *L) {
  tend_actor *a = check_sup(L, 1, "tend.backoff.restart_count");
  if (a == NULL) return 2;
  lua_pushinteger(L, tend_backoff_restarts(tend_backoff_of(a)));
  return 1;
}

/* backoff_reset(sup) -> true: the delays start over from the first */
static int l_reset(lua_State *L) {
  tend_actor *a = check_sup(L, 1, "tend.backoff.reset");
  if (a == NULL) return 2;
  tend_backoff_reset_sup(L, tend_host_of(L), a);
  lua_pushboolean(L, 1);
  return 1;
}

void tend_open_backoff_query(lua_State *L) {
  static const luaL_Reg fns[] = {{"backoff_child", l_child},
                                 {"backoff_restart_count", l_restart_count},
                                 {"backoff_reset", l_reset},
                                 {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
}
