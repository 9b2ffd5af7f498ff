/* ws: WebSocket connections of the HTTP server (see server.h), on H2O's
 * websocket support (wslay frames them).
 *
 * tend_httpd_ws_upgrade answers a handshake request with 101 and makes the
 * connection one of the actor (actor_id, actor_gen): each text or binary
 * message is sent to it as { tend = "ws", data, binary }, and once, at
 * the end, { tend = "closed", code, reason } (the peer's close frame's
 * code and reason; 1006 and "" when the connection just ended). ping is
 * answered by wslay; a close frame is answered and the socket closed, and
 * the actor then stops (a PoisonPill after "closed"). An actor that dies
 * closes its connection; so does the server closing.
 *
 * Back-pressure, as for TCP connections: once a message leaves the actor's
 * mailbox at TEND_HTTPD_WS_READ_HIGH messages, the socket is no longer
 * read (what one read already brought is still delivered) until the
 * mailbox is down to TEND_HTTPD_WS_READ_LOW; the client's sends then wait
 * on its socket. */
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/core/actor.h"
#include "runtime/core/send.h"
#include "runtime/io/http/server_int.h"

#include <h2o/websocket.h>

struct httpd_ws {
  h2o_websocket_conn_t *conn; /* NULL once closed */
  tend_httpd *srv;
  uint32_t id; /* its slot in srv->wss */
  uint32_t actor_id, actor_gen;
  int code;         /* of the peer's close frame; 1006: none */
  char reason[124]; /* of the peer's close frame */
  uint8_t dead;     /* ended inside a call from Lua: told after it */
  uint8_t paused;   /* 1: not read, in srv->ws_paused, until its actor drains */
  httpd_ws *paused_next;
};

typedef struct ws_msg {
  httpd_ws *w;
  const struct wslay_event_on_msg_recv_arg *arg; /* NULL: closed */
} ws_msg;

static int tell_p(lua_State *L) {
  const ws_msg *m = lua_touserdata(L, -1);
  httpd_ws *w = m->w;
  if (m->arg) {
    lua_createtable(L, 0, 3);
    lua_pushliteral(L, "ws");
    lua_setfield(L, -2, "tend");
    lua_pushlstring(L, (const char *)m->arg->msg, m->arg->msg_length);
    lua_setfield(L, -2, "data");
    lua_pushboolean(L, m->arg->opcode == WSLAY_BINARY_FRAME);
    lua_setfield(L, -2, "binary");
  } else {
    lua_createtable(L, 0, 3);
    lua_pushliteral(L, "closed");
    lua_setfield(L, -2, "tend");
    lua_pushinteger(L, w->code);
    lua_setfield(L, -2, "code");
    lua_pushstring(L, w->reason);
    lua_setfield(L, -2, "reason");
  }
  tend_actor_send(L, w->srv->h, w->actor_id, w->actor_gen, -1, w->srv->owner_id,
                  w->srv->owner_gen);
  lua_pop(L, 2);
  return 0;
}

/* Tells the actor: on L inside a Lua call, else in a protected call. */
static void tell(lua_State *L, httpd_ws *w,
                 const struct wslay_event_on_msg_recv_arg *arg) {
  ws_msg m = {w, arg};
  if (L) {
    lua_pushlightuserdata(L, &m);
    tell_p(L);
    return;
  }
  L = w->srv->h->L;
  if (L == NULL) return;
  lua_pushcfunction(L, tell_p);
  lua_pushlightuserdata(L, &m);
  if (lua_pcall(L, 1, 0, 0) != LUA_OK) lua_pop(L, 1);
  tend_host_poke(w->srv->h);
}

/* Ends w: its socket closed (H2O frees the connection), the actor told
 * when told is set (on L, or NULL from a uv callback), the record freed. */
