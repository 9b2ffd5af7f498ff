/* face: the small calls of runtime/tend.h that read or set a field of a
 * private struct for the layers above. Each is one line; with -flto they
 * inline where they are called. This file also includes every private
 * header the face repeats a declaration of, so the compiler checks that
 * the face and the private headers agree. */
#include "runtime/tend.h"

#include "runtime/core/actor.h"
#include "runtime/core/error.h"
#include "runtime/core/event.h"
#include "runtime/core/host.h"
#include "runtime/core/inbox.h"
#include "runtime/core/lifecycle.h"
#include "runtime/core/promise.h"
#include "runtime/core/ref.h"
#include "runtime/core/sched.h"
#include "runtime/core/send.h"
#include "runtime/core/timers.h"
#include "runtime/core/value.h"
#include "runtime/nodes/codec.h"
#include "runtime/supervision/backoff_sup.h"
#include "runtime/supervision/names.h"
#include "runtime/supervision/rtimeout.h"
#include "runtime/supervision/stash.h"

/* ---- host */
lua_State *tend_host_state(const tend_host *h) {
  return h->L;
}
uv_loop_t *tend_host_loop(tend_host *h) {
  return &h->loop;
}
uint64_t tend_host_seed(const tend_host *h) {
  return h->seed;
}
tend_front *tend_host_front(tend_host *h) {
  return &h->front;
}
int tend_host_stopping(const tend_host *h) {
  return h->shutdown != TEND_SHUTDOWN_NONE;
}
tend_actor *tend_host_user(const tend_host *h) {
  return h->user;
}
tend_actor *tend_host_main(const tend_host *h) {
  return h->main;
}
tend_actor *tend_host_current(const tend_host *h) {
  return h->current;
}
void tend_host_set_interrupt(tend_host *h, tend_actor *a) {
  h->interrupt = a;
}

/* ---- actors */
uint32_t tend_actor_id(const tend_actor *a) {
  return a->id;
}
uint32_t tend_actor_gen(const tend_actor *a) {
  return a->gen;
}

/* ---- waits */
void tend_sched_take_reply(lua_State *L, tend_host *h) {
  tend_value_take(L, h, &h->current->wake_value);
}

/* ---- promises */
tend_promise *tend_promise_live(tend_host *h, uint32_t id, uint32_t gen) {
  tend_promise *p = tend_slots_get(&h->ids, id, gen);
  return p && p->kind == TEND_ENTITY_PROMISE ? p : NULL;
}
uint32_t tend_promise_id(const tend_promise *p) {
  return p->id;
}
uint32_t tend_promise_gen(const tend_promise *p) {
  return p->gen;
}

/* ---- trace */
void tend_trace_set_internal(tend_host *h, int on) {
  h->trace_internal = on;
}

void tend_host_set_main(tend_host *h, tend_actor *a) {
  h->main = a;
}
int tend_host_virtual(const tend_host *h) {
  return h->clock.is_virtual;
}
int64_t tend_host_now(tend_host *h) {
  return tend_clock_now(&h->clock);
}

void tend_host_set_metatable(tend_host *h, tend_metatable mt, int ref) {
  int *slot[] = {&h->ctx_mt_ref, &h->ref_mt_ref, &h->error_mt_ref};
  *slot[mt] = ref;
}

/* ---- what an actor is */
int tend_actor_is_task(const tend_actor *a) {
  return (a->flags & TEND_AF_TASK) != 0;
}
int tend_actor_is_guardian(const tend_actor *a) {
  return (a->flags & TEND_AF_GUARDIAN) != 0;
}
int tend_actor_is_backoff(const tend_actor *a) {
  return (a->flags & TEND_AF_BACKOFF) != 0;
}
int tend_actor_is_remote(const tend_actor *a) {
  return (a->flags & TEND_AF_REMOTE) != 0;
}
int tend_actor_is_internal(const tend_actor *a) {
  return (a->flags & TEND_AF_INTERNAL) != 0;
}
int tend_actor_is_disconnected(const tend_actor *a) {
  return (a->flags & TEND_AF_DISCONNECTED) != 0;
}

tend_actor_state tend_actor_state_of(const tend_actor *a) {
  return (tend_actor_state)a->state;
}

/* ---- supervision */
tend_backoff_sup *tend_backoff_of(const tend_actor *a) {
  return (a->flags & TEND_AF_BACKOFF) && a->ext ? a->ext->backoff : NULL;
}
tend_actor *tend_backoff_current_child(tend_host *h,
                                       const tend_backoff_sup *b) {
  tend_actor *c = tend_actor_live(h, b->child_id, b->child_gen);
  return c && c->state < TEND_ACTOR_STOPPING ? c : NULL;
}
uint32_t tend_backoff_restarts(const tend_backoff_sup *b) {
  return b->restarts;
}
