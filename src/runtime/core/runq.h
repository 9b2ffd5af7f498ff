/* runq: the run queue and waking (see runq.c). */
#ifndef TEND_RUNQ_H
#define TEND_RUNQ_H

#include <lua.h>

#include "runtime/core/host.h"

/* Puts a at the tail of the run queue unless it is queued already, runs
 * now, is dead, or waits. */
void tend_runq_push(tend_host *h, tend_actor *a);
/* Takes a out of the run queue if it is there. */
void tend_runq_remove(tend_host *h, tend_actor *a);
/* Takes the head of the (non-empty) run queue. */
tend_actor *tend_runq_pop(tend_host *h);
/* Ends a's wait (how it ended: a->wake): a resumes in turn. */
void tend_runq_wake(tend_host *h, tend_actor *a, tend_wake how);
/* Drops the coroutine a is parked in (a is being stopped). */
void tend_runq_unpark(lua_State *L, tend_host *h, tend_actor *a);
/* Its timer kinds (driver.h). */
extern const tend_driver tend_runq_driver;

#endif
