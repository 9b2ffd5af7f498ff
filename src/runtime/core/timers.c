/* timers: arming, cancelling and dispatching timers (see timers.h). */
#include "runtime/core/timers.h"

#include <stdlib.h>

#include "runtime/core/value.h"

static void owner_link(tend_timer *t, tend_actor *a) {
  t->owned = 1;
  t->prev = NULL;
  t->next = a->timers;
  if (a->timers) a->timers->prev = t;
  a->timers = t;
}

static void owner_unlink(tend_host *h, tend_timer *t) {
  if (!t->owned) return;
  t->owned = 0;
  if (t->next) t->next->prev = t->prev;
  if (t->prev) {
    t->prev->next = t->next;
  } else { /* the head of its owner's list */
    tend_actor *a = tend_slots_get(&h->ids, t->target_id, t->target_gen);
    if (a) a->timers = t->next;
  }
  t->next = t->prev = NULL;
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

void tend_timers_fire_due(tend_host *h) {
  lua_State *L = h->L;
  int64_t now = tend_clock_now(&h->clock);
  tend_timer *t;
  while ((t = tend_timer_heap_top(&h->timers)) != NULL && t->due <= now) {
    tend_timer_heap_remove(&h->timers, t);
    owner_unlink(h, t); /* nothing may free t while it fires */
    tend_actor *a = tend_actor_live(h, t->target_id, t->target_gen);
    tend_timer_fn fire = h->on_fire[t->kind];
    if (fire) fire(L, h, t, a);
    tend_actor *after = tend_actor_live(h, t->target_id, t->target_gen);
    if (t->repeating && after && after == a) {
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
