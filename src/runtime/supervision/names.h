/* names: the registry of names (OTP's register/whereis): a name names one
 * live actor, an actor has at most one name, and the name goes when the
 * actor dies. Lookups also take paths ("/user/app/api"): a named actor's
 * path is a key of the host's table of named paths (host.h names_ref), an
 * anonymous segment ("$seq") is found among its parent's children.
 *
 * The registry is Lua tables kept in the Lua registry under the address
 * of a static key of names.c: name -> ctx, actor id -> name, and the last
 * listing of tend.registered with the names added since.
 * An actor with a name carries TEND_AF_REGISTERED; only those cost
 * anything at death. */
#ifndef TEND_NAMES_H
#define TEND_NAMES_H

#include <lua.h>

#include "runtime/core/host.h"

/* Gives a the name at stack index name (a string, checked by the caller).
 * Raises, naming fn, when the name is taken by another actor (naming
 * both) or a already has a name. */
void tend_names_register(lua_State *L, tend_host *h, tend_actor *a, int name,
                         const char *fn);
/* Removes the name at stack index name; returns 1 when it named an actor,
 * 0 when it named none. */
int tend_names_unregister(lua_State *L, tend_host *h, int name);
/* The live actor the string at idx names: a registered name, or a path
 * when it starts with '/'. NULL when none. */
tend_actor *tend_names_lookup(lua_State *L, tend_host *h, int idx);
/* Pushes a's registered name, or nil. */
void tend_names_push_name(lua_State *L, tend_host *h, const tend_actor *a);
/* Pushes a list of the registered names, sorted. */
void tend_names_push_all(lua_State *L, tend_host *h);
/* a dies: its name goes (called from lifecycle.c). */
void tend_names_forget(lua_State *L, tend_host *h, tend_actor *a);

/* Its deaths: a dead actor's name goes (driver.h). */
extern const tend_driver tend_names_driver;

#endif
