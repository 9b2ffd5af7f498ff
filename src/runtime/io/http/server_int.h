/* server_int: what the files of the HTTP server share (server.c: listening,
 * requests, whole answers; body.c: streamed answers). Not for other
 * layers: server.h is the interface. */
#ifndef TEND_HTTP_SERVER_INT_H
#define TEND_HTTP_SERVER_INT_H

#define H2O_USE_LIBUV 1
#include <h2o.h>

#include "base/slots.h"
#include "runtime/io/http/server.h"

/* The handler H2O calls for every request: it knows its server. */
typedef struct httpd_handler {
  h2o_handler_t super;
  tend_httpd *srv;
} httpd_handler;

/* A connection H2O runs: the uv handle it was given (first: the close
 * callback gets it), in its server's list. */
typedef struct httpd_conn {
  uv_tcp_t tcp;
  tend_httpd *srv;
  struct httpd_conn *prev, *next;
} httpd_conn;

/* A request waiting for its answer, or streaming it: allocated in the
 * request's pool, so H2O frees it with the request (after dispose, which
 * forgets it). */
typedef struct httpd_req {
  h2o_req_t *req;
  tend_httpd *srv; /* NULL once answered (whole or to its end) or forgotten */
  uint32_t id;     /* its slot in srv->reqs */
  /* a streamed answer (body.c) */
  h2o_generator_t gen;
  uint32_t actor_id, actor_gen; /* told { tend = "http_more", id } */
  char *chunk;                  /* in flight (H2O holds it until proceed) */
  uint8_t streaming;            /* 1: its head is sent, its body goes on */
  uint8_t in_flight;            /* 1: a chunk is sent, proceed not yet */
  uint8_t more;                 /* 1: proceed came inside h2o_send */
  uint8_t aborted;              /* 1: end it (an error) at the next proceed */
} httpd_req;

/* Peer strings kept per connection (by H2O's connection id, direct
 * mapped): a keep-alive connection's requests share one. */
#define TEND_HTTPD_PEERS 256

struct tend_httpd {
  h2o_globalconf_t config;
  h2o_context_t ctx;
  h2o_accept_ctx_t accept;
  uv_tcp_t listener;
  uv_idle_t reaper;      /* frees s once H2O's context closed (server.c) */
  uv_prepare_t ws_drain; /* resumes paused WebSocket connections (ws.c) */
  struct httpd_ws *ws_paused;
  tend_host *h;
  tend_httpd *prev, *next; /* in h->httpd while open */
  uint32_t owner_id, owner_gen;
  int port;
  int max_connections;
  int live;         /* connections open (in conns) */
  uint64_t refused; /* closed at once: over max_connections */
  httpd_conn *conns;
  tend_slots reqs; /* id -> httpd_req * waiting */
  tend_slots wss;  /* id -> httpd_ws *: WebSocket connections (ws.c) */
  int ud_ref;
  int request_ref; /* request_p, its upvalues the field names and peers:
                      slot -> the peer string of peer_conn[slot - 1] */
  uint64_t peer_conn[TEND_HTTPD_PEERS]; /* H2O's connection ids (0: none) */
  uint8_t open;                         /* 1: listening, taking requests */
  uint8_t listener_open; /* 1: the listener's handle is not closed yet */
  uint8_t ctx_live;      /* 1: H2O's context not disposed, or its timers
                            not closed yet */
  uint8_t ctx_closing;   /* 1: disposed, its timers closing */
  uint8_t lua_gone;      /* 1: its userdata was collected */
  uint8_t in_send;       /* 1: inside h2o_send (body.c): tell nothing now */
  lua_State *in_L;       /* inside a WebSocket flush from Lua (ws.c) */
};

/* Request id as Lua sees it: the slot's generation above its index. */
int64_t tend_httpd_req_id(const tend_httpd *s, const httpd_req *r);
/* The request of id, waiting or streaming; NULL when gone. */
httpd_req *tend_httpd_req(tend_httpd *s, int64_t id);
/* request.c: pushes the function that sends the owner a request's message
 * (on_req calls it with s and the httpd_req, in a protected call). */
void tend_httpd_push_request_fn(lua_State *L);
/* Sends { tend = ev, id = id } to (aid, agen) from the server's owner: on
 * L inside a Lua call, or (L NULL: a uv callback) in a protected call on
 * the host's state. */
void tend_httpd_tell(lua_State *L, tend_httpd *s, const char *ev, int64_t id,
                     uint32_t aid, uint32_t agen);
/* Adds the string pairs of the table at hidx to req's response headers. */
void tend_httpd_add_headers(lua_State *L, h2o_req_t *req, int hidx);
const char *tend_httpd_reason(int status);
/* ws.c: a WebSocket connection. Its reading pauses while its actor's
 * mailbox holds HIGH messages, until it is down to LOW (as TCP's). */
typedef struct httpd_ws httpd_ws;
#define TEND_HTTPD_WS_READ_HIGH 1000
#define TEND_HTTPD_WS_READ_LOW 500
/* 1 when req is a WebSocket handshake H2O can take (HTTP/1.1). */
int tend_httpd_is_ws(h2o_req_t *req);
/* Ends the connections of the actor (all: every one). */
void tend_httpd_ws_end_all(tend_httpd *s, uint32_t actor_id, uint32_t actor_gen,
                           int all);
/* tls.c: an OpenSSL server context for the PEM files cert and key, or
 * NULL with "tls.cert: why" / "tls.key: why" pushed. */
SSL_CTX *tend_httpd_tls(lua_State *L, const char *cert, const char *key);
/* body.c: a request going away mid-stream, and the server closing. */
void tend_httpd_stream_disposed(httpd_req *r);
void tend_httpd_stream_abort(httpd_req *r);

#endif
