/* send: delivering messages (see send.c). */
#ifndef TEND_SEND_H
#define TEND_SEND_H

#include <lua.h>

#include "runtime/core/host.h"
#include "runtime/core/ref.h"

/* Delivers the value at stack index idx to (id, gen) as a user message from
 * (sender_id, sender_gen). A dead target takes it as a dead letter. */
void tend_actor_send(lua_State *L, tend_host *h, uint32_t id, uint32_t gen,
                     int idx, uint32_t sender_id, uint32_t sender_gen);
/* Same, with the value store at stack index store (see value.h). */
void tend_actor_send_in(lua_State *L, tend_host *h, uint32_t id, uint32_t gen,
                        int idx, uint32_t sender_id, uint32_t sender_gen,
                        int store);
/* Same, with an already-stored value whose ownership passes to the call. */
void tend_actor_send_value(lua_State *L, tend_host *h, uint32_t id,
                           uint32_t gen, tend_value v, uint32_t sender_id,
                           uint32_t sender_gen);
/* Pushes the Killed error of a ("/user/a was killed"). */
void tend_actor_push_killed(lua_State *L, tend_host *h, tend_actor *a);
/* Queues a Kill in a's user queue (past its bound and the send filter):
 * a fails with Killed when it reaches it. */
void tend_actor_send_kill(tend_host *h, tend_actor *a);
/* Queues a PoisonPill the same way: a stops normally when it reaches it,
 * as if its behavior had returned tend.stopped there. */
void tend_actor_send_poison(tend_host *h, tend_actor *a);
/* Same, to r, the ref at (absolute) stack index ref: when its actor is
 * dead, the dead-letter log names it by the ref's path. */
void tend_actor_send_ref(lua_State *L, tend_host *h, const tend_ref *r, int ref,
                         int idx, uint32_t sender_id, uint32_t sender_gen,
                         int store);
/* Counts a dead letter for `to` (NULL: unknown), drops v (may be NULL). */
void tend_actor_dead_letter(lua_State *L, tend_host *h, tend_actor *to,
                            tend_value *v);
/* The same for the message at stack index msg, sent by (sid, sgen). */
void tend_actor_dead_letter_msg(lua_State *L, tend_host *h, tend_actor *to,
                                int msg, uint32_t sid, uint32_t sgen,
                                const char *why);
/* The same for the letter l (what the log shows: deadletter.h), with the
 * message v (dropped; may be NULL, then l->msg shows it). */
void tend_actor_dead_letter_at(lua_State *L, tend_host *h, const tend_letter *l,
                               tend_value *v);

/* The one way to post a system message: kind to a, about actor `about`
 * (may be NULL); a is queued to run. */
void tend_actor_post(tend_host *h, tend_actor *a, tend_msg_kind kind,
                     const tend_actor *about);

/* Its timer kinds (driver.h). */
extern const tend_driver tend_send_driver;

#endif
