/* tend_io.h: the face of the runtime, part two: what leaves the process:
 * trace and events, the I/O handles (the HTTP client, processes, sockets,
 * NATS) and the nodes (the codec, proxies, simulated nodes). Included by
 * runtime/tend.h only, at its end: src/api and src/cli include tend.h,
 * which gives both parts. */
#ifndef TEND_FACE_IO_H
#define TEND_FACE_IO_H

#ifndef TEND_FACE_H
#error "include runtime/tend.h, which includes this file"
#endif

#include "runtime/nodes/wire.h" /* the bytes between nodes: part of it */

/* ==== trace and events ================================================= */

/* The events, in the order of their names (tend_event_name). */
typedef enum tend_event_kind {
  TEND_EV_TRACE,       /* the trace begins (its seed) */
  TEND_EV_SPAWN,       /* an actor was created */
  TEND_EV_START,       /* its first instance took messages */
  TEND_EV_FAIL,        /* its code raised */
  TEND_EV_DIRECTIVE,   /* its supervisor decided */
  TEND_EV_RESTART,     /* a new instance took over */
  TEND_EV_BACKOFF,     /* a restart waits this delay */
  TEND_EV_RESET,       /* a backoff starts over */
  TEND_EV_GIVE_UP,     /* a backoff reached its limit */
  TEND_EV_STOP,        /* it began to stop */
  TEND_EV_TERMINATED,  /* it died */
  TEND_EV_ESCALATE,    /* a supervisor failed with its child's error */
  TEND_EV_DEAD_LETTER, /* a message reached no actor */
  TEND_EV_STASH_DROP,  /* a full stash dropped its oldest message */
  TEND_EV_CHAOS,       /* tend.chaos injected a fault */
  TEND_EV_SPAWN_OS,    /* an OS process started (pid, argv0) */
  TEND_EV_READY,       /* it is ready */
  TEND_EV_EXIT,        /* it exited (status or signal) */
  TEND_EV_NODE,        /* a node came up, went down, or a message to it
                          was dropped (lua/tend/node.lua) */
  TEND_EV_HTTP,        /* an HTTP server answered a request (method,
                          target, status, duration) */
  /* tend.stream (lua/tend/stream_run.lua; path: the stream's supervisor):
   * it began, completed, failed (kind, message, detail: the stage), was
   * cancelled (detail: why); a restart_* stage waits a delay (backoff),
   * then makes its inner stream again (restart); "resume" dropped an
   * element (drop, detail: the stage) */
  TEND_EV_STREAM_START,
  TEND_EV_STREAM_COMPLETE,
  TEND_EV_STREAM_FAIL,
  TEND_EV_STREAM_CANCEL,
  TEND_EV_STREAM_RESTART,
  TEND_EV_STREAM_BACKOFF,
  TEND_EV_STREAM_DROP,
  TEND_EV_KINDS
} tend_event_kind;

/* A field of its own an event carries after the others (a nemesis's
 * fault, target, parameters): text, or a number or a boolean written as
 * num_text ("12.5", "true"). */
typedef struct tend_event_field {
  const char *key;
  const char *text;     /* a string value, or NULL */
  const char *num_text; /* a number's or boolean's JSON text, or NULL */
} tend_event_field;

typedef struct tend_event {
  tend_event_kind ev;    /* what happened */
  tend_actor *actor;     /* where it happened, or NULL */
  const char *path;      /* its path when actor is NULL ("/deadLetters") */
  const char *kind;      /* error kind, or NULL */
  const char *message;   /* error message, or NULL */
  size_t message_len;    /* its length (NUL bytes may be in it); 0: strlen */
  const char *directive; /* directive: what was decided */
  const char *clause;    /* directive: the decider clause, "default", ... */
  int64_t window[3];     /* directive: restarts used, allowed, within (ns);
                            window[1] < 0: none; window[2] < 0: no window */
  int64_t count;         /* restart count, or -1 */
  int64_t incarnation;   /* incarnation, or -1 */
  int64_t delay_ns;      /* delay chosen, or -1 */
  double draw;           /* the random draw behind the delay, or -1 */
  const char *algorithm; /* backoff algorithm, or NULL */
  const char *reason;    /* stop, terminated: "normal", "shutdown", a kind */
  const char *to;        /* chaos: the other end of a link, or NULL */
  const char *detail;    /* a few words, or NULL */
  int64_t pid;           /* spawn_os, exit: the OS pid, or -1 */
  const char *argv0;     /* spawn_os: the program, or NULL */
  int64_t status;        /* exit: the status, or -1 */
  const char *signal;    /* exit: the signal's name, or NULL */
  const tend_event_field *fields; /* chaos: nfields more, in this order */
  int nfields;
  const char *method;  /* http: the request's method, or NULL */
  const char *target;  /* http: its path (and query), or NULL */
  int64_t duration_ns; /* http: from the request to the answer, or -1 */
} tend_event;

