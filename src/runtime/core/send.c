/* send: delivery. A user message goes to a mailbox (or to a promise, or to
 * dead letters), through the send filter and the mailbox bound; a system
 * message is posted. The SEND timers (ctx:after, ctx:every) deliver here. */
#include "runtime/core/send.h"

#include <lauxlib.h>

#include "runtime/core/copy.h"
#include "runtime/core/error.h"
#include "runtime/core/event.h"
#include "runtime/core/promise.h"
#include "runtime/core/ref.h"
#include "runtime/core/runq.h"
#include "runtime/core/failure.h"
#include "runtime/core/value.h"

void tend_actor_post(tend_host *h, tend_actor *a, tend_msg_kind kind,
                     const tend_actor *about) {
  if (a->role == TEND_ROLE_REMOTE) return; /* a proxy runs nothing */
  tend_msg *m = tend_msg_alloc(&h->msgs);
  if (m == NULL) return; /* out of memory: the signal is lost */
  m->kind = kind;
  m->sender_id = about ? about->id : 0;
  m->sender_gen = about ? about->gen : 0;
  m->value.type = TEND_VALUE_NIL;
  tend_queue_push(&a->mbox.sys, m);
  tend_runq_push(h, a);
}

void tend_actor_push_killed(lua_State *L, tend_host *h, tend_actor *a) {
  tend_actor_push_path(L, h, a);
  lua_pushfstring(L, "%s was killed", lua_tostring(L, -1));
  tend_error_new(L, TEND_ERR_NAME(KILLED), lua_tostring(L, -1));
  lua_replace(L, -3);
  lua_pop(L, 1);
}

/* Queues a marker message of kind (Kill, PoisonPill) past the bound. */
static void send_marker(tend_host *h, tend_actor *a, tend_msg_kind kind) {
  tend_msg *m = tend_msg_alloc(&h->msgs);
  if (m == NULL) return; /* out of memory: the marker is lost */
  m->kind = kind;
  m->sender_id = m->sender_gen = 0;
  m->value.type = TEND_VALUE_NIL;
  tend_queue_push(&a->mbox.user, m);
  a->mbox.n_user++;
  if (tend_actor_takes_mail(a)) tend_runq_push(h, a);
}

void tend_actor_send_kill(tend_host *h, tend_actor *a) {
  if (a->flags & TEND_AF_SCHED) /* its actor is on another scheduler */
    h->sched_control(h, a, TEND_MSG_KILL);
  else
    send_marker(h, a, TEND_MSG_KILL);
}

void tend_actor_send_poison(tend_host *h, tend_actor *a) {
  if (a->flags & TEND_AF_SCHED)
    h->sched_control(h, a, TEND_MSG_POISON);
  else
    send_marker(h, a, TEND_MSG_POISON);
}

void tend_actor_dead_letter(lua_State *L, tend_host *h, tend_actor *to,
                            tend_value *v) {
  tend_letter l = {.to = to, .why = "not delivered"};
  tend_actor_dead_letter_at(L, h, &l, v);
}

void tend_actor_dead_letter_msg(lua_State *L, tend_host *h, tend_actor *to,
                                int msg, uint32_t sid, uint32_t sgen,
                                const char *why) {
  tend_letter l = {.to = to,
                   .msg = lua_absindex(L, msg),
                   .from_id = sid,
                   .from_gen = sgen,
                   .why = why};
  tend_actor_dead_letter_at(L, h, &l, NULL);
}

void tend_actor_dead_letter_at(lua_State *L, tend_host *h, const tend_letter *l,
                               tend_value *v) {
  tend_actor *to = l->to;
  h->stats.dead_letters++;
  if (tend_deadletter_on(h)) {
    tend_letter shown = *l;
    if (v && !l->msg) { /* the message, to show it */
      tend_value_push(L, h, v);
      shown.msg = lua_gettop(L);
    }
    tend_deadletter_log(L, h, &shown);
    if (v && !l->msg) lua_pop(L, 1);
  }
  if (v) tend_value_drop(L, h, v);
  if (tend_event_on(h)) {
    tend_event e = TEND_EVENT_INIT(TEND_EV_DEAD_LETTER, to);
    if (to == NULL) e.path = "/deadLetters";
    tend_event_emit(L, h, &e);
  }
}

