/* lreceive: tend.receive, the way a task (the main chunk, the REPL, a
 * tend.after function) reads its mailbox (runtime/inbox.h). An actor gets
 * its messages as calls of its behavior instead. */
#include <math.h>

#include "api/api.h"

static int receive_k(lua_State *L, int status, lua_KContext k);

/* The next message and its sender, or nothing once the deadline (stack
 * index 2: host time in ns, -1 for none) has passed; waits in between. */
static int next(lua_State *L, tend_host *h, tend_actor *a) {
  if (tend_actor_fiber_ready(a)) { /* a fiber's outcome (lfiber.c) */
    lua_pushlightuserdata(L, (void *)tend_fiber_key(1));
    lua_pushnil(L);
    return 2;
  }
  if (tend_inbox_take(L, h, a)) return 2; /* msg, sender */
  int64_t deadline = (int64_t)lua_tointeger(L, 2);
  int64_t left = deadline < 0 ? -1 : deadline - tend_host_now(h);
  if (deadline >= 0 && left <= 0) return 0; /* timed out */
  tend_sched_check_wait(L, h, "tend.receive");
  tend_promise_new(L, h, a, left, "tend.receive"); /* the timeout */
  return tend_sched_wait(L, h, TEND_WAIT_RECEIVE, receive_k);
}

static int receive_k(lua_State *L, int status, lua_KContext k) {
  (void)status;
  (void)k;
  tend_host *h = tend_host_of(L);
  tend_sched_woken(L, h); /* raises if interrupted (Ctrl-C) */
  lua_settop(L, 2);
  return next(L, h, tend_host_current(h));
}

/* tend.receive([timeout]) -> msg, sender; nothing after timeout seconds
 * (default: wait as long as it takes). */
static int l_receive(lua_State *L) {
  tend_host *h = tend_host_of(L);
  double timeout = INFINITY;
  if (!lua_isnoneornil(L, 1))
    timeout = tend_check_seconds(L, 1, "tend.receive", "timeout", 0);
  tend_actor *a = tend_host_current(h);
  if (a == NULL)
    luaL_error(L,
               "tend.receive: no actor runs here; only a task (the main "
               "chunk, the REPL, a tend.after function) receives this way");
  if (!tend_actor_is_task(a)) {
    tend_actor_push_path(L, h, a);
    luaL_error(L,
               "tend.receive: %s is an actor: its messages come to its "
               "behavior; only a task (the main chunk, the REPL, a "
               "tend.after function) receives with tend.receive",
               lua_tostring(L, -1));
  }
  if (tend_sched_in_fiber(h, L))
    luaL_error(L,
               "tend.receive: called in a function of a stream's map_async: "
               "the stage's task reads its mailbox itself; ask or sleep "
               "there instead");
  lua_settop(L, 1);
  lua_pushinteger(L, isinf(timeout) ? -1
                                    : (lua_Integer)(tend_host_now(h) +
                                                    tend_clock_ns(timeout)));
  return next(L, h, a);
}

void tend_open_receive(lua_State *L) {
  static const luaL_Reg fns[] = {{"receive", l_receive}, {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
}