#define TEND_EVENT_INIT(kind, a)                                            \
  {                                                                         \
    .ev = (kind), .actor = (a), .window = {-1, -1, -1}, .count = -1,        \
    .incarnation = -1, .delay_ns = -1, .draw = -1, .pid = -1, .status = -1, \
    .duration_ns = -1                                                       \
  }

/* The name of an event in the trace ("spawn", "dead_letter", ...). */
const char *tend_event_name(tend_event_kind ev);
/* Writes e to the trace, the listeners and the log. */
void tend_event_emit(lua_State *L, tend_host *h, const tend_event *e);
/* Calls the tend.trace listeners with the events queued since. */
void tend_event_flush(lua_State *L, tend_host *h);
/* Opens the trace file (--trace); 0, or -1 with errno. */
int tend_trace_open(tend_host *h, const char *path);
/* Writes what is buffered and closes the trace file. */
void tend_trace_close(tend_host *h);
/* --trace-internal: the events of tend's own tasks are shown too. */
void tend_trace_set_internal(tend_host *h, int on);
/* tend.trace(fn): the function at idx joins the listeners. */
void tend_trace_listen(lua_State *L, tend_host *h, int idx);
/* tend.trace(on): JSON lines on stderr or not; off drops the listeners. */
void tend_trace_set_stderr(lua_State *L, tend_host *h, int on);
/* Are the events (and tree rows) of tend's own tasks shown? */
int tend_trace_shows_internal(const tend_host *h);

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
/* -- HTTP servers (H2O): io/http/server.h says how they behave */
#define TEND_HTTPD_MT "tend.HttpServer" /* userdata: a tend_httpd * */
typedef struct tend_httpd tend_httpd;
typedef struct tend_httpd_spec {
  const char *host;               /* an address, or a name resolved at once */
  int port;                       /* 0: a free one */
  int max_connections;            /* > 0 */
  size_t max_body;                /* request bodies, bytes */
  uint64_t timeout_ms;            /* a request's head; idle keep-alive */
  const char *tls_cert, *tls_key; /* PEM files: HTTPS (NULL: plain) */
} tend_httpd_spec;
/* Binds and listens for the actor (id, gen); NULL with a message pushed
 * ("host:port: why", or "tls.cert: why" / "tls.key: why"). */
tend_httpd *tend_httpd_listen(lua_State *L, tend_host *h,
                              const tend_httpd_spec *spec, uint32_t id,
                              uint32_t gen);
/* The Lua handle of s (stack index ud): kept while s is open. */
void tend_httpd_set_handle(lua_State *L, tend_httpd *s, int ud);
int tend_httpd_port(const tend_httpd *s);
uint64_t tend_httpd_refused(const tend_httpd *s);
int tend_httpd_connections(const tend_httpd *s);
/* Answers request id (status, the headers table at hidx or 0, or
 * TEND_HTTPD_PLAIN: text/plain alone, body); 1 when sent, 0 when gone. */
#define TEND_HTTPD_PLAIN INT_MIN
int tend_httpd_respond(lua_State *L, tend_httpd *s, int64_t id, int status,
                       int hidx, const char *body, size_t len);
/* Starts a streamed answer to request id: status, the headers table at
 * hidx (0: none); its head goes out now. (actor_id, actor_gen) is told
 * { tend = "http_more", id } each time H2O has sent what it was given and
 * wants more; the owner { tend = "http_gone", id } when the client went
 * away first. 1 when started, 0 when the request is gone. */
int tend_httpd_stream(lua_State *L, tend_httpd *s, int64_t id, int status,
                      int hidx, uint32_t actor_id, uint32_t actor_gen);
/* The next chunk of a streamed answer (only after "http_more"; raises
 * otherwise); end 1: the last (data may be empty), 2: ends it short (an
 * error: the client sees a cut body). 1 when sent, 0 when it is gone. */
int tend_httpd_stream_send(lua_State *L, tend_httpd *s, int64_t id,
                           const char *data, size_t len, int end);
/* WebSocket (ws.c): upgrades request id (a handshake) to a connection of
 * the actor: > 0 its id; 0 the request is gone; -1 not a handshake. */
