/* preempt: runaway actors (design §5.8). A watchdog thread looks at the
 * scheduler every few milliseconds; when the same step has been running
 * since its last look, it sends the loop thread SIGURG, whose handler arms
 * a one-shot count hook on the running coroutine (lua_sethook may
 * interrupt the Lua thread, as lua.c does from its signal handler; from
 * another thread it would race with Lua freeing call frames). The hook,
 * in the Lua thread: raises Interrupted for
 * a Ctrl-C at the REPL, raises BudgetExceeded when the code the actor runs
 * (a message, its factory, a hook; counted from the start of that call)
 * passed its max_message_time, or when a decider ran past its budget (the
 * supervisor's max_message_time, else TEND_DECIDER_BUDGET_NS), and
 * otherwise yields the actor (where Lua allows it) so others run; the
 * actor is then "busy" (tend.ps) and its ext->busy_since says since when
 * its call runs (to within the watchdog's period). No hook
 * is set while code behaves, so well-behaved actors pay nothing. Lua runs
 * no hook inside a __gc metamethod, so nothing here can stop a loop there
 * (a signal still ends the host: see host.h). An actor with a
 * max_message_time stuck there (no step, no resume, no hook) for
 * max(10 x that time, 10 s) ends the host with status 70 and its path on
 * stderr, so that an OS supervisor restarts it (Erlang's heart). The
 * watchdog also keeps the signal promise of host.h. */
#ifndef TEND_PREEMPT_H
#define TEND_PREEMPT_H

#include <lua.h>
#include <stdint.h>
#include <uv.h>

typedef struct tend_host tend_host;

#define TEND_DECIDER_BUDGET_NS 1000000000 /* a decider's time, by default */
/* The exit status of a host ended by a stuck actor (EX_SOFTWARE). */
#define TEND_EXIT_STUCK 70

typedef struct tend_preempt {
  uv_thread_t thread;          /* the watchdog */
  uv_mutex_t lock;             /* guards step_since and the nap */
  uv_cond_t wake;              /* signalled (under lock) when stop is set */
  lua_State *volatile running; /* coroutine the scheduler is resuming, or
                                  NULL (written by the loop thread only) */
  lua_State *volatile inner;   /* innermost coroutine the running actor's
                                  code resumed, or NULL: its own (loop
                                  thread only) */
  uv_thread_t loop_thread;     /* where the hook is armed (by a signal) */
  uint64_t seen;               /* watchdog: steps at its last look */
  uint64_t step_since;         /* uv_hrtime() of the look that first saw the
                                  current step (guarded by lock): that step
                                  began at most WATCH_MS before */
  uint64_t resumes;            /* coroutines resumed so far (loop thread
                                  writes, the watchdog reads: atomic) */
  uint64_t seen_resumes;       /* watchdog: resumes at its last look */
  uint64_t progress_at;        /* watchdog: uv_hrtime() of the last look
                                  that saw a step, a resume or a hook */
  volatile int hooked;         /* the hook ran since the watchdog's look */
  volatile int stop;           /* 1: the watchdog ends */
  int yield;                   /* 1: preempt long steps (off under the virtual
                                  clock, so replays stay exact) */
  int started;                 /* 1: the thread runs */
} tend_preempt;

int tend_preempt_start(tend_host *h, int yield);
void tend_preempt_stop(tend_host *h);
/* The scheduler resumes co (NULL: it returned). */
void tend_preempt_running(tend_host *h, lua_State *co);
/* The running actor's code resumes co (coroutine.resume or wrap; NULL:
 * back in its own coroutine): the hook is armed there too, Lua's hooks
 * being per coroutine. Returns the innermost one before, to restore. */
lua_State *tend_preempt_inner(tend_host *h, lua_State *co);
/* The hook (also set directly on a parked coroutine by the REPL). */
void tend_preempt_hook(lua_State *L, lua_Debug *ar);

#endif
