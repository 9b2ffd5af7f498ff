/* preempt: runaway actors (DESIGN §5.8). A watchdog thread looks at the
 * scheduler every few milliseconds; when the same step has been running
 * since its last look, it arms a one-shot count hook on the running
 * coroutine (lua_sethook may be called asynchronously, as lua.c does from
 * its signal handler). The hook, in the Lua thread: raises Interrupted for
 * a Ctrl-C at the REPL, raises BudgetExceeded when the code the actor runs
 * (a message, its factory, a hook; counted from the start of that call)
 * passed its max_message_time, or when a decider ran past its budget (the
 * supervisor's max_message_time, else TEND_DECIDER_BUDGET_NS), and
 * otherwise yields the actor (where Lua allows it) so others run; the
 * actor is then "busy" (tend.ps) and its ext->busy_since says since when
 * its call runs (to within the watchdog's period). No hook
 * is set while code behaves, so well-behaved actors pay nothing. Lua runs
 * no hook inside a __gc metamethod, so nothing here can stop a loop there
 * (a signal still ends the host: see host.h). The watchdog also keeps the
 * signal promise of host.h. */
#ifndef TEND_PREEMPT_H
#define TEND_PREEMPT_H

#include <lua.h>
#include <stdint.h>
#include <uv.h>

typedef struct tend_host tend_host;

#define TEND_DECIDER_BUDGET_NS 1000000000 /* a decider's time, by default */

typedef struct tend_preempt {
  uv_thread_t thread;  /* the watchdog */
  uv_mutex_t lock;     /* guards running */
  lua_State *running;  /* coroutine the scheduler is resuming, or NULL */
  uint64_t seen;       /* watchdog: steps at its last look */
  uint64_t step_since; /* uv_hrtime() of the look that first saw the
                          current step (guarded by lock): that step began
                          at most WATCH_MS before */
  volatile int stop;   /* 1: the watchdog ends */
  int yield;           /* 1: preempt long steps (off under the virtual
                          clock, so replays stay exact) */
  int started;         /* 1: the thread runs */
} tend_preempt;

int tend_preempt_start(tend_host *h, int yield);
void tend_preempt_stop(tend_host *h);
/* The scheduler resumes co (NULL: it returned). */
void tend_preempt_running(tend_host *h, lua_State *co);
/* The hook (also set directly on a parked coroutine by the REPL). */
void tend_preempt_hook(lua_State *L, lua_Debug *ar);

#endif