/* a's mailbox is full: makes room by its overflow rule. Returns 1 when the
 * new message may go in, 0 when it was taken (dead letter or failure). */
static int overflow(lua_State *L, tend_host *h, tend_actor *a, tend_value *v,
                    tend_overflow rule, const tend_letter *l) {
  switch (rule) {
    case TEND_OVERFLOW_DROP_NEW:
      tend_actor_dead_letter_at(L, h, l, v);
      return 0;
    case TEND_OVERFLOW_DROP_OLD: {
      tend_msg *old = tend_queue_pop(&a->mbox.user);
      a->mbox.n_user--;
      tend_promise_dequeue(h, a, old);
      tend_letter o = {.to = a,
                       .from_id = old->sender_id,
                       .from_gen = old->sender_gen,
                       .why = "mailbox full: the oldest message dropped"};
      tend_actor_dead_letter_at(L, h, &o, &old->value);
      tend_msg_release(&h->msgs, old);
      return 1;
    }
    case TEND_OVERFLOW_FAIL: /* the first overflow fails it; while that
                                failure waits for a decision, the others
                                are dead letters only (Akka) */
      tend_actor_dead_letter_at(L, h, l, v);
      if (a->state < TEND_ACTOR_STOPPING && a->failure == TEND_FAILURE_NONE) {
        lua_pushfstring(L, "mailbox full (capacity %d)", (int)a->capacity);
        tend_error_new(L, TEND_ERR_NAME(MAILBOX_OVERFLOW), lua_tostring(L, -1));
        lua_remove(L, -2);
        tend_actor_fail(L, h, a);
      }
      return 0;
  }
  return 0;
}

/* v reached no actor: a dead letter to `to` (or the ref at stack index
 * ref), from (sid, sgen), for the reason why. */
static void undelivered(lua_State *L, tend_host *h, tend_actor *to, int ref,
                        tend_value *v, uint32_t sid, uint32_t sgen,
                        const char *why) {
  tend_letter l = {
      .to = to, .to_ref = ref, .from_id = sid, .from_gen = sgen, .why = why};
  tend_actor_dead_letter_at(L, h, &l, v);
}

/* Delivers v to (id, gen) from (sender_id, sender_gen); ref: stack index
 * of the ref it was sent to (names a dead target in the log), or 0. */
static void deliver(lua_State *L, tend_host *h, uint32_t id, uint32_t gen,
                    tend_value v, uint32_t sender_id, uint32_t sender_gen,
                    int ref) {
  tend_actor *a = tend_slots_get(&h->ids, id, gen);
  if (a && a->kind == TEND_ENTITY_PROMISE) { /* a reply */
    if (h->send_filter &&
        h->send_filter(L, h, id, gen, &v, sender_id, sender_gen))
      return; /* dropped or held back by tend.chaos */
    if (!tend_promise_resolve(L, h, (tend_promise *)(void *)a, v))
      undelivered(L, h, ((tend_promise *)(void *)a)->asker, 0, &v, sender_id,
                  sender_gen, "its ask is over");
    return;
  }
  if (a == NULL || a->state == TEND_ACTOR_DEAD) {
    tend_letter l = {.to_ref = ref,
                     .to_name = "a dead actor or an ask that is over",
                     .from_id = sender_id,
                     .from_gen = sender_gen,
                     .why = "its recipient is gone"};
    tend_actor_dead_letter_at(L, h, &l, &v);
    return;
  }
  if (a->role == TEND_ROLE_GUARDIAN) {
    undelivered(L, h, a, 0, &v, sender_id, sender_gen,
                "a guardian takes no messages");
    return;
  }
  if (a->role == TEND_ROLE_REMOTE) { /* a proxy: it leaves for its node */
    if (a->flags & TEND_AF_SCHED)    /* or its scheduler */
      h->sched_send(L, h, a, &v, sender_id, sender_gen);
    else
      h->remote_send(L, h, a, &v, sender_id, sender_gen);
    return;
  }
  if (h->send_filter &&
      h->send_filter(L, h, a->id, a->gen, &v, sender_id, sender_gen))
    return; /* dropped or held back by tend.chaos */
  uint32_t capacity = a->capacity;
  tend_overflow rule = (tend_overflow)a->overflow;
  if (a->ext && a->ext->hold) { /* waiting for a backoff restart */
    capacity = a->ext->hold;
    rule = TEND_OVERFLOW_DROP_OLD;
  }
  if (capacity && a->mbox.n_user >= capacity) {
    tend_letter l = {.to = a,
                     .from_id = sender_id,
                     .from_gen = sender_gen,
                     .why = "mailbox full"};
    if (!overflow(L, h, a, &v, rule, &l)) return;
  }
  tend_msg *m = tend_msg_alloc(&h->msgs);
  if (m == NULL) {
    undelivered(L, h, a, 0, &v, sender_id, sender_gen, "out of memory");
    return;
  }
  m->kind = TEND_MSG_USER;
  m->sender_id = sender_id;
  m->sender_gen = sender_gen;
  tend_promise_enqueue(h, a, m); /* a request: held by a (promise.h) */
  m->value = v;
  tend_queue_push(&a->mbox.user, m);
  a->mbox.n_user++;
  if (tend_actor_takes_mail(a)) tend_runq_push(h, a);
  tend_promise_mail(L, h, a); /* a task waiting in tend.receive */
}

