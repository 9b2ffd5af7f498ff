/* promise: pending asks (see promise.h). */
#include "runtime/core/promise.h"

#include <lauxlib.h>
#include <stdlib.h>

#include "runtime/core/error.h"
#include "runtime/core/runq.h"
#include "runtime/core/timers.h"
#include "runtime/core/value.h"

/* Takes p out of its target's held list. */
static void unhold(tend_host *h, tend_promise *p) {
  tend_actor *t = p->target;
  if (t == NULL) return;
  if (p->held_prev)
    p->held_prev->held_next = p->held_next;
  else if (t->ext)
    t->ext->held = p->held_next;
  if (p->held_next) p->held_next->held_prev = p->held_prev;
  p->target = NULL;
  p->held_prev = p->held_next = NULL;
  p->queued = 0;
  h->held--;
}

static void release(tend_host *h, tend_promise *p) {
  unhold(h, p);
  tend_slots_release(&h->ids, p->id);
  tend_pool_put(&h->promises, p); /* its id is stale: nothing reaches it */
}

tend_promise *tend_promise_new(lua_State *L, tend_host *h, tend_actor *a,
                               int64_t timeout_ns, const char *fn) {
  tend_promise *p = tend_pool_get(&h->promises); /* an ask allocates
                                                    nothing once warm */
  if (p == NULL) luaL_error(L, "%s: out of memory", fn);
  p->kind = TEND_ENTITY_PROMISE;
  p->asker = a;
  p->timeout = NULL;
  p->target = NULL;
  p->held_prev = p->held_next = NULL;
  p->queued = p->via_id = p->via_gen = 0;
  p->fiber = p->done = 0;
  p->value.type = TEND_VALUE_NIL;
  p->fiber_prev = p->fiber_next = NULL;
  p->id = tend_slots_alloc(&h->ids, p, &p->gen);
  if (p->id == 0) {
    tend_pool_put(&h->promises, p);
    luaL_error(L, "%s: too many ids in use", fn);
  }
  a->wait_seq++;
  if (timeout_ns >= 0) {
    p->timeout = tend_timer_arm(L, h, TEND_TIMER_ASK, a, timeout_ns, 0, 0);
    if (p->timeout == NULL) {
      release(h, p);
      luaL_error(L, "%s: out of memory", fn);
    }
  }
  a->promise = p;
  a->wake = TEND_WAKE_TIMEOUT;
  return p;
}

void tend_promise_hold(tend_host *h, tend_promise *p, tend_actor *target) {
  tend_actor_ext *x = tend_actor_ext_get(target);
  if (x == NULL || p->target) return;
  p->target = target;
  p->held_prev = NULL;
  p->held_next = x->held;
  if (x->held) x->held->held_prev = p;
  x->held = p;
  h->held++;
}

/* The held promise whose id is m's sender, or NULL. */
static tend_promise *held_sender(const tend_host *h, const tend_msg *m) {
  tend_promise *p = tend_slots_get(&h->ids, m->sender_id, m->sender_gen);
  return p && p->kind == TEND_ENTITY_PROMISE && p->target ? p : NULL;
}

/* The held p goes to `to`; 0 when to cannot hold it (out of memory: p
 * stays where it was). */
static int move(tend_host *h, tend_promise *p, tend_actor *to) {
  if (p->target == to) return 1;
  if (tend_actor_ext_get(to) == NULL) return 0;
  unhold(h, p);
  tend_promise_hold(h, p, to);
  return 1;
}

void tend_promise_enqueue_held(tend_host *h, tend_actor *a, tend_msg *m) {
  tend_promise *p = held_sender(h, m);
  if (p == NULL) return;
  if (p->target != a) {
    tend_actor *c = h->current;
    if (c && c != a && p->via_id == c->id && p->via_gen == c->gen) {
      move(h, p, c); /* sent on to several: c holds it again (taken) */
      return;
    }
    if (p->queued) return; /* its holder has not taken it: not sent on */
    tend_actor *from = p->target;
    if (!move(h, p, a)) return;
    p->via_id = from->id; /* its holder sent it on: a holds it now */
    p->via_gen = from->gen;
  }
  p->queued++;
  m->held = 1;
}

void tend_promise_dequeue_held(tend_host *h, const tend_actor *a,
                               const tend_msg *m) {
  tend_promise *p = held_sender(h, m);
  if (p && p->target == a && p->queued) p->queued--;
}

static void fiber_outcome(lua_State *L, tend_host *h, tend_promise *p,
                          tend_wake wake, tend_value v);

