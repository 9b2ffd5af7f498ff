/* stash: an actor's stash (Akka's Stash): ctx:stash() keeps the message
 * being received, with its sender; ctx:unstash_all() puts every kept
 * message back in front of the mailbox, oldest first. Any actor may have
 * one: the spawn option `stash = n` gives it (as an Akka actor mixes in
 * Stash, or Behaviors.withStash(capacity)), bounded by n: one more fails
 * the actor with StashOverflow (the message is not kept). Only those
 * actors pay for it (a registry slot rewritten per message). When the
 * actor restarts, its stash goes to dead letters as the new instance is
 * built (after pre_restart, which may unstash_all to keep them); when it
 * dies, too. The record lives in the actor's ext. */
#ifndef TEND_STASH_H
#define TEND_STASH_H

#include <lua.h>

#include "runtime/core/host.h"

struct tend_stash {
  tend_queue q;      /* kept messages, oldest first (nodes own values) */
  uint32_t n;        /* their number */
  uint32_t capacity; /* bound (>= 1) */
  int current_ref;   /* registry ref owned here: the message being
                        received, or a mark once it is stashed */
};

/* Gives a a stash of at most capacity messages (at spawn). Raises when
 * memory is out. */
void tend_stash_enable(lua_State *L, tend_actor *a, uint32_t capacity);
/* a, which has a stash, receives the message at stack index msg. */
/* Stashes the message a receives now. Raises, naming fn, when a has no
 * stash, is not receiving a message, when that message is stashed
 * already, or (kind StashOverflow) when the stash is full. */
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
/* Its restarts and deaths (driver.h). */
extern const tend_driver tend_stash_driver;

#endif
