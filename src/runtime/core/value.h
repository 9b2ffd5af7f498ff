/* value: message values in flight. Nil, booleans and numbers travel inline;
 * any other value is kept in the host's value store at a slot until taken.
 * Every stored value has exactly one owner (a message node or a timer) that
 * takes or drops it once. */
#ifndef TEND_VALUE_H
#define TEND_VALUE_H

#include <lua.h>

#include "runtime/core/host.h"

/* Pushes the fast value store (made on the first call): what a caller
 * that stores or takes often keeps at hand (an upvalue, a worker's slot)
 * to pass as `store` below. */
void tend_value_push_store(lua_State *L, tend_host *h);
/* Stores the value at stack index idx (not popped). Returns 0, or -1 when
 * memory is exhausted. */
int tend_value_store(lua_State *L, tend_host *h, int idx, tend_value *out);
/* Same, with the fast store at stack index store (0: from the registry;
 * a pseudo-index such as an upvalue is fine). */
int tend_value_store_in(lua_State *L, tend_host *h, int idx, tend_value *out,
                        int store);
/* Pushes v and keeps it stored. */
void tend_value_push(lua_State *L, tend_host *h, const tend_value *v);
/* Pushes v and releases it. */
void tend_value_take(lua_State *L, tend_host *h, tend_value *v);
/* Same, with the fast store at stack index store (a worker's slot); the
 * store keeps the value until its slot is reused or swept. */
void tend_value_take_at(lua_State *L, tend_host *h, tend_value *v, int store);
/* Clears the slots that tend_value_take_at left holding their values
 * (pushes and pops nothing): the scheduler calls it after each pass, so a
 * message that was taken is kept from the collector one pass at most. */
void tend_value_sweep(lua_State *L, tend_host *h);
/* Releases v without pushing it. */
void tend_value_drop(lua_State *L, tend_host *h, tend_value *v);

/* Pushes hook k of the behavior table at idx and returns its type. A
 * table with a metatable is read protected: if its __index raises, what is
 * pushed is a function that raises that error when called, so the call of
 * the hook fails as if the hook itself had raised (never the worker). */
int tend_value_hook(lua_State *L, int idx, const char *k);

#endif