int64_t tend_httpd_ws_upgrade(tend_httpd *s, int64_t id, uint32_t actor_id,
                              uint32_t actor_gen);
/* Queues a message (binary or text); the bytes still queued after what
 * the socket took, or -1 when the connection is gone. */
int64_t tend_httpd_ws_send(lua_State *L, tend_httpd *s, int64_t wid,
                           const char *data, size_t len, int binary);
/* The bytes queued on it, or -1 when gone. */
int64_t tend_httpd_ws_queued(tend_httpd *s, int64_t wid);
/* Sends a close frame with code; 0 when gone. */
int tend_httpd_ws_close(lua_State *L, tend_httpd *s, int64_t wid, int code);
/* Stops listening, answers what is pending 503, ends its connections. */
void tend_httpd_close(tend_httpd *s);
/* Its userdata was collected: closes it; freed when unused. */
void tend_httpd_release(tend_httpd *s);
/* "http port=N" for the server a owns (ps, tree); 0, or -1 when none. */
int tend_httpd_describe(tend_host *h, const tend_actor *a, char *buf,
                        size_t size);
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
/* -- OS processes */
/* Where an output stream goes. */
typedef enum tend_output {
  TEND_OUT_LINES,   /* {tend = "stdout", line = ...} per line to `to` */
  TEND_OUT_CHUNKS,  /* {tend = "stdout", chunk = ...} per read to `to` */
  TEND_OUT_LOG,     /* a log line with the owner's path per line */
  TEND_OUT_COLLECT, /* kept whole (tend.process.run) */
  TEND_OUT_INHERIT, /* tend's own stdout / stderr */
  TEND_OUT_NULL,    /* /dev/null */
  TEND_OUT_FILE,    /* appended to a file */
  TEND_OUT_PASS     /* each line to tend's own stdout / stderr (the
                       default of a process actor without `to`) */
} tend_output;

/* What a wait ended with. */
typedef enum tend_process_event {
  TEND_PROCESS_TIMEOUT = 0, /* time ran out */
  TEND_PROCESS_EXITED = 1,  /* the program exited; its pipes are drained */
  TEND_PROCESS_READY = 2    /* the ready condition holds */
} tend_process_event;

/* The program to run, checked by the API. */
typedef struct tend_process_spec {
  const char *path;        /* resolved executable */
  const char *const *argv; /* argv (NULL-ended), argv[0] as given */
  char **env;              /* "K=V" (NULL-ended), or NULL: tend's own */
  const char *cwd;         /* or NULL */
  int stdin_pipe;          /* 1: a pipe; 0: /dev/null */
  tend_output out[2];      /* stdout, stderr */
  const char *file[2];     /* their files for TEND_OUT_FILE */
  int group;               /* 1: own process group; signals go to it */
  const char *ready_line;  /* Lua pattern on stdout, or NULL */
  int ready_tcp;           /* port that must accept a connection, or 0 */
} tend_process_spec;

typedef struct tend_process tend_process;
/* Spawns spec for owner, output to (to_id, to_gen) (0: none). Returns the
 * record, or NULL with a negative errno in *err (nothing left behind). */
tend_process *tend_process_spawn(lua_State *L, tend_host *h, tend_actor *owner,
                                 uint32_t to_id, uint32_t to_gen,
                                 const tend_process_spec *spec, int *err);
/* The Lua handle of p (stack index handle) is its exit token: kept in the
 * registry while the program runs (owned by p), sent to the owner. */
void tend_process_set_token(lua_State *L, tend_process *p, int handle);
/* The Lua side let go of p (its userdata is collected): a running program
 * is killed; p is freed once its handles are closed. */
void tend_process_release(tend_process *p);
int tend_process_pid(const tend_process *p);
/* 1 once the exit is known and the pipes drained. */
int tend_process_done(const tend_process *p);
/* Exit status (or -1) and signal number (or 0), once done. */
void tend_process_status(const tend_process *p, int64_t *status, int *signal);
/* 1 when it dumped core (WCOREDUMP). */
int tend_process_core_dump(const tend_process *p);
int tend_process_is_ready(const tend_process *p);
/* Marks p ready (the API decided: ready.after, or no condition); emits
 * the `ready` event once. */
void tend_process_mark_ready(lua_State *L, tend_process *p);
/* Sends signum to the program (its group when it has one). Returns 0 or a
 * negative errno; 0 when it is gone already. */
