/* fiber: a task's coroutines whose waits do not suspend the task (the
 * calls of a stream's map_async, design §4.7). The task's code resumes a
 * fiber with tend_fiber_resume. A wait there that is a promise (tend.ask,
 * an HTTP request, a process's exit, tend.sleep) makes the fiber yield
 * tend_fiber_wait_key to the task's code, which goes on (starts other
 * fibers, reads its mailbox); the promise's outcome later makes
 * tend.receive answer tend_fiber_ready_key, and the task takes it
 * (tend_promise_fiber_take: the tag it resumed that fiber with) and
 * resumes the fiber with that tag.
 * Any other wait there (tend.shutdown, a spawn on another node, a wait
 * answered at once) suspends the task itself until it ends, as if the
 * task's own code had waited: it is never lost, only not concurrent. */
#ifndef TEND_FIBER_H
#define TEND_FIBER_H

#include <lua.h>
#include <stdint.h>

#include "runtime/core/host.h"

/* What a fiber yields when it waits on a promise, and what tend.receive
 * answers when an outcome is ready. */
extern const char tend_fiber_wait_key, tend_fiber_ready_key;

/* The current task's code resumes the fiber at stack index 1 of L, its
 * tag (an integer > 0 the task chose, given back by the outcomes of its
 * waits) at 2, with the nargs values on top of L: returns as
 * coroutine.resume does (true and what the fiber yielded or returned, or
 * false and its error). A wait in the fiber that is not a promise
 * suspends the task meanwhile. */
int tend_fiber_resume(lua_State *L, tend_host *h, int nargs);
/* From tend_sched_wait: the fiber L waits on the current actor's promise:
 * it yields to the task's code (see above); 0 when the promise cannot be
 * a fiber's (the caller then suspends the task). */
int tend_fiber_wait(lua_State *L, tend_host *h, lua_KFunction k, int *yielded);

/* Any other coroutine an actor's code made (coroutine.resume, wrap) may
 * wait in tend too: the actor waits (its code's coroutine yields, the
 * wait kept), then the coroutine is resumed again and the resume returns
 * what it yields or returns next, as if its code had run in the actor's
 * own. Around each such resume from L: */
/* Before: returns whether L can yield (where it cannot, a wait in the
 * coroutine raises: tend_sched_check_wait). */
int tend_fiber_nested_begin(lua_State *L, tend_host *h);
/* After (yieldable: what begin returned): 1 when the coroutine waits in
 * tend; the caller then returns tend_fiber_nested_wait(L, h, ctx, k),
 * and k resumes the coroutine again once the wait is over. */
int tend_fiber_nested_end(tend_host *h, int yieldable);
int tend_fiber_nested_wait(lua_State *L, tend_host *h, lua_KContext ctx,
                           lua_KFunction k);

#endif
