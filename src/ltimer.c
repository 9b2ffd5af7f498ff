/* ltimer: arming, cancelling and firing timers, and the Lua API on them:
 * tend.sleep, ctx:after, ctx:every, tend.after, tend.Timer:cancel. */
#include <lauxlib.h>
#include <math.h>
#include <stdlib.h>

#include "lbind.h"
#include "sched.h"
#include "value.h"

typedef struct timer_handle {
  tend_timer *t; /* a pooled record: valid memory until the host closes */
  uint32_t gen;  /* its generation when armed: stale once it differs */
} timer_handle;

/* ------------------------------------------------------------ core */

static void owner_link(tend_timer *t, tend_actor *a) {
  t->owned = 1;
  t->next = a->timers;
  a->timers = t;
}

static void owner_unlink(tend_host *h, tend_timer *t) {
  if (!t->owned) return;
  t->owned = 0;
  tend_actor *a = tend_slots_get(&h->ids, t->target_id, t->target_gen);
  if (a == NULL) return;
  for (tend_timer **p = &a->timers; *p; p = &(*p)->next)
    if (*p == t) {
      *p = t->next;
      break;
    }
  t->next = NULL;
}

/* Drops the value a timer holds. */
static void drop_value(lua_State *L, tend_host *h, tend_timer *t) {
  if (t->repeating) {
    tend_value_drop(L, h, &t->v.repeat->value);
    free(t->v.repeat);
    t->repeating = 0;
  } else {
    tend_value v = tend_timer_value(t);
    tend_value_drop(L, h, &v);
  }
  t->vtype = TEND_VALUE_NIL;
}

tend_timer *tend_timer_arm(lua_State *L, tend_host *h, tend_timer_kind kind,
                           tend_actor *a, int64_t ns, int64_t interval,
                           int idx) {
  tend_timer *t = tend_timer_new(&h->timers);
  if (t == NULL) return NULL;
  t->kind = (uint8_t)kind;
  t->due = tend_clock_now(&h->clock) + ns;
  if (a) {
    t->target_id = a->id;
    t->target_gen = a->gen;
    t->tag = a->wait_seq;
  }
  tend_value v = {TEND_VALUE_NIL, {0}};
  if (interval > 0) {
    t->v.repeat = malloc(sizeof *t->v.repeat);
    if (t->v.repeat == NULL) goto fail;
    t->repeating = 1;
    t->v.repeat->interval = interval;
    t->v.repeat->value = v;
  }
  if (idx && tend_value_store(L, h, idx, &v) != 0) goto fail;
  if (t->repeating)
    t->v.repeat->value = v;
  else
    tend_timer_set_value(t, v);
  if (tend_timer_heap_push(&h->timers, t) != 0) goto fail;
  if (a && kind != TEND_TIMER_TASK) owner_link(t, a);
  return t;
fail:
  drop_value(L, h, t);
  tend_timer_release(&h->timers, t);
  return NULL;
}

void tend_timer_cancel(lua_State *L, tend_host *h, tend_timer *t) {
  if (t == NULL || t->kind == TEND_TIMER_FREE) return;
  tend_timer_heap_remove(&h->timers, t);
  owner_unlink(h, t);
  drop_value(L, h, t);
  tend_timer_release(&h->timers, t);
}

void tend_timers_cancel_all(lua_State *L, tend_host *h) {
  tend_timer *t;
  while ((t = tend_timer_heap_top(&h->timers)) != NULL)
    tend_timer_cancel(L, h, t);
}

/* Runs t's action. t is out of the heap; it stays valid during the call. */
static void fire(lua_State *L, tend_host *h, tend_timer *t) {
  tend_actor *a = t->target_id
                      ? tend_slots_get(&h->ids, t->target_id, t->target_gen)
                      : NULL;
  if (a && (a->kind != TEND_ENTITY_ACTOR || a->state == TEND_ACTOR_DEAD))
    a = NULL;
  tend_value v;
  switch ((tend_timer_kind)t->kind) {
    case TEND_TIMER_SEND:
      if (a == NULL) break;
      if (t->repeating) { /* keep the timer's copy for the next time */
        tend_value_push(L, h, &t->v.repeat->value);
        tend_actor_send(L, h, a->id, a->gen, -1, 0, 0);
        lua_pop(L, 1);
      } else {
        tend_actor_send_value(L, h, a->id, a->gen, tend_timer_value(t), 0, 0);
        t->vtype = TEND_VALUE_NIL;
      }
      break;
    case TEND_TIMER_WAKE:
      if (a == NULL || a->wait_seq != t->tag) break;
      if (a->wait == TEND_WAIT_SLEEP) {
        tend_sched_wake(h, a, 1);
      } else if (a->wait == TEND_WAIT_ASK) {
        if (a->promise) {
          a->promise->timeout = NULL; /* this timer; freed by our caller */
          tend_promise_free(h, a->promise);
          a->promise = NULL;
        }
        tend_sched_wake(h, a, 0);
      }
      break;
    case TEND_TIMER_TASK:
      if (h->system == NULL || h->shutting_down) break;
      v = tend_timer_value(t);
      t->vtype = TEND_VALUE_NIL;
      tend_value_take(L, h, &v);
      tend_spawn_opts o = {0};
      o.task = 1;
      o.shutdown_ns = tend_clock_ns(5.0);
      tend_actor_spawn(L, h, h->system, -1, &o);
      lua_pop(L, 2); /* ref, function */
      break;
    case TEND_TIMER_KILL:
      if (a == NULL || a->op != TEND_OP_POST_STOP) break;
      tend_actor_push_path(L, h, a);
      tend_host_log(h, TEND_LOG_WARN, lua_tostring(L, -1),
                    "post_stop overran its shutdown time; killed");
      lua_pop(L, 1);
      a->op = TEND_OP_NONE;
      tend_actor_post_stop_done(L, h, a);
      break;
    case TEND_TIMER_BACKOFF_START:
    case TEND_TIMER_BACKOFF_RESET:
    case TEND_TIMER_RESTART:
      if (a) tend_backoff_timer(L, h, a, (tend_timer_kind)t->kind, t->tag);
      break;
    case TEND_TIMER_FREE: break;
  }
}