int tend_process_signal(tend_process *p, int signum);
/* Writes n bytes to its stdin (copied). 0, or a libuv error. */
int tend_process_write(tend_process *p, const char *data, size_t n);
/* Closes its stdin (EOF for the program). */
void tend_process_close_stdin(tend_process *p);
/* Pushes what was collected from stream i (0 stdout, 1 stderr). */
void tend_process_push_collected(lua_State *L, const tend_process *p, int i);
/* The current actor a waits for p: exit (or, with for_ready, readiness)
 * or timeout_ns (< 0: none). Arms the wait (a promise); the caller then
 * yields with tend_sched_wait(TEND_WAIT_ASK). Returns 1 when the event
 * has happened already (no wait armed). */
int tend_process_wait(lua_State *L, tend_host *h, tend_actor *a,
                      tend_process *p, int for_ready, int64_t timeout_ns,
                      const char *fn);
/* a's running process (the first), or NULL. */
tend_process *tend_process_of(const tend_host *h, const tend_actor *a);
/* The pid of a's process (0 when a owns none): tend.ps. */
int tend_process_pid_of(const tend_host *h, const tend_actor *a);

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
/* -- simulated nodes (tend.sim): the world steps hosts of their own */
/* A node's state in the world. */
typedef enum tend_simnode_state {
  TEND_SIMNODE_UP,      /* its host runs */
  TEND_SIMNODE_CRASHED, /* closed abruptly (tend.chaos.crash_node) */
  TEND_SIMNODE_ENDED    /* its tree stopped (tend.shutdown there, or the
                           world stopping the nodes) */
} tend_simnode_state;
/* The results of the key-value store (JetStream's, for tend.global). */
typedef enum tend_simkv_result {
  TEND_SIMKV_OK,
  TEND_SIMKV_NONE,   /* get: no such key */
  TEND_SIMKV_EXISTS, /* create: the key is there */
  TEND_SIMKV_WRONG,  /* update: another revision */
  TEND_SIMKV_NOMEM
} tend_simkv_result;
/* Adds node `name` (copied) run by host `node` (opened with cfg.world =
 * world; node == world: the world itself takes part as a node). A name
 * that is already there takes the new host as its next incarnation.
 * Returns the node's incarnation (1, 2, ...), or 0 when out of memory. */
uint64_t tend_sim_add(tend_host *world, const char *name, tend_host *node);
/* The node named `name` in world, or -1. */
int tend_sim_find(const tend_host *world, const char *name);
/* Its state, name and incarnation (i from tend_sim_find). */
tend_simnode_state tend_sim_state(const tend_host *world, int i);
uint64_t tend_sim_inc(const tend_host *world, int i);
/* How many nodes (every state); their names by index. */
int tend_sim_count(const tend_host *world);
const char *tend_sim_name(const tend_host *world, int i);
/* The function (at stack index fn of h->L's stack in L) that takes h's
 * deliveries: fn(subject, data). Kept in h's registry. */
void tend_sim_set_dispatch(lua_State *L, tend_host *h, int fn);
/* h (a node) publishes data on subject. */
void tend_sim_publish(tend_host *h, const char *subject, const char *data,
                      size_t len);
/* Node i crashes: its host closes at once (no post_stop runs). */
void tend_sim_crash(tend_host *world, int i);
/* Every node's tree is asked to stop (tend.shutdown there); the world's
 * own node part is left to the caller. */
void tend_sim_stop_all(tend_host *world);
/* The link between nodes i and j (both directions): cut (1: partitioned,
 * -1: unchanged) and latency + jitter in ns (-1: unchanged). */
void tend_sim_link(tend_host *world, int i, int j, int cut, int64_t latency,
                   int64_t jitter);
/* Every link as new: no partition, no latency. */
void tend_sim_heal(tend_host *world);
/* The key-value store (JetStream's, for tend.global). A bucket keeps an
 * entry ttl ns after its last write (0: for ever). Revisions count up
 * from 1 across the store. */
tend_simkv_result tend_simkv_bucket(tend_host *world, const char *bucket,
                                    int64_t ttl);
/* get: *value (borrowed until the next call) and *rev. */
tend_simkv_result tend_simkv_get(tend_host *world, const char *bucket,
                                 const char *key, const char **value,
                                 size_t *len, uint64_t *rev);
/* op: 'c' create, 'u' update (at revision rev), 'p' put; *rev: the new
 * revision. */
tend_simkv_result tend_simkv_write(tend_host *world, char op,
                                   const char *bucket, const char *key,
                                   const char *value, size_t len,
                                   uint64_t *rev);
