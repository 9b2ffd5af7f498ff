/* ltimer: timers from Lua: tend.sleep, ctx:sleep, ctx:after, ctx:every,
 * tend.after, and tend.Timer handles (:cancel, :active). */
#include <math.h>

#include "api/api.h"

#define TEND_TIMER_MT "tend.Timer"

typedef struct timer_handle {
  tend_timer *t; /* a pooled record: valid memory until the host closes */
  uint32_t gen;  /* its generation when armed: stale once it differs */
} timer_handle;

static void push_handle(lua_State *L, tend_timer *t) {
  timer_handle *th = lua_newuserdatauv(L, sizeof *th, 0);
  th->t = t;
  th->gen = t->gen;
  luaL_setmetatable(L, TEND_TIMER_MT);
}

static tend_timer *arm_or_fail(lua_State *L, tend_host *h, tend_timer_kind kind,
                               tend_actor *a, double s, double every, int idx) {
  int64_t period = every > 0 ? tend_clock_ns(every) : 0;
  if (every > 0 && period == 0) period = 1; /* a sub-ns period */
  tend_timer *t = tend_timer_arm(L, h, kind, a, tend_clock_ns(s), period, idx);
  if (t == NULL) luaL_error(L, "out of memory arming a timer");
  return t;
}

/* ctx:after(seconds, msg) -> timer: msg to self after seconds. */
static int l_ctx_after(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_actor *a = tend_check_own_ctx(L, 1, "ctx:after");
  double s = tend_check_seconds(L, 2, "ctx:after", "seconds", 0);
  if (tend_actor_state_of(a) == TEND_ACTOR_DEAD)
    luaL_error(L, "ctx:after: the actor is dead");
  lua_settop(L, 3);
  if (tend_host_copies(h) && tend_copy_needed(L, 3))
    tend_copy_in_place(L, h, 3, "ctx:after: ");
  push_handle(L, arm_or_fail(L, h, TEND_TIMER_SEND, a, s, 0, 3));
  return 1;
}

/* ctx:every(seconds, msg) -> timer: msg to self every seconds. */
static int l_ctx_every(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_actor *a = tend_check_own_ctx(L, 1, "ctx:every");
  double s = tend_check_seconds(L, 2, "ctx:every", "seconds", 1);
  if (isinf(s))
    luaL_error(L, "ctx:every: seconds: expected a finite number, got inf");
  if (tend_actor_state_of(a) == TEND_ACTOR_DEAD)
    luaL_error(L, "ctx:every: the actor is dead");
  lua_settop(L, 3);
  if (tend_host_copies(h) && tend_copy_needed(L, 3))
    tend_copy_in_place(L, h, 3, "ctx:every: ");
  push_handle(L, arm_or_fail(L, h, TEND_TIMER_SEND, a, s, s, 3));
  return 1;
}

/* tend.after(seconds, fn) -> timer: fn runs as a task after seconds. */
static int l_after(lua_State *L) {
  tend_host *h = tend_host_of(L);
  double s = tend_check_seconds(L, 1, "tend.after", "seconds", 0);
  if (!lua_isfunction(L, 2))
    luaL_error(L, "tend.after: fn: expected a function, got %s",
               tend_typename(L, 2));
  lua_settop(L, 2);
  push_handle(L, arm_or_fail(L, h, TEND_TIMER_TASK, NULL, s, 0, 2));
  return 1;
}

static int sleep_k(lua_State *L, int status, lua_KContext k) {
  (void)status;
  (void)k;
  tend_sched_woken(L, tend_host_of(L)); /* raises if interrupted */
  return 0;
}

/* tend.sleep(seconds): suspends the running actor; others run. */
static int l_sleep(lua_State *L) {
  tend_host *h = tend_host_of(L);
  double s = tend_check_seconds(L, 1, "sleep", "seconds", 0);
  tend_actor *a = tend_sched_check_wait(L, h, "sleep");
  if (tend_sched_in_fiber(h, L)) { /* a promise nobody answers: the fiber
                                      waits alone (lfiber.c) */
    tend_promise_new(L, h, a, isinf(s) ? -1 : tend_clock_ns(s), "sleep");
    return tend_sched_wait(L, h, TEND_WAIT_ASK, sleep_k);
  }
  tend_sched_next_wait(a);
  if (!isinf(s)) arm_or_fail(L, h, TEND_TIMER_WAKE, a, s, 0, 0);
  return tend_sched_wait(L, h, TEND_WAIT_SLEEP, sleep_k);
}

/* The timer a handle names, or NULL once it fired or was cancelled. */
static tend_timer *live(const timer_handle *th) {
  return th->t->gen == th->gen && th->t->kind != TEND_TIMER_FREE ? th->t : NULL;
}

/* timer:cancel() -> true if it was pending */
static int l_timer_cancel(lua_State *L) {
  tend_host *h = tend_host_of(L);
  timer_handle *th = luaL_checkudata(L, 1, TEND_TIMER_MT);
  tend_timer *t = live(th);
  if (t) tend_timer_cancel(L, h, t);
  lua_pushboolean(L, t != NULL);
  return 1;
}

/* timer:active() -> true while it will still fire */
static int l_timer_active(lua_State *L) {
  timer_handle *th = luaL_checkudata(L, 1, TEND_TIMER_MT);
  lua_pushboolean(L, live(th) != NULL);
  return 1;
}

static int l_timer_tostring(lua_State *L) {
  timer_handle *th = luaL_checkudata(L, 1, TEND_TIMER_MT);
  tend_timer *t = live(th);
  if (t)
    lua_pushfstring(L, "Timer(due at %f s)", (double)t->due / 1e9);
  else
    lua_pushliteral(L, "Timer(done)");
  return 1;
}

static int l_ctx_sleep(lua_State *L) {
  tend_check_own_ctx(L, 1, "ctx:sleep");
  lua_remove(L, 1);
  return l_sleep(L);
}

void tend_open_timer(lua_State *L) {
  static const luaL_Reg fns[] = {
      {"sleep", l_sleep}, {"after", l_after}, {NULL, NULL}};
  static const luaL_Reg ctx[] = {{"after", l_ctx_after},
                                 {"every", l_ctx_every},
                                 {"sleep", l_ctx_sleep},
                                 {NULL, NULL}};
  static const luaL_Reg methods[] = {
      {"cancel", l_timer_cancel}, {"active", l_timer_active}, {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
  tend_ctx_add_methods(L, ctx);
  luaL_newmetatable(L, TEND_TIMER_MT);
  luaL_newlib(L, methods);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, l_timer_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pop(L, 1);
}
