/* supervise: what happens when an actor fails (design §5.1-§5.4):
 * the failure reaches the supervisor (CHILD_FAILED, failure.h), its
 * strategy's decider picks a directive, and the directive is carried out:
 * resume, the restart sequence, stop, or escalation. Every state change of
 * a restart is made here. All of it runs in C; Lua only supplies the
 * decider function. The scheduler reaches it through its driver: the
 * system messages of supervision and the ops of the restart sequence. */
#ifndef TEND_SUPERVISE_H
#define TEND_SUPERVISE_H

#include <stddef.h>

#include "runtime/core/host.h"

/* Queues a RESTART_SELF of a (its failure is pending): typed supervision
 * and backoff restart an actor themselves. */
void tend_supervise_restart_self(tend_host *h, tend_actor *a);

/* For restart.c, the restart sequence: m restarts for the failure of
 * `failed` (its error at ext field cause_field); p's group restart stops
 * short; a hook's failure (error at err) is logged. */
void tend_supervise_restart_member(lua_State *L, tend_host *h, tend_actor *m,
                                   tend_actor *failed, size_t cause_field);
void tend_supervise_group_abandon(tend_host *h, tend_actor *p);
void tend_supervise_log_hook(lua_State *L, tend_host *h, tend_actor *a,
                             const char *hook, int err);

/* The failures it judges: CHILD_FAILED, CHILD_EXITED, GROUP_STEP and the
 * decider (driver.h). */
extern const tend_driver tend_supervise_driver;
/* The restart sequence (restart.c): RESTART, RESTART_SELF, RESTART_GO,
 * CHILD_GONE and the ops of the restart. */
extern const tend_driver tend_restart_driver;

#endif
