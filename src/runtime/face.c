/* face: the small calls of runtime/tend.h that read or set a field of a
 * private struct for the layers above. Each is one line; with -flto they
 * inline where they are called. This file also includes every private
 * header the face repeats a declaration of, so the compiler checks that
 * the face and the private headers agree. */
#include "runtime/tend.h"

#include "runtime/core/actor.h"
#include "runtime/core/event.h"
#include "runtime/core/host.h"
#include "runtime/core/lifecycle.h"
#include "runtime/core/promise.h"
#include "runtime/core/sched.h"
#include "runtime/core/value.h"

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
