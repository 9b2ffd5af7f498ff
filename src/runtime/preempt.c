/* preempt: the watchdog and its hook (see preempt.h). */
#include "runtime/preempt.h"

#include <lauxlib.h>
#include <stdio.h>
#include <unistd.h>

#include "runtime/error.h"
#include "runtime/host.h"

#define WATCH_MS 10 /* a step running longer than this is looked at */
#define SIGNAL_GRACE_NS                                 \
  1000000000 /* a signal the loop has not taken by then \
                ends the process */

/* A caught signal the loop has not taken within the grace period: the
 * loop cannot run (Lua is stuck where it cannot be preempted), so the
 * promise that a signal stops tend is kept here: exit with 128 + signal. */
static void check_signals(tend_host *h, uint64_t *since) {
  if (h->signal_mask == 0) {
    *since = 0;
  } else if (*since == 0) {
    *since = uv_hrtime();
  } else if (uv_hrtime() - *since > SIGNAL_GRACE_NS) {
    fprintf(stderr,
            "tend: signal %d not taken within 1 s (busy where it "
            "cannot be preempted): exiting\n",
            (int)h->signal_first);
    _exit(128 + h->signal_first);
  }
}

static void watchdog(void *arg) {
  tend_host *h = arg;
  tend_preempt *p = &h->preempt;
  uint64_t signal_since = 0;
  while (!p->stop) {
    uv_sleep(WATCH_MS);
    check_signals(h, &signal_since);
    uv_mutex_lock(&p->lock);
    uint64_t steps = h->steps;
    if (steps != p->seen) p->step_since = uv_hrtime();
    if (p->running && steps == p->seen)
      lua_sethook(p->running, tend_preempt_hook, LUA_MASKCOUNT, 1);
    p->seen = steps;
    uv_mutex_unlock(&p->lock);
  }
}

int tend_preempt_start(tend_host *h, int yield) {
  tend_preempt *p = &h->preempt;
  p->yield = yield;
  if (uv_mutex_init(&p->lock) != 0) return -1;
  if (uv_thread_create(&p->thread, watchdog, h) != 0) {
    uv_mutex_destroy(&p->lock);
    return -1;
  }
  p->started = 1;
  return 0;
}

void tend_preempt_stop(tend_host *h) {
  tend_preempt *p = &h->preempt;
  if (!p->started) return;
  p->stop = 1;
  uv_thread_join(&p->thread);
  uv_mutex_destroy(&p->lock);
  p->started = 0;
}

void tend_preempt_running(tend_host *h, lua_State *co) {
  tend_preempt *p = &h->preempt;
  if (!p->started) return;
  uv_mutex_lock(&p->lock);
  p->running = co;
  uv_mutex_unlock(&p->lock);
}

/* a is preempted in the middle of a call: it is busy since that call
 * began (exact when its budget is timed, else the watchdog's estimate). */
static void mark_busy(tend_host *h, tend_actor *a) {
  tend_actor_ext *x = tend_actor_ext_get(a);
  if (x == NULL || x->busy_since) return; /* already, since this call began */
  if (x->max_ns || a->op == TEND_OP_DECIDE) {
    x->busy_since = x->msg_start;
  } else {
    uv_mutex_lock(&h->preempt.lock);
    x->busy_since = h->preempt.step_since;
    uv_mutex_unlock(&h->preempt.lock);
  }
  if (x->busy_since == 0) x->busy_since = 1;
}

void tend_preempt_hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  lua_sethook(L, NULL, 0, 0); /* one shot */
  tend_host *h = tend_host_of(L);
  tend_actor *a = h->current;
  if (a == NULL || a->state == TEND_ACTOR_DEAD) return;
  if (a == h->interrupt) { /* tend_sched_interrupt: Ctrl-C at the REPL */
    h->interrupt = NULL;
    tend_error_interrupted(L);
  }
  int64_t budget = a->ext ? a->ext->max_ns : 0;
  if (a->op == TEND_OP_DECIDE && budget == 0) budget = TEND_DECIDER_BUDGET_NS;
  if (budget && a->op != TEND_OP_NONE &&
      (int64_t)(uv_hrtime() - a->ext->msg_start) > budget) {
    lua_pushfstring(L, "%s ran longer than %s (%f s)",
                    a->op == TEND_OP_RECEIVE  ? "the message"
                    : a->op == TEND_OP_DECIDE ? "the decider"
                                              : "the hook or factory",
                    a->ext->max_ns ? "max_message_time" : "a decider's budget",
                    (double)budget / 1e9);
    tend_error_new(L, "BudgetExceeded", lua_tostring(L, -1));
    lua_error(L);
  }
  if (h->preempt.yield && lua_isyieldable(L)) { /* let the others run */
    mark_busy(h, a);
    a->wait = TEND_WAIT_WOKEN;
    a->wake = TEND_WAKE_OK;
    h->yield = TEND_YIELD_BLOCK;
    h->quantum = 0; /* and the event loop gets its turn too */
    lua_yield(L, 0);
  }
}
