/* nats: connections of this host to a NATS server (the C client,
 * libnats), the transport of nodes (lua/tend/node.lua).
 *
 * cnats runs its own threads (reader, flusher, one per subscription):
 * tend does not use cnats's libuv adapter, because its message and status
 * callbacks run on cnats's threads anyway and its synchronous calls
 * (JetStream key-value) would wait on reads that the loop thread itself
 * must make. So each callback only copies what arrived into a queue under
 * a mutex and wakes the loop (uv_async_t, unreferenced: a connection alone
 * keeps no host alive); the loop thread runs the Lua functions, protected.
 * Key-value operations run on libuv's worker threads (uv_queue_work), the
 * calling actor waiting on a promise as for an ask.
 *
 * A connection record lives until the host closes (then every connection
 * is closed and cnats's threads are waited for), so a late callback never
 * finds it freed; conn:close() only ends the connection. */
#ifndef TEND_NATS_H
#define TEND_NATS_H

#include <lua.h>
#include <stdint.h>

#include "runtime/host.h"

typedef struct tend_nats tend_nats;

/* What a connection is told to do; NULL pointers are defaults. */
typedef struct tend_nats_opts {
  const char *url;    /* nats://host:port */
  const char *name;   /* the client's name on the server */
  int64_t timeout_ms; /* connect timeout */
  int reconnect;      /* keep reconnecting forever (every 250 ms) */
} tend_nats_opts;

/* Connects (blocks up to the timeout). Returns the record, or NULL with
 * the reason pushed. on_status: stack index of a function(status) or 0. */
tend_nats *tend_nats_connect(lua_State *L, tend_host *h,
                             const tend_nats_opts *o, int on_status);
/* Publishes (non-blocking; cnats buffers while it reconnects). Returns 0,
 * or -1 when the connection is closed. */
int tend_nats_publish(tend_nats *c, const char *subject, const char *data,
                      size_t n, const char *reply);
/* Subscribes the function at stack index fn: fn(data, subject, reply) on
 * the loop thread, in order. Returns the id (> 0), or 0 with the reason
 * pushed. */
int tend_nats_subscribe(lua_State *L, tend_nats *c, const char *subject,
                        int fn);
void tend_nats_unsubscribe(tend_nats *c, int id);
/* "connected", "reconnecting", "closed", ... */
const char *tend_nats_status(tend_nats *c);
void tend_nats_close(tend_nats *c);

/* A key-value operation (JetStream). */
typedef enum tend_kv_op {
  TEND_KV_BUCKET,
  TEND_KV_GET,
  TEND_KV_CREATE,
  TEND_KV_PUT,
  TEND_KV_UPDATE,
  TEND_KV_DELETE,
  TEND_KV_KEYS
} tend_kv_op;
typedef struct tend_kv_args {
  tend_kv_op op;
  const char *bucket, *key, *value; /* value: n bytes */
  size_t n;
  uint64_t revision; /* UPDATE: the expected last revision */
  int64_t ttl_s;     /* BUCKET: MaxAge in seconds, 0 none */
} tend_kv_args;
/* Starts op for the waiting actor a (its promise is made here); when it
 * is done a is woken with a table {ok, value, revision, reason, keys}.
 * Returns 0, or -1 with the reason pushed. */
int tend_nats_kv(lua_State *L, tend_nats *c, tend_actor *a,
                 const tend_kv_args *k);

#endif
