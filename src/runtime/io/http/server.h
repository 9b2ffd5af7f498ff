/* server: HTTP servers on H2O (Debian's libh2o, its libuv build) run on the
 * host's own loop: HTTP/1.1 and HTTP/2 (with prior knowledge), parsed by
 * H2O, never here.
 *
 * A server (tend_httpd) listens on host:port for an owner actor. Over
 * max_connections live connections a new one is closed at once (counted:
 * refused). Each request H2O has read whole (its body up to max_body;
 * beyond it H2O answers 413 itself) is sent to the owner as
 * { tend = "http", id, method, path, query, req = { method, path, query,
 * headers, body, peer, version, scheme } } (path without the query string;
 * query raw, or nil, req.query decoded; header names in lower case, a
 * repeated one joined with ", "); tend_httpd_respond answers
 * it by its id. A request whose client went away before the answer is
 * disposed by H2O: a callback on its pool forgets the id, so an answer
 * then is a no-op, and C never touches a freed request.
 *
 * The server closes when its owner dies, when asked (tend_httpd_close) and
 * at the host's close: it stops listening, answers what is pending with
 * 503, and ends its open connections (their sockets shut down: H2O reads
 * the end and closes them). H2O's context is disposed once the last one
 * closed; the record is freed when that is done and its Lua handle was
 * collected. */
#ifndef TEND_HTTP_SERVER_H
#define TEND_HTTP_SERVER_H

#include <lua.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/core/host.h"
#include "runtime/tend.h" /* tend_httpd, tend_httpd_spec, TEND_HTTPD_MT */

/* Binds and listens for the actor (id, gen). Returns the record, or NULL
 * with a message pushed ("host:port: why"). */
tend_httpd *tend_httpd_listen(lua_State *L, tend_host *h,
                              const tend_httpd_spec *spec, uint32_t id,
                              uint32_t gen);
/* The Lua handle of s (stack index ud): kept while s is open. */
void tend_httpd_set_handle(lua_State *L, tend_httpd *s, int ud);
int tend_httpd_port(const tend_httpd *s);
/* Connections closed at once (over max_connections). */
uint64_t tend_httpd_refused(const tend_httpd *s);
/* Connections open now. */
int tend_httpd_connections(const tend_httpd *s);
/* Answers request id with status, the headers of the table at index hidx
 * (name = value strings; 0: none; TEND_HTTPD_PLAIN: content-type
 * text/plain; charset=utf-8 alone) and body. Returns 1 when sent, 0 when
 * the request is gone (answered, its client left, the server closed). */
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
/* Stops: see above. Idempotent. */
void tend_httpd_close(tend_httpd *s);
/* Its userdata was collected: closes it; freed when unused. */
void tend_httpd_release(tend_httpd *s);

/* What the server a owns is, for ps and tree: "http port=N". 0, or -1
 * when a owns none. */
int tend_httpd_describe(tend_host *h, const tend_actor *a, char *buf,
                        size_t size);

/* Its owners' deaths and the host's close (driver.h). */
extern const tend_driver tend_httpd_driver;

#endif
