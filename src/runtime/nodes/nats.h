/* nats: connections of this host to a NATS server (the C client,
 * libnats), the transport of nodes (lua/tend/node.lua).
 *
 * The connection runs on the host's own loop through cnats's libuv
 * adapter: the socket is read and written by the loop thread. Its
 * subscriptions are synchronous (no delivery thread): after each poll of
 * the loop a uv_check handle takes every message they hold and runs its
 * Lua function there, protected, in order. cnats's status callbacks come
 * from its own threads: they queue a status and wake the loop (uv_async).
 * Key-value operations (JetStream) are synchronous requests in cnats: they
 * run on libuv's worker threads while the loop reads their replies, the
 * calling actor waiting on a promise as for an ask.
 *
 * The adapter's handles keep the loop alive while a connection is open:
 * the node layer closes its connection when its actor stops. A record
 * lives until the host closes (every connection is then closed and
 * cnats's threads waited for), so a late status never finds it freed. */
#ifndef TEND_NATS_H
#define TEND_NATS_H

#include <lua.h>
#include <stdint.h>

#include "runtime/core/host.h"
#include "runtime/tend.h" /* the options, the key-value arguments */

typedef struct tend_nats tend_nats;

/* Connects (blocks up to the timeout). Returns the record, or NULL with
 * the reason pushed. on_status: stack index of a function(status) or 0. */
tend_nats *tend_nats_connect(lua_State *L, tend_host *h,
                             const tend_nats_opts *o, int on_status);
/* Publishes (non-blocking; cnats buffers while it reconnects). Returns 0,
 * or -1 when the connection is closed. */
int tend_nats_publish(tend_nats *c, const char *subject, const char *data,
                      size_t n, const char *reply);
/* Queues data, an envelope, into the batch of the next message on subject
 * (wire.h: its length, then its bytes): envelopes queued during one pass
 * of the loop leave together, before the loop polls (at most 512 KiB a
 * message); the first of a batch ends the scheduler's run within 2000 steps,
 * so that a busy node's batches leave (and others' are read) often.
 * Returns 0, or -1 when the connection is closed. */
int tend_nats_publish_batched(tend_nats *c, const char *subject,
                              const char *data, size_t n);
/* Subscribes the function at stack index fn: fn(data, subject, reply) on
 * the loop thread, in order. Returns the id (> 0), or 0 with the reason
 * pushed. */
int tend_nats_subscribe(lua_State *L, tend_nats *c, const char *subject,
                        int fn);
void tend_nats_unsubscribe(tend_nats *c, int id);
/* "connected", "reconnecting", "closed", ... */
const char *tend_nats_status(tend_nats *c);
void tend_nats_close(tend_nats *c);
/* Closes every connection of h (the tree is gone: no actor is left to use
 * one, and an open one would keep the loop running); they are freed at
 * the host's close. */
void tend_nats_close_every(tend_host *h);

/* Starts op for the waiting actor a (its promise is made here); when it
 * is done a is woken with a table {ok, value, revision, reason, keys}.
 * Returns 0, or -1 with the reason pushed. */
int tend_nats_kv(lua_State *L, tend_nats *c, tend_actor *a,
                 const tend_kv_args *k);

/* The end of the tree and the host's close (driver.h). */
extern const tend_driver tend_nats_driver;

#endif
