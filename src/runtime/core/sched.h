/* sched: the run queue, the worker coroutines and waiting.
 *
 * A worker is a coroutine running a C loop that takes actors from the run
 * queue and calls their code directly (lua_pcallk), so a behavior that never
 * yields costs no coroutine switch. When an actor waits (sleep, ask), the
 * worker's coroutine becomes that actor's and the scheduler takes another
 * worker from the pool; when the wait ends, the actor's coroutine is resumed
 * and, once its message is done, goes on working as a worker. An idle actor
 * owns no coroutine. */
#ifndef TEND_SCHED_H
#define TEND_SCHED_H

#include <lua.h>

#include "runtime/core/host.h"

#define TEND_TURN_BUDGET 64 /* messages per actor per turn */
#define TEND_QUANTUM 20000  /* steps per return to the event loop */

/* Runs actors until the run queue is empty or the quantum is spent.
 * Called from the event loop on the main thread. */
void tend_sched_run(tend_host *h);
/* The factory of the current actor a returned the value at idx: a takes it
 * as its behavior (1), or idx is replaced by the Error saying why not (0;
 * the stack then ends at idx). */
int tend_sched_adopt(lua_State *L, tend_actor *a, int idx);
/* Ends the current run within `steps` more steps (no effect when fewer are
 * left), so that the loop gets its turn soon: nats.c, when envelopes wait
 * to leave for another node. */
static inline void tend_sched_return_within(tend_host *h, int steps) {
  if (h->quantum > steps) h->quantum = steps;
}
/* Suspends the current actor in `wait`; must be the return expression of a
 * C function called from that actor's code. k continues it when woken. */
int tend_sched_wait(lua_State *L, tend_host *h, tend_actor_wait wait,
                    lua_KFunction k);
/* Ctrl-C at the REPL: a's running code raises Interrupted: at once when
 * it waits in sleep or ask, else at the next hook when it resumes. */
void tend_sched_interrupt(lua_State *L, tend_host *h, tend_actor *a);
/* In a continuation after a wait: raises Interrupted if the wait was
 * interrupted, else returns how it ended (tend_wake). */
int tend_sched_woken(lua_State *L, tend_host *h);
/* Raises a clear error unless L can wait (an actor's code, yieldable). */
tend_actor *tend_sched_check_wait(lua_State *L, tend_host *h, const char *fn);
#endif