/* v (owned) becomes a's reply; the one a held is dropped (a fiber's
 * outcome taken and never resumed, a failure's error). */
static void set_reply(lua_State *L, tend_host *h, tend_actor *a, tend_value v) {
  tend_value old = tend_actor_wake_value(a);
  tend_value_drop(L, h, &old);
  tend_actor_set_wake_value(a, v);
}

int tend_promise_resolve(lua_State *L, tend_host *h, tend_promise *p,
                         tend_value v) {
  if (p->fiber) {
    if (p->done) return 0; /* a second reply: its ask is over */
    fiber_outcome(L, h, p, TEND_WAKE_OK, v);
    return 1;
  }
  tend_actor *asker = p->asker;
  if (asker->state == TEND_ACTOR_DEAD || asker->promise != p) return 0;
  tend_promise_cancel(L, h, asker);
  set_reply(L, h, asker, v);
  tend_runq_wake(h, asker, TEND_WAKE_OK);
  return 1;
}

void tend_promise_cancel(lua_State *L, tend_host *h, tend_actor *a) {
  tend_promise *p = a->promise;
  if (p == NULL) return;
  tend_timer_cancel(L, h, p->timeout);
  a->promise = NULL;
  release(h, p);
}

void tend_promise_mail(lua_State *L, tend_host *h, tend_actor *a) {
  if (a->wait != TEND_WAIT_RECEIVE) return;
  tend_promise_cancel(L, h, a);
  tend_runq_wake(h, a, TEND_WAKE_OK);
}

/* Pushes the AskFailed error for an ask to a that ended (why) with the
 * cause at stack index cause. */
static void push_failure(lua_State *L, tend_host *h, tend_actor *a,
                         tend_promise_end why, int cause) {
  tend_actor_push_path(L, h, a);
  if (tend_error_is(L, cause))
    tend_error_describe(L, cause);
  else
    luaL_tolstring(L, cause, NULL); /* a reason string */
  lua_pushfstring(L, "%s %s before replying (%s)", lua_tostring(L, -2),
                  why == TEND_PROMISE_RESTART ? "restarted" : "stopped",
                  lua_tostring(L, -1));
  tend_error_new(L, TEND_ERR_NAME(ASK_FAILED), lua_tostring(L, -1));
  lua_pushvalue(L, cause);
  lua_setfield(L, -2, "cause");
  lua_replace(L, -4);
  lua_pop(L, 2);
}

void tend_promise_fail_held(lua_State *L, tend_host *h, tend_actor *a,
                            tend_promise_end why, int cause) {
  if (a->ext == NULL || a->ext->held == NULL) return;
  int top = lua_gettop(L);
  if (cause == 0) {
    tend_actor_push_ext(L, a, TEND_EXT(cause_ref));
    cause = lua_gettop(L);
  } else {
    cause = lua_absindex(L, cause);
  }
  tend_promise *next;
  for (tend_promise *p = a->ext->held; p; p = next) {
    next = p->held_next;
    if (why == TEND_PROMISE_RESTART && p->queued) continue; /* answered */
    tend_actor *asker = p->asker;
    if (p->fiber) {
      tend_value v;
      push_failure(L, h, a, why, cause);
      int stored = tend_value_store(L, h, -1, &v) == 0;
      lua_pop(L, 1);
      if (stored)
        fiber_outcome(L, h, p, TEND_WAKE_FAILED, v);
      else
        unhold(h, p); /* out of memory: it times out instead */
      continue;
    }
    if (asker->state == TEND_ACTOR_DEAD || asker->promise != p) {
      unhold(h, p);
      continue;
    }
    tend_value v;
    push_failure(L, h, a, why, cause);
    int stored = tend_value_store(L, h, -1, &v) == 0;
    lua_pop(L, 1);
    if (!stored) { /* out of memory: it times out instead */
      unhold(h, p);
      continue;
    }
    tend_promise_cancel(L, h, asker);
    set_reply(L, h, asker, v);
    tend_runq_wake(h, asker, TEND_WAKE_FAILED);
  }
  lua_settop(L, top);
}

