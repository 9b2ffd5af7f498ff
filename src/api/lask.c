/* lask: tend.ask / ctx:ask. The asker sends with a promise as the sender
 * (runtime/promise.h), then waits; the first message to the promise is
 * the reply. As gen_server:call, an ask fails at once when the target is
 * dead (NoActor) or ends before replying (AskFailed, from promise.c). */
#include <math.h>

#include "api/api.h"

#define DEFAULT_ASK_TIMEOUT 5.0

/* Continues an ask once woken: stack [1] ref [2] msg [3] timeout. */
static int ask_k(lua_State *L, int status, lua_KContext k) {
  (void)status;
  (void)k;
  tend_host *h = tend_host_of(L);
  int wake = tend_sched_woken(L, h); /* raises if interrupted */
  if (wake == TEND_WAKE_OK) {
    tend_sched_take_reply(L, h);
    return 1;
  }
  if (wake == TEND_WAKE_FAILED) { /* the target ended before replying */
    tend_sched_take_reply(L, h);
    luaL_where(L, 1);
    lua_setfield(L, -2, "where");
    return lua_error(L);
  }
  lua_getglobal(L, "tostring");
  lua_pushvalue(L, 1);
  lua_call(L, 1, 1);
  lua_pushfstring(L, "no reply from %s within %s s", lua_tostring(L, -1),
                  lua_tostring(L, 3));
  tend_error_new(L, TEND_ERR_NAME(TIMEOUT), lua_tostring(L, -1));
  luaL_where(L, 1);
  lua_setfield(L, -2, "where");
  return lua_error(L);
}

/* tend.ask(ref_or_name, msg [, timeout]) -> reply; raises Timeout,
 * NoActor or AskFailed. */
static int l_ask(lua_State *L) {
  tend_host *h = tend_host_of(L);
  if (lua_type(L, 1) == LUA_TSTRING) { /* a name or a path (lnames.c) */
    tend_actor *t = tend_check_target(L, 1, "ask", "name", 0);
    if (t == NULL) { /* as gen_server:call(Name, ...): noproc */
      lua_pushfstring(L,
                      lua_tostring(L, 1)[0] == '/'
                          ? "no actor at %s (no live actor at that path)"
                          : "no actor registered as '%s'",
                      lua_tostring(L, 1));
      tend_error_new(L, TEND_ERR_NAME(NO_ACTOR), lua_tostring(L, -1));
      luaL_where(L, 1);
      lua_setfield(L, -2, "where");
      return lua_error(L);
    }
    tend_actor_push_ref(L, h, t);
    lua_replace(L, 1);
  }
  tend_ref *r = tend_check_ref(L, 1, "ask", "ref");
  double timeout = DEFAULT_ASK_TIMEOUT;
  if (!lua_isnoneornil(L, 3))
    timeout = tend_check_seconds(L, 3, "ask", "timeout", 1);
  lua_settop(L, 3);
  lua_pushnumber(L, timeout);
  lua_replace(L, 3);
  tend_actor *a = tend_sched_check_wait(L, h, "ask");
  int e;
  tend_actor *target = tend_host_entity(h, r->id, r->gen, &e);
  if (!e || (target && (tend_actor_state_of(target) == TEND_ACTOR_DEAD ||
                        tend_actor_is_guardian(target)))) {
    lua_getglobal(L, "tostring");
    lua_pushvalue(L, 1);
    lua_call(L, 1, 1);
    lua_pushfstring(L, "no actor at %s (%s)", lua_tostring(L, -1),
                    e ? "a guardian takes no messages" : "it is dead");
    tend_error_new(L, TEND_ERR_NAME(NO_ACTOR), lua_tostring(L, -1));
    luaL_where(L, 1);
    lua_setfield(L, -2, "where");
    return lua_error(L);
  }
  if (target && tend_actor_is_disconnected(target)) {
    /* a proxy whose node is not connected now (runtime/remote.h): as
     * gen_server:call to a pid of a disconnected node */
    lua_getglobal(L, "tostring");
    lua_pushvalue(L, 1);
    lua_call(L, 1, 1);
    lua_pushfstring(L, "%s is on a node that is not connected (noconnection)",
                    lua_tostring(L, -1));
    tend_error_new(L, TEND_ERR_NAME(ASK_FAILED), lua_tostring(L, -1));
    lua_pushliteral(L, "noconnection");
    lua_setfield(L, -2, "cause");
    luaL_where(L, 1);
    lua_setfield(L, -2, "where");
    return lua_error(L);
  }
  if (target == a) { /* it would wait for its own reply: OTP's calling_self */
    tend_error_new(L, TEND_ERR_NAME(ASK_FAILED),
                   "an actor cannot ask itself: it would wait for its own "
                   "reply (OTP: calling_self)");
    luaL_where(L, 1);
    lua_setfield(L, -2, "where");
    return lua_error(L);
  }
  tend_promise *p = tend_promise_new(
      L, h, a, isinf(timeout) ? -1 : tend_clock_ns(timeout), "ask");
  if (target) tend_promise_hold(h, p, target);
  tend_actor_send(L, h, r->id, r->gen, 2, tend_promise_id(p),
                  tend_promise_gen(p));
  /* answered at once when the target was itself a promise */
  return tend_sched_wait(
      L, h, tend_actor_has_promise(a) ? TEND_WAIT_ASK : TEND_WAIT_WOKEN, ask_k);
}

static int l_ctx_ask(lua_State *L) {
  tend_check_own_ctx(L, 1, "ctx:ask");
  lua_remove(L, 1);
  return l_ask(L);
}

void tend_open_ask(lua_State *L) {
  static const luaL_Reg fns[] = {{"ask", l_ask}, {NULL, NULL}};
  static const luaL_Reg ctx[] = {{"ask", l_ctx_ask}, {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
  tend_ctx_add_methods(L, ctx);
}
