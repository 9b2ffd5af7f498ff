/* fiber: a task's coroutines whose waits do not suspend it (fiber.h). */
#include "runtime/core/fiber.h"

#include <lauxlib.h>

#include "runtime/core/preempt.h"
#include "runtime/core/promise.h"

const char tend_fiber_wait_key = 0, tend_fiber_ready_key = 0;

int tend_fiber_wait(lua_State *L, tend_host *h, lua_KFunction k, int *yielded) {
  *yielded = tend_promise_to_fiber(h->current, h->fiber_tag);
  if (!*yielded) return 0;
  lua_pushlightuserdata(L, (void *)&tend_fiber_wait_key);
  return lua_yieldk(L, 1, 0, k);
}

static int resume_k(lua_State *L, int status, lua_KContext k);

/* Resumes the fiber co (stack index 1, its tag at 2) with nargs values
 * already on it. */
static int step(lua_State *L, tend_host *h, lua_State *co, int nargs) {
  lua_State *fiber = h->fiber;
  uint32_t tag = h->fiber_tag;
  h->fiber = co;
  h->fiber_tag = (uint32_t)lua_tointeger(L, 2);
  lua_State *inner = tend_preempt_inner(h, co);
  h->yield = TEND_YIELD_NONE; /* set again only by a wait in the fiber */
  int nres;
  int status = lua_resume(co, L, nargs, &nres);
  tend_preempt_inner(h, inner);
  h->fiber = fiber;
  h->fiber_tag = tag;
  if (status == LUA_YIELD && h->yield == TEND_YIELD_BLOCK) {
    /* a wait only the task can make: the task waits (h->yield kept);
     * resume_k resumes the fiber once it is over */
    lua_pop(co, nres);
    return lua_yieldk(L, 0, 0, resume_k);
  }
  if (status == LUA_OK || status == LUA_YIELD) {
    if (!lua_checkstack(L, nres + 1)) {
      lua_pop(co, nres);
      return luaL_error(L, "fiber: too many results");
    }
    lua_pushboolean(L, 1);
    lua_xmove(co, L, nres);
    return nres + 1;
  }
  lua_pushboolean(L, 0);
  lua_xmove(co, L, 1); /* its error */
  return 2;
}

static int resume_k(lua_State *L, int status, lua_KContext k) {
  (void)status;
  (void)k;
  tend_host *h = tend_host_of(L);
  lua_settop(L, 2);
  return step(L, h, lua_tothread(L, 1), 0);
}

int tend_fiber_resume(lua_State *L, tend_host *h, int nargs) {
  lua_State *co = lua_tothread(L, 1);
  lua_Integer tag = lua_tointeger(L, 2);
  if (tag <= 0 || tag > UINT32_MAX)
    return luaL_error(L, "fiber: a tag from 1 to 2^32 - 1 expected");
  if (h->current == NULL || !lua_isyieldable(L))
    return luaL_error(L, "fiber: resumed outside a task's own code");
  int st = lua_status(co);
  if (co == L || (st != LUA_YIELD && (st != LUA_OK || lua_gettop(co) == 0))) {
    lua_pushboolean(L, 0);
    lua_pushliteral(L, "cannot resume a dead or running fiber");
    return 2;
  }
  if (!lua_checkstack(co, nargs)) {
    lua_pushboolean(L, 0);
    lua_pushliteral(L, "too many arguments to resume");
    return 2;
  }
  lua_xmove(L, co, nargs);
  return step(L, h, co, nargs);
}

int tend_fiber_nested_begin(lua_State *L, tend_host *h) {
  int yieldable = h->current != NULL && lua_isyieldable(L);
  if (!yieldable) h->no_wait++;
  h->yield = TEND_YIELD_NONE; /* set again only by a wait in it */
  return yieldable;
}

int tend_fiber_nested_end(tend_host *h, int yieldable) {
  if (!yieldable) {
    h->no_wait--;
    return 0;
  }
  return h->yield == TEND_YIELD_BLOCK;
}

int tend_fiber_nested_wait(lua_State *L, tend_host *h, lua_KContext ctx,
                           lua_KFunction k) {
  (void)h; /* h->yield stays TEND_YIELD_BLOCK: the actor waits */
  return lua_yieldk(L, 0, ctx, k);
}