void tend_simkv_delete(tend_host *world, const char *bucket, const char *key);
/* Pushes the live keys of bucket, sorted, as a list. */
void tend_simkv_push_keys(lua_State *L, tend_host *world, const char *bucket);

/* -- schedulers (runtime/nodes/schedulers.h): several in one process */
/* Adds schedulers 1..n-1 beside h; 0, or -1 said on stderr. */
int tend_schedulers_open(tend_host *h, int n);
int tend_schedulers_count(const tend_host *h); /* 1 when only one */
int tend_schedulers_index(const tend_host *h); /* which one h is */
/* Takes /user/<the name at stack index name> for h's scheduler, or raises
 * (naming fn) when it is taken on another (names are unique across the
 * schedulers; given back when the actor dies). */
void tend_schedulers_claim_name(lua_State *L, tend_host *h, int name,
                                const char *fn);
/* Registered names across schedulers (tend.register): a gives its
 * scheduler the name (copied); returns -1, or the scheduler that has it
 * already. */
int tend_schedulers_reg_claim(lua_State *L, tend_host *h, tend_actor *a,
                              const char *name);
/* The name goes (when h's scheduler has it). */
void tend_schedulers_reg_release(tend_host *h, const char *name);
/* Process groups across schedulers (tend.pg; the group as a key string
 * made by lua/tend/pg.lua): a, an actor of h's scheduler, joins or leaves
 * key; pg_push pushes a list of {scheduler, ref} of the other schedulers'
 * members of key (refs as proxies), in scheduler then join order. */
void tend_schedulers_pg_join(lua_State *L, tend_host *h, const char *key,
                             tend_actor *a);
void tend_schedulers_pg_leave(tend_host *h, const char *key, tend_actor *a);
void tend_schedulers_pg_push(lua_State *L, tend_host *h, const char *key);
/* a (a child of /user, named) is spawned: its name, claimed before, now
 * leads to it from the other schedulers (tend.whereis("/user/x")). */
void tend_schedulers_bind_name(lua_State *L, tend_host *h, tend_actor *a);
/* Pushes a ref (a proxy) to the actor of another scheduler registered as
 * name, or whose path name is ("/user/x": a child of /user), and returns
 * 1, or pushes nothing and returns 0. */
int tend_schedulers_reg_push(lua_State *L, tend_host *h, const char *name);
/* Appends to the list at the top the names other schedulers registered. */
void tend_schedulers_reg_names(lua_State *L, tend_host *h);
/* 1 when the schedulers run on threads of their own (the real clock). */
/* The running actor adopts the proxy at stack index idx (a ref to an actor
 * of another scheduler): its stop and restart then wait for that actor's
 * end (a child on another scheduler's stand-in, lua/tend/away.lua).
 * Raises naming fn unless it is such a proxy, alive and not adopted. */
void tend_schedulers_adopt(lua_State *L, tend_host *h, int idx, const char *fn);
int tend_schedulers_threaded(const tend_host *h);
/* Real clock: asks scheduler k to spawn (as tend_schedulers_spawn); the
 * answer, {ref = ...} or {error = "..."}, goes to the pending ask
 * (ask_id, ask_gen). Raises naming fn when it cannot be asked. */
void tend_schedulers_spawn_request(lua_State *L, tend_host *h, int k,
                                   int factory, const tend_spawn_opts *o,
                                   uint32_t ask_id, uint32_t ask_gen,
                                   const char *fn);
/* A question to another scheduler k about itself: q, a C function of the
 * api taking nothing and returning one value, runs in k's own state.
 * Virtual clock: at once; pushes its result (copied with the codec, refs
 * as proxies here), raises naming fn. Real clock: posted; the answer,
 * {value = ...} or {error = "..."}, goes to the pending ask (ask_id,
 * ask_gen); -1 when k is stopping. */
void tend_schedulers_query_now(lua_State *L, tend_host *h, int k,
                               lua_CFunction q, const char *fn);
int tend_schedulers_query_request(tend_host *h, int k, lua_CFunction q,
                                  uint32_t ask_id, uint32_t ask_gen);
/* The scheduler with the fewest live actors (the lowest index of those). */
int tend_schedulers_least_loaded(const tend_host *h);
/* Spawns "module.field" (string at factory) under /user of scheduler k
 * with o's args and name (stack indexes, 0: none) and restart (temporary
 * or not); pushes its ref (a proxy here). Raises naming fn. */
void tend_schedulers_spawn(lua_State *L, tend_host *h, int k, int factory,
                           const tend_spawn_opts *o, const char *fn);

#endif
