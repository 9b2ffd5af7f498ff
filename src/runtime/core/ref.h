/* ref: tend.Ref, the address of an actor (or of a pending ask). A ref
 * holds (id, gen); it reaches the actor only while that generation lives.
 * A live actor has one canonical ref (so refs work as table keys); a dead
 * actor's ref keeps its path in its user value. Its methods are the API
 * layer's (api/lref.c). */
#ifndef TEND_REF_H
#define TEND_REF_H

#include <lua.h>
#include <stdint.h>

typedef struct tend_host tend_host;

#include "runtime/core/actor.h"
#include "runtime/tend.h" /* tend_ref */

/* Pushes a new ref to (id, gen). */
void tend_ref_new(lua_State *L, uint32_t id, uint32_t gen);
/* The ref at idx, or NULL. */
tend_ref *tend_ref_test(lua_State *L, int idx);
/* The ref at idx remembers the path at the top of the stack (popped). */
void tend_ref_set_path(lua_State *L, int idx);

/* What refs reach is actors (actor.c): */
/* Pushes the best ref for (id, gen): the actor's canonical one while it
 * lives, else a new one. Pushes nil for id 0. */
void tend_ref_push(lua_State *L, tend_host *h, uint32_t id, uint32_t gen);
/* The live actor a ref names, or NULL. */
tend_actor *tend_ref_actor(tend_host *h, const tend_ref *r);
/* Pushes the path of the ref at idx: a live actor's, "/temp/$id" for a
 * pending ask, the remembered one for a dead actor, or "/deadLetters". */
void tend_ref_push_path(lua_State *L, tend_host *h, int idx);

#endif