void tend_actor_send_value(lua_State *L, tend_host *h, uint32_t id,
                           uint32_t gen, tend_value v, uint32_t sender_id,
                           uint32_t sender_gen) {
  deliver(L, h, id, gen, v, sender_id, sender_gen, 0);
}

void tend_actor_send(lua_State *L, tend_host *h, uint32_t id, uint32_t gen,
                     int idx, uint32_t sender_id, uint32_t sender_gen) {
  tend_actor_send_in(L, h, id, gen, idx, sender_id, sender_gen, 0);
}

/* Stores the message at idx into v (copied first under --copy-messages);
 * raises when the value store is full. */
static void store_msg(lua_State *L, tend_host *h, int idx, int store,
                      tend_value *v) {
  int copied = h->copy_messages && tend_copy_needed(L, idx);
  if (copied) { /* --copy-messages: the copy is made at the send */
    lua_pushvalue(L, idx);
    tend_copy_in_place(L, h, -1, "");
    idx = lua_gettop(L);
  }
  int full = tend_value_store_in(L, h, idx, v, store) != 0;
  if (copied) lua_pop(L, 1);
  if (full) luaL_error(L, "out of message slots");
}

void tend_actor_send_in(lua_State *L, tend_host *h, uint32_t id, uint32_t gen,
                        int idx, uint32_t sender_id, uint32_t sender_gen,
                        int store) {
  tend_value v;
  store_msg(L, h, idx, store, &v);
  tend_actor_send_value(L, h, id, gen, v, sender_id, sender_gen);
}

void tend_actor_send_ref(lua_State *L, tend_host *h, const tend_ref *r, int ref,
                         int idx, uint32_t sender_id, uint32_t sender_gen,
                         int store) {
  tend_value v;
  store_msg(L, h, idx, store, &v);
  deliver(L, h, r->id, r->gen, v, sender_id, sender_gen, ref);
}

/* ctx:after / ctx:every: the message to the target. */
static void on_send(lua_State *L, tend_host *h, tend_timer *t, tend_actor *a) {
  if (a == NULL) return;
  if (t->repeating) { /* keep the timer's copy for the next time */
    tend_value_push(L, h, &t->v.repeat->value);
    tend_actor_send(L, h, a->id, a->gen, -1, 0, 0);
    lua_pop(L, 1);
  } else {
    tend_actor_send_value(L, h, a->id, a->gen, tend_timer_value(t), 0, 0);
    t->vtype = TEND_VALUE_NIL;
  }
}

const tend_driver tend_send_driver = {
    .name = "send",
    .timers = (const tend_driver_timer[]){{TEND_TIMER_SEND, on_send}, {0}}};
