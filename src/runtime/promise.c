/* promise: pending asks (see promise.h). */
#include "runtime/promise.h"

#include <lauxlib.h>
#include <stdlib.h>

#include "runtime/runq.h"
#include "runtime/timers.h"

static void release(tend_host *h, tend_promise *p) {
  tend_slots_release(&h->ids, p->id);
  free(p);
}

tend_promise *tend_promise_new(lua_State *L, tend_host *h, tend_actor *a,
                               int64_t timeout_ns, const char *fn) {
  tend_promise *p = malloc(sizeof *p);
  if (p == NULL) luaL_error(L, "%s: out of memory", fn);
  p->kind = TEND_ENTITY_PROMISE;
  p->asker = a;
  p->timeout = NULL;
  p->id = tend_slots_alloc(&h->ids, p, &p->gen);
  if (p->id == 0) {
    free(p);
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

int tend_promise_resolve(lua_State *L, tend_host *h, tend_promise *p,
                         tend_value v) {
  tend_actor *asker = p->asker;
  if (asker->state == TEND_ACTOR_DEAD || asker->promise != p) return 0;
  tend_promise_cancel(L, h, asker);
  asker->wake_value = v;
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

void tend_promise_free_at_close(tend_host *h, tend_promise *p) {
  (void)h;
  free(p); /* its id goes with the table */
}

/* No reply in time: the asker wakes without one. */
static void on_timeout(lua_State *L, tend_host *h, tend_timer *t,
                       tend_actor *a) {
  if (a == NULL || a->wait_seq != t->tag ||
      (a->wait != TEND_WAIT_ASK && a->wait != TEND_WAIT_RECEIVE))
    return;
  if (a->promise) a->promise->timeout = NULL; /* t: the timer loop frees it */
  tend_promise_cancel(L, h, a);
  tend_runq_wake(h, a, TEND_WAKE_TIMEOUT);
}

void tend_promise_init(tend_host *h) {
  h->on_fire[TEND_TIMER_ASK] = on_timeout;
}
