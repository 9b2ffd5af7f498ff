/* preempt: the watchdog and its hook (see preempt.h). */
#include "runtime/core/preempt.h"

#include <lauxlib.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "runtime/core/error.h"
#include "runtime/core/event.h"
#include "runtime/core/host.h"

#define WATCH_MS 10    /* a step running longer than this is looked at */
#define STUCK_TIMES 10 /* a stuck step's bound: this many max_message_time */
#define STUCK_MIN_NS ((uint64_t)10000000000) /* and at least 10 s */
#define SIGNAL_GRACE_NS                                 \
  1000000000 /* a signal the loop has not taken by then \
                ends the process */

/* A caught signal the loop has not taken within the grace period: the
 * loop cannot run (Lua is stuck where it cannot be preempted), so the
 * promise that a signal stops tend is kept here: exit with 128 + signal. */
static void check_signals(tend_host *h, uint64_t *since) {
  if (__atomic_load_n(&h->signal_mask, __ATOMIC_RELAXED) == 0) {
    *since = 0;
  } else if (*since == 0) {
    *since = uv_hrtime();
  } else if (uv_hrtime() - *since > SIGNAL_GRACE_NS) {
    fprintf(stderr,
            "tend: signal %d not taken within 1 s (busy where it "
            "cannot be preempted): exiting\n",
            (int)__atomic_load_n(&h->signal_first, __ATOMIC_RELAXED));
    _exit(128 + __atomic_load_n(&h->signal_first, __ATOMIC_RELAXED));
  }
}

/* The hook is armed in the loop thread, from a signal handler, as lua.c
 * does for Ctrl-C: lua_sethook may interrupt the thread that runs Lua
 * (Lua supports that), but called from another thread it would read the
 * coroutine's call frames while that thread frees them. SIGURG is ignored
 * by default, so a stray one does nothing. */
#define ARM_SIGNAL SIGURG

/* The watchdog's record of the host whose loop runs in this thread: the
 * signal is sent to that thread, so each host's loop arms its own. */
static _Thread_local tend_preempt *volatile armed_for;

static void arm(int sig) {
  (void)sig;
  tend_preempt *p = armed_for;
  lua_State *co = p ? p->running : NULL;
  if (co == NULL) return;
  lua_sethook(co, tend_preempt_hook, LUA_MASKCOUNT, 1);
  lua_State *in = p->inner; /* a loop in a coroutine the actor made */
  if (in && in != co) lua_sethook(in, tend_preempt_hook, LUA_MASKCOUNT, 1);
}

/* The loop has been in one call of h->current, reaching no hook, for
 * stuck_ns: past max(10 x its actor's max_message_time, 10 s), the host
 * ends (exit 70) naming it, with its trace written. The loop thread is
 * stuck in that call, so the actor and its ext stay as they are while
 * this thread reads them; an actor without max_message_time may run as
 * long as it likes. */
static void check_stuck(tend_host *h, uint64_t stuck_ns) {
  tend_actor *a = h->current;
  if (a == NULL || a->ext == NULL || a->ext->max_ns <= 0) return;
  uint64_t bound = (uint64_t)a->ext->max_ns * STUCK_TIMES;
  if (bound < STUCK_MIN_NS) bound = STUCK_MIN_NS;
  if (stuck_ns < bound) return;
  char msg[1024];
  int n = snprintf(msg, sizeof msg,
                   "tend: %s: stuck for %.1f s where it cannot be preempted "
                   "(a __gc metamethod or a long C call), past 10 x its "
                   "max_message_time (%g s) and at least 10 s: exiting with "
                   "status 70\n",
                   a->ext->max_path ? a->ext->max_path : "an actor",
                   (double)stuck_ns / 1e9, (double)a->ext->max_ns / 1e9);
  if (n > (int)sizeof msg - 1) n = (int)sizeof msg - 1;
  ssize_t w = write(2, msg, (size_t)n);
  (void)w; /* nothing more can be done about a failed write */
  /* the loop thread may be inside the trace (a blocked write): its lines
   * are written only if that cannot block, so the exit always comes */
  tend_trace_salvage(h);
  _exit(TEND_EXIT_STUCK);
}

/* WATCH_MS between the watchdog's looks; tend_preempt_stop ends the wait
 * at once (a host's close does not wait for the rest of a nap). */
static void nap(tend_preempt *p) {
  uv_mutex_lock(&p->lock);
  uint64_t until = uv_hrtime() + (uint64_t)WATCH_MS * 1000000;
  for (uint64_t t = uv_hrtime(); !p->stop && t < until; t = uv_hrtime())
    (void)uv_cond_timedwait(&p->wake, &p->lock, until - t);
  uv_mutex_unlock(&p->lock);
}

