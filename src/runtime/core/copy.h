/* copy: --copy-messages. tend passes messages by reference (design §3.1):
 * a table sent is the very table the receiver gets, so a sender that
 * changes it later, or two actors that change one table, race. Under
 * --copy-messages every message is deep-copied where it is sent (send,
 * tell, reply, ask, ctx:after, ctx:every, and each tick of an every), so
 * such bugs show up as a difference. What is copied: tables, deeply, with
 * cycles and shared sub-tables kept as they were (one copy per original
 * table) and the same metatable; nil, booleans, numbers and strings are
 * immutable and go as they are; refs, error values, tend.stopped /
 * tend.unhandled and handles (sockets, listeners, processes: userdata whose
 * metatable has __tend_handle = true) go as they are (they are
 * identities). Functions,
 * coroutines and other userdata (a ctx, a file, a timer) cannot be copied:
 * the send raises NotCopyable, naming what and where in the message. */
#ifndef TEND_COPY_H
#define TEND_COPY_H

#include <lua.h>

#include "runtime/core/host.h"
#include "runtime/tend.h" /* tend_copy_needed */

/* Pushes a deep copy of the value at idx and returns 0; or pushes a
 * message saying what cannot be copied and where ("a function at
 * message.handler") and returns -1. */
int tend_copy_push(lua_State *L, tend_host *h, int idx);
/* Replaces the value at idx with its copy, or raises NotCopyable (its
 * message begins with prefix; its `where` is the caller's position). */
void tend_copy_in_place(lua_State *L, tend_host *h, int idx,
                        const char *prefix);

#endif
