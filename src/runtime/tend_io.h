/* tend_io.h: the face of the runtime, part two: the I/O handles (the
 * HTTP client, processes, sockets, NATS) and the nodes (the codec,
 * proxies, simulated nodes). Included by runtime/tend.h only, at its end:
 * src/api and src/cli include tend.h, which gives both parts. */
#ifndef TEND_FACE_IO_H
#define TEND_FACE_IO_H

#ifndef TEND_FACE_H
#error "include runtime/tend.h, which includes this file"
#endif

/* ==== I/O handles ====================================================== */

/* -- HTTP client requests (curl): what to send, checked by the API */
typedef struct tend_http_spec {
  const char *method;         /* "GET", "POST", ... (upper case) */
  const char *url;            /* http:// or https:// */
  const char *const *headers; /* "Name: value" lines (NULL-ended) */
  const char *body;           /* or NULL */
  size_t body_len;            /* its length */
  int64_t timeout_ms;         /* whole request, > 0 */
  size_t max_body;            /* response body bound, > 0 */
} tend_http_spec;
typedef struct tend_http_req tend_http_req;

/* Starts spec for the current actor a, which then waits (TEND_WAIT_ASK);
 * sets *slot first. NULL with a message pushed when it cannot. */
tend_http_req *tend_http_start(lua_State *L, tend_host *h, tend_actor *a,
                               const tend_http_spec *spec,
                               tend_http_req **slot);
/* Why r failed, or NULL when it has a response (in flight: abandoned). */
const char *tend_http_error(tend_http_req *r);
/* Pushes the response of r {status, headers, body} (read once). */
void tend_http_push_response(lua_State *L, tend_http_req *r);
/* The Lua side let go of r: in flight, it is abandoned; then freed. */
void tend_http_release(tend_http_req *r);
/* How many requests are in flight now. */
int tend_http_in_flight(const tend_host *h);
/* -- NATS connections (cnats) */
typedef struct tend_nats tend_nats;
/* What a connection is told to do; NULL pointers are defaults. */
typedef struct tend_nats_opts {
  const char *url;    /* nats://host:port */
  const char *name;   /* the client's name on the server */
  int64_t timeout_ms; /* connect timeout */
  int reconnect;      /* keep reconnecting forever (every 250 ms) */
} tend_nats_opts;

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
/* Connects (blocks up to the timeout). Returns the record, or NULL with
 * the reason pushed. on_status: stack index of a function(status) or 0. */
tend_nats *tend_nats_connect(lua_State *L, tend_host *h,
                             const tend_nats_opts *o, int on_status);
/* Publishes (non-blocking; cnats buffers while it reconnects). Returns 0,
 * or -1 when the connection is closed. */
int tend_nats_publish(tend_nats *c, const char *subject, const char *data,
                      size_t n, const char *reply);
/* Queues data as one frame (a 4-byte big-endian length, then the bytes)
 * of the next message on subject: frames queued during one pass of the
 * loop leave together, before the loop polls (at most 512 KiB a message);
 * the first frame of a batch ends the scheduler's run within 2000 steps,
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
/* Starts op for the waiting actor a (its promise is made here); when it
 * is done a is woken with a table {ok, value, revision, reason, keys}.
 * Returns 0, or -1 with the reason pushed. */
int tend_nats_kv(lua_State *L, tend_nats *c, tend_actor *a,
                 const tend_kv_args *k);
/* -- TCP sockets and listeners (libuv) */
#define TEND_SOCKET_MT "tend.Socket"     /* userdata: a tend_sock * */
#define TEND_LISTENER_MT "tend.Listener" /* userdata: a tend_listener * */
typedef struct tend_sock tend_sock;
typedef struct tend_listener tend_listener;
/* Binds host:port (port 0: a free one) and listens, for the actor
 * (id, gen). host is an address or a name (resolved at once, blocking).
 * Returns the record, or NULL with a message pushed (what failed). */
tend_listener *tend_tcp_listen(lua_State *L, tend_host *h, const char *host,
                               int port, int backlog, int max_connections,
                               uint32_t id, uint32_t gen);
/* The Lua handle of l (stack index ud): kept while l is open. */
void tend_tcp_listener_set_handle(lua_State *L, tend_listener *l, int ud);
int tend_tcp_listener_port(const tend_listener *l);
uint64_t tend_tcp_listener_refused(const tend_listener *l);
/* Stops listening; connections not yet started close too. Idempotent. */
void tend_tcp_listener_close(tend_listener *l);
/* Its userdata was collected: closes it; freed when unused. */
void tend_tcp_listener_release(tend_listener *l);
/* Starts connecting to host:port (an address, or a name resolved with
 * uv_getaddrinfo) for the current actor a, which then waits with
 * tend_sched_wait(TEND_WAIT_ASK) for at most timeout_ns (a promise whose
 * wake value is 1 when connected, 0 when it failed). Returns the record,
 * or NULL with a message pushed. */
tend_sock *tend_tcp_connect(lua_State *L, tend_host *h, tend_actor *a,
                            const char *host, int port, int64_t timeout_ns);
/* Why a connect failed ("connection refused", "timed out", "host not
 * found", ...); or NULL when it succeeded. */