static void unpause(httpd_ws *w) {
  httpd_ws **p = &w->srv->ws_paused;
  while (*p && *p != w) p = &(*p)->paused_next;
  if (*p) *p = w->paused_next;
  w->paused_next = NULL;
  w->paused = 0;
}

static void ws_end(lua_State *L, httpd_ws *w, int told) {
  h2o_websocket_conn_t *conn = w->conn;
  w->conn = NULL;
  if (w->paused) unpause(w);
  if (conn->sock) {
    h2o_websocket_close(conn);
  } else { /* the upgrade never completed: H2O has no socket for it */
    wslay_event_context_free(conn->ws_ctx);
    free(conn);
  }
  tend_slots_release(&w->srv->wss, w->id);
  if (told) { /* then it stops, as a TCP connection's actor does */
    tell(L, w, NULL);
    tend_actor *a = tend_actor_live(w->srv->h, w->actor_id, w->actor_gen);
    if (a) tend_actor_send_poison(w->srv->h, a);
  }
  free(w);
}

static void check_drain(uv_prepare_t *c);

/* Keeps w in the list the loop checks before it would block, where its
 * socket's reading stops (H2O's proceed, which delivered this message,
 * starts it again on its way out, and after each write). */
static void read_pause(httpd_ws *w) {
  tend_httpd *s = w->srv;
  if (w->conn && w->conn->sock) h2o_socket_read_stop(w->conn->sock);
  if (w->paused) return;
  w->paused = 1;
  w->paused_next = s->ws_paused;
  s->ws_paused = w;
  if (!uv_is_active((uv_handle_t *)&s->ws_drain))
    uv_prepare_start(&s->ws_drain, check_drain);
}

/* Before the loop would block: keeps the paused connections unread, and
 * resumes those whose actor is down to the low mark (or gone): H2O's
 * proceed reads again and delivers what waits in its buffer (which may
 * pause it again, or end it). */
static void check_drain(uv_prepare_t *c) {
  tend_httpd *s = c->data;
  httpd_ws **p = &s->ws_paused;
  while (*p) {
    httpd_ws *w = *p;
    tend_actor *a = tend_actor_live(s->h, w->actor_id, w->actor_gen);
    if (a && a->mbox.n_user > TEND_HTTPD_WS_READ_LOW) {
      if (w->conn && w->conn->sock) h2o_socket_read_stop(w->conn->sock);
      p = &w->paused_next;
      continue;
    }
    unpause(w);
    if (w->conn && w->conn->sock) {
      h2o_websocket_proceed(w->conn); /* may end w: not touched after */
      p = &s->ws_paused; /* the list may have changed: from the start */
    }
  }
  tend_host_poke(s->h);
  if (s->ws_paused == NULL) uv_prepare_stop(c);
}

static void on_msg(h2o_websocket_conn_t *conn,
                   const struct wslay_event_on_msg_recv_arg *arg) {
  httpd_ws *w = conn->data;
  if (arg == NULL) { /* the connection ended */
    if (w->srv->in_L)
      w->dead = 1; /* flush ends it */
    else
      ws_end(NULL, w, 1);
    return;
  }
  if (arg->opcode == WSLAY_CONNECTION_CLOSE) {
    w->code = arg->status_code ? arg->status_code : 1005;
    size_t n = arg->msg_length > 2 ? arg->msg_length - 2 : 0;
    if (n >= sizeof w->reason) n = sizeof w->reason - 1;
    if (n) memcpy(w->reason, arg->msg + 2, n);
    w->reason[n] = '\0';
    return;
  }
  if (arg->opcode == WSLAY_TEXT_FRAME || arg->opcode == WSLAY_BINARY_FRAME) {
    tell(w->srv->in_L, w, arg); /* in_L: inside flush, called from Lua */
    tend_actor *a = tend_actor_live(w->srv->h, w->actor_id, w->actor_gen);
    if (a && a->mbox.n_user >= TEND_HTTPD_WS_READ_HIGH) read_pause(w);
  }
}

