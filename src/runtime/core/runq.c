/* runq: the run queue (actors with work, each at most once, FIFO), and
 * the end of a wait: an actor woken from sleep or ask is queued to resume
 * its parked coroutine. */
#include "runtime/core/runq.h"

void tend_runq_push(tend_host *h, tend_actor *a) {
  if ((a->flags & TEND_AF_QUEUED) || a == h->current ||
      a->state == TEND_ACTOR_DEAD ||
      (a->wait != TEND_WAIT_NONE && a->wait != TEND_WAIT_WOKEN))
    return;
  a->flags |= TEND_AF_QUEUED;
  h->runq_len++;
  a->next_run = NULL;
  if (h->runq_tail)
    h->runq_tail->next_run = a;
  else
    h->runq_head = a;
  h->runq_tail = a;
}

void tend_runq_remove(tend_host *h, tend_actor *a) {
  if (!(a->flags & TEND_AF_QUEUED)) return;
  tend_actor *prev = NULL, *x = h->runq_head;
  while (x && x != a) {
    prev = x;
    x = x->next_run;
  }
  if (x == NULL) return;
  if (prev)
    prev->next_run = a->next_run;
  else
    h->runq_head = a->next_run;
  if (h->runq_tail == a) h->runq_tail = prev;
  a->next_run = NULL;
  a->flags &= ~TEND_AF_QUEUED;
  h->runq_len--;
}

tend_actor *tend_runq_pop(tend_host *h) {
  tend_actor *a = h->runq_head;
  h->runq_head = a->next_run;
  if (h->runq_head == NULL) h->runq_tail = NULL;
  a->next_run = NULL;
  a->flags &= ~TEND_AF_QUEUED;
  h->runq_len--;
  return a;
}

void tend_runq_wake(tend_host *h, tend_actor *a, tend_wake how) {
  a->wait = TEND_WAIT_WOKEN;
  a->wake = (uint8_t)how;
  tend_runq_push(h, a);
}

void tend_runq_unpark(lua_State *L, tend_host *h, tend_actor *a) {
  tend_runq_remove(h, a);
  a->flags &= ~TEND_AF_PARKED;
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->parked_ref);
  lua_pushnil(L);
  lua_rawseti(L, -2, a->id); /* parked[id] = nil: the coroutine is dropped */
  lua_pop(L, 1);
}

/* A sleep is over. */
static void on_wake(lua_State *L, tend_host *h, tend_timer *t, tend_actor *a) {
  (void)L;
  if (a == NULL || a->wait_seq != t->tag || a->wait != TEND_WAIT_SLEEP) return;
  tend_runq_wake(h, a, TEND_WAKE_OK);
}

const tend_driver tend_runq_driver = {
    .name = "runq",
    .timers = (const tend_driver_timer[]){{TEND_TIMER_WAKE, on_wake}, {0}}};