const char *tend_tcp_connect_error(const tend_sock *s);
/* The wait ended without an answer (timed out): the attempt is abandoned
 * (its error says "timed out"). */
void tend_tcp_connect_abandon(tend_sock *s);
/* The Lua handle of s (stack index ud): kept while s is open. */
void tend_tcp_set_handle(lua_State *L, tend_sock *s, int ud);
/* Starts reading: frames to (to_id, to_gen), sent by the owner (owner_id,
 * owner_gen), which the socket's end ends. Returns 0, or a libuv error. */
int tend_tcp_start(tend_sock *s, uint32_t owner_id, uint32_t owner_gen,
                   uint32_t to_id, uint32_t to_gen, tend_framing framing,
                   size_t max_line);
/* Writes data framed (also after the peer's eof, until s closes).
 * Returns 0 (sent or queued), 1 when the queue is
 * now over TEND_TCP_WRITE_HIGH (the caller should wait: tend_tcp_wait),
 * or a negative libuv error (UV_ENOTCONN when closed). */
int tend_tcp_write(tend_sock *s, const char *data, size_t n);
/* The current actor a waits until the queue is down to TEND_TCP_WRITE_LOW
 * or s ends (a promise; the caller yields). Returns 0 when armed, 1 when
 * there is nothing to wait for, -1 when another actor already waits. */
int tend_tcp_wait_drain(lua_State *L, tend_host *h, tend_actor *a,
                        tend_sock *s);
/* Closes: queued writes go out first. `to` gets closed, reason "closed".
 * Idempotent. */
void tend_tcp_close(tend_sock *s);
/* Closes abortively (RST): the peer sees a reset; `to` gets reason
 * "reset". */
void tend_tcp_reset(tend_sock *s);
int tend_tcp_is_closed(const tend_sock *s);
/* Writes "address:port" of the peer into buf; 0 or a libuv error. */
int tend_tcp_peer(const tend_sock *s, char *buf, size_t size);
/* Its userdata was collected: closes it; freed when unused. */
void tend_tcp_release(tend_sock *s);
/* What the socket a owns is, for ps and tree: "peer=address:port" for a
 * connection, "port=N" for a listener. 0, or -1 when a owns none. */
int tend_tcp_describe(tend_host *h, const tend_actor *a, char *buf,
                      size_t size);

/* ==== nodes ============================================================ */

/* The codec of messages that leave the process (msgpack). */
#define TEND_CODEC_LIMIT (1u << 20) /* default size limit: NATS max_payload */
#define TEND_CODEC_EXT_REF 1        /* msgpack ext type of a ref */
typedef enum tend_codec_status {
  TEND_CODEC_OK = 0,
  TEND_CODEC_NOT_SERIALIZABLE, /* a value that cannot leave the node */
  TEND_CODEC_TOO_LARGE,        /* over the size limit */
  TEND_CODEC_BAD_MESSAGE       /* bytes that are not one encoded value */
} tend_codec_status;

/* Encodes the value at idx: pushes the bytes and returns TEND_CODEC_OK, or
 * pushes a message and returns why not. */
tend_codec_status tend_codec_encode(lua_State *L, tend_host *h, int idx,
                                    size_t limit);
/* Decodes n bytes: pushes the value and returns TEND_CODEC_OK, or pushes a
 * message and returns TEND_CODEC_BAD_MESSAGE. */
tend_codec_status tend_codec_decode(lua_State *L, tend_host *h,
                                    const char *data, size_t n);

/* A message v from (sid, sgen) to the proxy p leaves for its node (v
 * consumed). */
typedef void (*tend_remote_send_fn)(lua_State *L, tend_host *h, tend_actor *p,
                                    tend_value *v, uint32_t sid, uint32_t sgen);
/* This host is node name (n bytes, copied), incarnation inc; -1 when
 * memory is out (nothing changed). */
int tend_node_set_identity(tend_host *h, const char *name, size_t n,
                           uint64_t inc);
/* The node layer's hooks: the router and the ref maker at stack indexes
 * send and decode (kept, replacing earlier ones), and fn, called for
 * every message to a proxy. */
void tend_node_set_hooks(lua_State *L, tend_host *h, int send, int decode,
                         tend_remote_send_fn fn);
/* Pushes the router set by tend_node_set_hooks. */
void tend_node_push_router(lua_State *L, const tend_host *h);
/* A new proxy for the six values node, inc, id, gen, path, kind at stack
 * indices node..; pushes its ref. Raises when ids run out. */
tend_actor *tend_remote_new(lua_State *L, tend_host *h, int node);
/* The proxy p ends: its watchers see, its held asks fail with, the value
 * at stack index reason. */
void tend_remote_end(lua_State *L, tend_host *h, tend_actor *p, int reason);
/* The proxy p's node is not connected: watchers and held asks get the
 * value at reason; p is disconnected until reconnected. */
void tend_remote_disconnect(lua_State *L, tend_host *h, tend_actor *p,
                            int reason);
/* The proxy p's node is connected again (same incarnation). */
void tend_remote_reconnect(tend_actor *p);
/* Pushes the coordinates table of the proxy p (nil when it has none). */
void tend_remote_push_coords(lua_State *L, tend_host *h, tend_actor *p);

#endif