void tend_timers_fire_due(tend_host *h) {
  lua_State *L = h->L;
  int64_t now = tend_clock_now(&h->clock);
  tend_timer *t;
  while ((t = tend_timer_heap_top(&h->timers)) != NULL && t->due <= now) {
    tend_timer_heap_remove(&h->timers, t);
    owner_unlink(h, t); /* nothing may free t while it fires */
    tend_actor *owner_then =
        t->target_id ? tend_slots_get(&h->ids, t->target_id, t->target_gen)
                     : NULL;
    fire(L, h, t);
    tend_actor *a = t->target_id
                        ? tend_slots_get(&h->ids, t->target_id, t->target_gen)
                        : NULL;
    if (t->repeating && a && a == owner_then && a->state != TEND_ACTOR_DEAD) {
      int64_t interval = t->v.repeat->interval;
      t->due += interval;
      if (t->due <= now) t->due = now + interval; /* fell behind: no burst */
      if (tend_timer_heap_push(&h->timers, t) == 0) {
        owner_link(t, a);
        continue;
      }
    }
    tend_timer_cancel(L, h, t);
  }
}

/* ------------------------------------------------------------ Lua API */

double tend_check_seconds(lua_State *L, int idx, const char *fn,
                          const char *arg, int positive) {
  if (lua_type(L, idx) != LUA_TNUMBER)
    luaL_error(L, "%s: %s: expected a number of seconds, got %s", fn, arg,
               tend_typename(L, idx));
  double s = lua_tonumber(L, idx);
  if (isnan(s) || s < 0 || (positive && s == 0))
    luaL_error(L, "%s: %s: expected a number of seconds %s, got %s", fn, arg,
               positive ? "> 0" : ">= 0", lua_tostring(L, idx));
  return s;
}

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
int tend_l_ctx_after(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_actor *a = tend_ctx_check(L, 1);
  double s = tend_check_seconds(L, 2, "ctx:after", "seconds", 0);
  if (a->state == TEND_ACTOR_DEAD)
    luaL_error(L, "ctx:after: the actor is dead");
  lua_settop(L, 3);
  push_handle(L, arm_or_fail(L, h, TEND_TIMER_SEND, a, s, 0, 3));
  return 1;
}

/* ctx:every(seconds, msg) -> timer: msg to self every seconds. */
int tend_l_ctx_every(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_actor *a = tend_ctx_check(L, 1);
  double s = tend_check_seconds(L, 2, "ctx:every", "seconds", 1);
  if (isinf(s))
    luaL_error(L, "ctx:every: seconds: expected a finite number, got inf");
  if (a->state == TEND_ACTOR_DEAD)
    luaL_error(L, "ctx:every: the actor is dead");
  lua_settop(L, 3);
  push_handle(L, arm_or_fail(L, h, TEND_TIMER_SEND, a, s, s, 3));
  return 1;
}

/* tend.after(seconds, fn) -> timer: fn runs as a task after seconds. */
int tend_l_after(lua_State *L) {
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
  tend_host *h = tend_host_of(L);
  if (h->current && h->current->wake_ok == 2) { /* Ctrl-C at the REPL */
    h->current->wake_ok = 1;
    tend_error_new(L, "Interrupted", "interrupted (Ctrl-C)");
    return lua_error(L);
  }
  return 0;
}

/* tend.sleep(seconds): suspends the running actor; others run. */
int tend_l_sleep(lua_State *L) {
  tend_host *h = tend_host_of(L);
  double s = tend_check_seconds(L, 1, "sleep", "seconds", 0);
  tend_actor *a = tend_sched_check_wait(L, h, "sleep");
  a->wait_seq++;
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

void tend_timer_open(lua_State *L) {
  static const luaL_Reg methods[] = {
      {"cancel", l_timer_cancel}, {"active", l_timer_active}, {NULL, NULL}};
  luaL_newmetatable(L, TEND_TIMER_MT);
  luaL_newlib(L, methods);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, l_timer_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pop(L, 1);
}