static void watchdog(void *arg) {
  tend_host *h = arg;
  tend_preempt *p = &h->preempt;
  uint64_t signal_since = 0;
  p->progress_at = uv_hrtime();
  while (!__atomic_load_n(&p->stop, __ATOMIC_RELAXED)) {
    nap(p);
    if (__atomic_load_n(&p->stop, __ATOMIC_RELAXED)) break;
    check_signals(h, &signal_since);
    uv_mutex_lock(&p->lock);
    uint64_t steps = __atomic_load_n(&h->steps, __ATOMIC_RELAXED);
    uint64_t resumes = __atomic_load_n(&p->resumes, __ATOMIC_ACQUIRE);
    lua_State *running = __atomic_load_n(&p->running, __ATOMIC_RELAXED);
    uint64_t now = uv_hrtime();
    if (steps != p->seen) p->step_since = now;
    if (steps != p->seen || resumes != p->seen_resumes || !running ||
        __atomic_load_n(&p->hooked, __ATOMIC_RELAXED)) { /* the loop moves */
      p->progress_at = now;
      p->seen_resumes = resumes;
      __atomic_store_n(&p->hooked, 0, __ATOMIC_RELAXED);
    } else if (now - p->progress_at >= STUCK_MIN_NS) {
      check_stuck(h, now - p->progress_at);
    }
    if (running && steps == p->seen)
      pthread_kill(p->loop_thread, ARM_SIGNAL); /* arm() in that thread */
    p->seen = steps;
    uv_mutex_unlock(&p->lock);
  }
}

int tend_preempt_start(tend_host *h, int yield) {
  tend_preempt *p = &h->preempt;
  p->yield = yield;
  p->loop_thread = uv_thread_self();
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = arm;
  sa.sa_flags = SA_RESTART; /* the loop's system calls go on */
  sigemptyset(&sa.sa_mask);
  if (sigaction(ARM_SIGNAL, &sa, NULL) != 0) return -1;
  armed_for = p;
  if (uv_mutex_init(&p->lock) != 0) return -1;
  if (uv_cond_init(&p->wake) != 0) {
    uv_mutex_destroy(&p->lock);
    return -1;
  }
  if (uv_thread_create(&p->thread, watchdog, h) != 0) {
    uv_cond_destroy(&p->wake);
    uv_mutex_destroy(&p->lock);
    return -1;
  }
  p->started = 1;
  return 0;
}

void tend_preempt_stop(tend_host *h) {
  tend_preempt *p = &h->preempt;
  if (!p->started) return;
  uv_mutex_lock(&p->lock);
  __atomic_store_n(&p->stop, 1, __ATOMIC_RELAXED);
  uv_cond_signal(&p->wake);
  uv_mutex_unlock(&p->lock);
  uv_thread_join(&p->thread);
  armed_for = NULL; /* a signal still pending finds nothing to arm */
  uv_cond_destroy(&p->wake);
  uv_mutex_destroy(&p->lock);
  p->started = 0;
}

lua_State *tend_preempt_inner(tend_host *h, lua_State *co) {
  lua_State *before = h->preempt.inner;
  h->preempt.inner = co;
  return before;
}

/* No lock: the loop thread is the only writer of running, inner and
 * resumes; the watchdog reads them atomically, and a snapshot older by
 * one resume only delays or adds a one-shot hook, as a signal that
 * arrives after the next resume always could. */
void tend_preempt_running(tend_host *h, lua_State *co) {
  tend_preempt *p = &h->preempt;
  if (!p->started) return;
  __atomic_store_n(&p->running, co, __ATOMIC_RELAXED);
  p->inner = NULL;
  __atomic_store_n(&p->resumes, p->resumes + 1, __ATOMIC_RELEASE);
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
  /* the step can be preempted: not stuck */
  __atomic_store_n(&h->preempt.hooked, 1, __ATOMIC_RELAXED);
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
    tend_error_new(L, TEND_ERR_NAME(BUDGET_EXCEEDED), lua_tostring(L, -1));
    lua_error(L);
  }
  /* let the others run; a coroutine the actor made is not yielded (its
   * resumer would take that for its own yield): its loop is bounded by
   * the budget only, and the actor yields once back in its own code */
  if (h->preempt.yield && L == h->resumed && lua_isyieldable(L)) {
    mark_busy(h, a);
    a->wait = TEND_WAIT_WOKEN;
    a->wake = TEND_WAKE_OK;
    h->yield = TEND_YIELD_BLOCK;
    h->quantum = 0; /* and the event loop gets its turn too */
    lua_yield(L, 0);
  }
}
