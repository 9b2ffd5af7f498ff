/* stash: any actor's stash (Akka's Stash): ctx:stash() keeps the message
 * being received, with its sender; ctx:unstash_all() puts every kept
 * message back in front of the mailbox, oldest first. A bound (the spawn
 * option `stash = n`, default none) makes a stash beyond it fail the actor
 * with StashOverflow (the message is not kept). When the actor restarts,
 * its stash goes to dead letters as the new instance is built (after
 * pre_restart, which may unstash_all to keep them); when it dies, too.
 * The record lives in the actor's ext, made on first use. */
#ifndef TEND_STASH_H
#define TEND_STASH_H

#include <lua.h>

#include "runtime/host.h"

struct tend_stash {
  tend_queue q;      /* kept messages, oldest first (nodes own values) */
  uint32_t n;        /* their number */
  uint32_t capacity; /* bound, 0 for none */
};

/* Bounds a's stash (at spawn). Without memory the bound is lost. */
void tend_stash_set_capacity(tend_actor *a, uint32_t capacity);
/* Stashes the message a receives now. Raises, naming fn, when a is not
 * receiving a message, when that message is stashed already, or (kind
 * StashOverflow) when the stash is full. */
void tend_stash_push(lua_State *L, tend_host *h, tend_actor *a, const char *fn);
/* Puts a's stash in front of its user queue; returns how many. */
uint32_t tend_stash_unstash_all(tend_host *h, tend_actor *a);
/* How many messages a keeps. */
uint32_t tend_stash_size(const tend_actor *a);
/* Drops a's stash to dead letters (a restart builds its new instance). */
void tend_stash_drop(lua_State *L, tend_host *h, tend_actor *a);
/* Drops a's stash and frees its record (at death or close, before the
 * ext goes). */
void tend_stash_free(lua_State *L, tend_host *h, tend_actor *a);

#endif