int tend_httpd_is_ws(h2o_req_t *req) {
  const char *key = NULL;
  return req->version < 0x200 && h2o_is_websocket_handshake(req, &key) == 0 &&
         key != NULL;
}

int64_t tend_httpd_ws_upgrade(tend_httpd *s, int64_t id, uint32_t actor_id,
                              uint32_t actor_gen) {
  httpd_req *r = tend_httpd_req(s, id);
  if (r == NULL || r->streaming) return 0;
  const char *key = NULL;
  if (r->req->version >= 0x200 ||
      h2o_is_websocket_handshake(r->req, &key) != 0 || key == NULL)
    return -1;
  httpd_ws *w = calloc(1, sizeof *w);
  if (w == NULL) return 0;
  uint32_t gen;
  w->id = tend_slots_alloc(&s->wss, w, &gen);
  if (w->id == 0) {
    free(w);
    return 0;
  }
  w->srv = s;
  w->actor_id = actor_id;
  w->actor_gen = actor_gen;
  w->code = 1006;
  tend_slots_release(&s->reqs, r->id); /* answered: 101 */
  r->srv = NULL;
  w->conn = h2o_upgrade_to_websocket(r->req, key, w, on_msg);
  return (int64_t)(((uint64_t)gen << 32) | w->id);
}

static httpd_ws *ws_of(tend_httpd *s, int64_t wid) {
  if (!s->ctx_live || s->ctx_closing) return NULL;
  return tend_slots_get(&s->wss, (uint32_t)(wid & 0xffffffff),
                        (uint32_t)((uint64_t)wid >> 32));
}

/* Lets H2O write what wslay queued (once the upgrade completed); an end
 * found inside is handled here, on L. Returns the bytes still queued, or
 * -1 when the connection is gone. */
static int64_t flush(lua_State *L, tend_httpd *s, httpd_ws *w) {
  if (w->conn->sock) {
    s->in_L = L;
    h2o_websocket_proceed(w->conn);
    s->in_L = NULL;
  }
  if (w->dead) {
    ws_end(L, w, 1);
    return -1;
  }
  return (int64_t)wslay_event_get_queued_msg_length(w->conn->ws_ctx);
}

int64_t tend_httpd_ws_send(lua_State *L, tend_httpd *s, int64_t wid,
                           const char *data, size_t len, int binary) {
  httpd_ws *w = ws_of(s, wid);
  if (w == NULL || w->conn == NULL) return -1;
  struct wslay_event_msg m = {binary ? WSLAY_BINARY_FRAME : WSLAY_TEXT_FRAME,
                              (const uint8_t *)data, len};
  if (wslay_event_queue_msg(w->conn->ws_ctx, &m) != 0) return -1; /* closing */
  return flush(L, s, w);
}

int64_t tend_httpd_ws_queued(tend_httpd *s, int64_t wid) {
  httpd_ws *w = ws_of(s, wid);
  if (w == NULL || w->conn == NULL) return -1;
  return (int64_t)wslay_event_get_queued_msg_length(w->conn->ws_ctx);
}

int tend_httpd_ws_close(lua_State *L, tend_httpd *s, int64_t wid, int code) {
  httpd_ws *w = ws_of(s, wid);
  if (w == NULL || w->conn == NULL) return 0;
  wslay_event_queue_close(w->conn->ws_ctx, (uint16_t)code, NULL, 0);
  flush(L, s, w);
  return 1;
}

void tend_httpd_ws_end_all(tend_httpd *s, uint32_t actor_id, uint32_t actor_gen,
                           int all) {
  for (uint32_t i = 1; i < s->wss.n; i++) {
    httpd_ws *w = s->wss.v[i].ptr;
    if (w == NULL || w->conn == NULL) continue;
    if (all || (w->actor_id == actor_id && w->actor_gen == actor_gen))
      ws_end(NULL, w, 0); /* its actor is gone, or going with the server */
  }
}