/* No reply in time: the asker wakes without one. */
static void on_timeout(lua_State *L, tend_host *h, tend_timer *t,
                       tend_actor *a) {
  if (a && a->ext && a->ext->fibers) { /* a fiber's? */
    for (tend_promise *p = a->ext->fibers; p; p = p->fiber_next)
      if (p->timeout == t) {
        p->timeout = NULL; /* t: the timer loop frees it */
        tend_value none = {.type = TEND_VALUE_NIL};
        fiber_outcome(L, h, p, TEND_WAKE_TIMEOUT, none);
        return;
      }
  }
  if (a == NULL || a->wait_seq != t->tag ||
      (a->wait != TEND_WAIT_ASK && a->wait != TEND_WAIT_RECEIVE))
    return;
  if (a->promise) a->promise->timeout = NULL; /* t: the timer loop frees it */
  tend_promise_cancel(L, h, a);
  tend_runq_wake(h, a, TEND_WAKE_TIMEOUT);
}

/* ---- fibers (promise.h) */

int tend_promise_to_fiber(tend_actor *a, uint32_t tag) {
  tend_promise *p = a->promise;
  tend_actor_ext *x = tend_actor_ext_get(a);
  if (p == NULL || x == NULL) return 0;
  a->promise = NULL;
  p->fiber = 1;
  p->fiber_tag = tag;
  p->fiber_prev = NULL;
  p->fiber_next = x->fibers;
  if (x->fibers) x->fibers->fiber_prev = p;
  x->fibers = p;
  return 1;
}

/* The fiber's promise p has its outcome: from a's fibers to its ready
 * list; a wakes if it waits in tend.receive. */
static void fiber_outcome(lua_State *L, tend_host *h, tend_promise *p,
                          tend_wake wake, tend_value v) {
  tend_actor *a = p->asker;
  tend_actor_ext *x = a->ext;
  tend_timer_cancel(L, h, p->timeout);
  p->timeout = NULL;
  unhold(h, p);
  if (p->fiber_prev)
    p->fiber_prev->fiber_next = p->fiber_next;
  else
    x->fibers = p->fiber_next;
  if (p->fiber_next) p->fiber_next->fiber_prev = p->fiber_prev;
  p->done = 1;
  p->wake = (uint8_t)wake;
  p->value = v;
  p->fiber_prev = NULL;
  p->fiber_next = NULL;
  if (x->fibers_ready_tail)
    x->fibers_ready_tail->fiber_next = p;
  else
    x->fibers_ready = p;
  x->fibers_ready_tail = p;
  tend_promise_mail(L, h, a);
}

uint32_t tend_promise_fiber_take(lua_State *L, tend_host *h, tend_actor *a) {
  tend_actor_ext *x = a->ext;
  tend_promise *p = x ? x->fibers_ready : NULL;
  if (p == NULL) return 0;
  x->fibers_ready = p->fiber_next;
  if (x->fibers_ready == NULL) x->fibers_ready_tail = NULL;
  uint32_t tag = p->fiber_tag;
  set_reply(L, h, a, p->value);
  a->wake = p->wake;
  release(h, p);
  return tag;
}

/* Ends a's fibers' promises of fiber tag (0: every tag): a waiting one's
 * timer is cancelled, a ready outcome is dropped. */
static void end_fibers(lua_State *L, tend_host *h, tend_actor *a,
                       uint32_t tag) {
  tend_actor_ext *x = a->ext;
  if (x == NULL) return;
  tend_promise *p, *next, *prev = NULL;
  for (p = x->fibers; p; p = next) { /* waiting (doubly linked) */
    next = p->fiber_next;
    if (tag && p->fiber_tag != tag) continue;
    if (p->fiber_prev)
      p->fiber_prev->fiber_next = next;
    else
      x->fibers = next;
    if (next) next->fiber_prev = p->fiber_prev;
    tend_timer_cancel(L, h, p->timeout);
    release(h, p);
  }
  for (p = x->fibers_ready; p; p = next) { /* ready (singly linked) */
    next = p->fiber_next;
    if (tag && p->fiber_tag != tag) {
      prev = p;
      continue;
    }
    if (prev)
      prev->fiber_next = next;
    else
      x->fibers_ready = next;
    if (x->fibers_ready_tail == p) x->fibers_ready_tail = prev;
    tend_value_drop(L, h, &p->value);
    release(h, p);
  }
}

void tend_promise_fiber_end(lua_State *L, tend_host *h, tend_actor *a) {
  end_fibers(L, h, a, 0);
}

void tend_promise_fiber_drop(lua_State *L, tend_host *h, tend_actor *a,
                             uint32_t tag) {
  end_fibers(L, h, a, tag);
}

const tend_driver tend_promise_driver = {
    .name = "promise",
    .timers = (const tend_driver_timer[]){{TEND_TIMER_ASK, on_timeout}, {0}}};
