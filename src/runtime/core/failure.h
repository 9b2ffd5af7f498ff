/* failure: what the actor machine does when an actor fails (docs/design.md
 * §5.1): the failure is counted and traced, the failed actor and its
 * subtree are suspended, and its parent hears of it (CHILD_FAILED) — the
 * supervisor's driver decides from there. The main chunk's failure and one
 * escalated past a guardian end the host; a task's is logged. */
#ifndef TEND_FAILURE_H
#define TEND_FAILURE_H

#include <lua.h>

#include "runtime/core/host.h"

/* The actor's code raised the error at the top of L's stack (popped). */
void tend_actor_fail(lua_State *L, tend_host *h, tend_actor *a);
/* The factory or pre_start (op) raised the error at idx: a fails with
 * InitError. */
void tend_actor_init_failed(lua_State *L, tend_host *h, tend_actor *a,
                            tend_actor_op op, int idx);
/* A permanent child stopped by itself: reported for a restart
 * (CHILD_EXITED). Returns 1 when it was, 0 when it stops for good. */
int tend_actor_exited(lua_State *L, tend_host *h, tend_actor *a);

/* a waits for its supervisor's decision: it and its subtree run nothing
 * until resumed. */
void tend_actor_suspend_failed(tend_actor *a);
/* One suspension more (less) for a and its subtree; a resumed actor with
 * work goes back on the run queue. */
void tend_actor_suspend_tree(tend_actor *a);
void tend_actor_resume_tree(tend_host *h, tend_actor *a);

#endif
