/* tcp: TCP sockets owned by actors, on the host's libuv loop.
 *
 * A listener (tend_listener) accepts connections and hands each to its
 * actor as a message { tend = "accept", socket = <its Lua handle>, peer };
 * over max_connections live ones it closes the new one at once (counted:
 * refused), and so when the process is out of descriptors (a spare one
 * is given up to accept it; logged once per burst). A connection
 * (tend_sock) is accepted, or made by tend_tcp_connect (the caller waits,
 * as for an ask). Once started it reads frames (base/frame.h) into
 * { tend = "data", data = frame } messages to its `to` actor, sent by its
 * owner; reading pauses while `to`'s mailbox holds TEND_TCP_READ_HIGH
 * messages, until it is down to TEND_TCP_READ_LOW. Writes go out at once
 * when the kernel takes them, else are queued; a writer waits while more
 * than TEND_TCP_WRITE_HIGH bytes are queued, until TEND_TCP_WRITE_LOW.
 *
 * When a connection ends (the peer's eof, a reset, an error, a frame over
 * the bound, a close here) `to` gets { tend = "closed", reason = ... } and
 * its owner is ended: a PoisonPill when it is `to` (a handler reads its own
 * data), else its Lua handle as a message (the done token). When the owner
 * dies first, the socket closes and `to` gets closed, reason "closed".
 * The peer's eof ends only the input: `to` and the owner hear it as
 * above, but the socket can be written until it closes (half-close).
 *
 * The Lua handles ("tend.Socket", "tend.Listener" userdata holding a
 * pointer) are the API's; a record is freed once its uv handle is closed and
 * its userdata collected. While open, a record keeps its userdata in the
 * registry, so an open socket is never collected. */
#ifndef TEND_TCP_H
#define TEND_TCP_H

#include <lua.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "base/frame.h"
#include "runtime/core/host.h"

#define TEND_SOCKET_MT "tend.Socket"     /* userdata: a tend_sock * */
#define TEND_LISTENER_MT "tend.Listener" /* userdata: a tend_listener * */

/* The marks (see above): mailbox sizes for reading, queued bytes for
 * writing. */
#define TEND_TCP_READ_HIGH 1000
#define TEND_TCP_READ_LOW 500
#define TEND_TCP_WRITE_HIGH (1u << 20)
#define TEND_TCP_WRITE_LOW (256u << 10)

typedef struct tend_sock tend_sock;
typedef struct tend_listener tend_listener;

/* ------------------------------------------------------------ listeners */

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

/* ------------------------------------------------------------ connecting */

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

/* ------------------------------------------------------------ sockets */

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

/* Its deaths (an owner's sockets close) and the host's close (driver.h). */
extern const tend_driver tend_tcp_driver;

#endif
