/* lfiber: fibers, a task's coroutines whose asks and sleeps do not
 * suspend the task (runtime/core/fiber.h): the plumbing of a stream's
 * map_async (lua/tend/stream_async.lua). */
#include "api/api.h"

/* core.fiber_resume(co, tag, ...) -> true, ... | false, err: as
 * coroutine.resume; when co waits on a promise it yields core.fiber_wait.
 * tag: an integer > 0 naming co, given back by core.fiber_take. */
static int l_fiber_resume(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTHREAD);
  luaL_checkinteger(L, 2);
  return tend_sched_fiber_resume(L, tend_host_of(L), lua_gettop(L) - 2);
}

/* core.fiber_take() -> tag | nil: the tag of the fiber whose wait ended
 * first (tend.receive answered core.fiber_ready); resume it next. */
static int l_fiber_take(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_actor *a = tend_host_current(h);
  uint32_t tag = a ? tend_actor_fiber_take(L, h, a) : 0;
  if (tag == 0) return 0;
  lua_pushinteger(L, (lua_Integer)tag);
  return 1;
}

/* core.fiber_drop(tag): the current task drops its fiber tag (a cancelled
 * stage's): the promises its waits hold end now, their outcomes, ready or
 * to come, are never taken (a late reply is a dead letter). */
static int l_fiber_drop(lua_State *L) {
  tend_host *h = tend_host_of(L);
  lua_Integer tag = luaL_checkinteger(L, 1);
  tend_actor *a = tend_host_current(h);
  if (a && tag > 0 && tag <= UINT32_MAX)
    tend_actor_fiber_drop(L, h, a, (uint32_t)tag);
  return 0;
}

void tend_open_fiber(lua_State *L) {
  static const luaL_Reg fns[] = {{"fiber_resume", l_fiber_resume},
                                 {"fiber_take", l_fiber_take},
                                 {"fiber_drop", l_fiber_drop},
                                 {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
  lua_pushlightuserdata(L, (void *)tend_fiber_key(0));
  lua_setfield(L, -2, "fiber_wait");
  lua_pushlightuserdata(L, (void *)tend_fiber_key(1));
  lua_setfield(L, -2, "fiber_ready");
}
