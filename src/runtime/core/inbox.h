/* inbox: the mailbox of a task (the main chunk /user/main, the REPL's
 * /user/repl, a tend.after function). A task has no behavior: its user
 * messages wait in its user queue until its code reads them with
 * tend.receive (api/lreceive.c). A task that waits in TEND_WAIT_RECEIVE
 * is woken by the next message (a send, or a `terminated` notice:
 * tend_promise_mail); its timeout is a promise nobody answers
 * (promise.h), so the ordinary wait machinery (cancel, stop, Ctrl-C)
 * applies. When a task's code returns,
 * what it never read becomes dead letters, counted and logged once. */
#ifndef TEND_INBOX_H
#define TEND_INBOX_H

#include <lua.h>

#include "runtime/core/host.h"

/* Takes a's next live message: pushes it and its sender's ref (nil for
 * none) and returns 1, or pushes nothing and returns 0 when the queue is
 * empty. A `terminated` notice of a watch that was undone is dropped. */
int tend_inbox_take(lua_State *L, tend_host *h, tend_actor *a);
/* The task a's code returned: every message it did not read becomes a
 * dead letter; when there were any, one warn line says how many and
 * what the first was. */
void tend_inbox_close(lua_State *L, tend_host *h, tend_actor *a);

#endif
