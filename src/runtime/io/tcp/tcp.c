/* tcp: connections owned by actors (see tcp.h): reading frames, writing,
 * back-pressure, the end of a connection, the owner's death. */
#include "runtime/io/tcp/tcprec.h"

#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "runtime/core/promise.h"
#include "runtime/core/send.h"

/* ------------------------------------------------------------ state */

/* After a uv callback that may have queued messages or woken an actor:
 * the loop then runs the scheduler. */
void tend_tcp_poke(tcp_state *st) {
  if (st && st->h) tend_host_poke(st->h);
}

tcp_state *tend_tcp_state(tend_host *h) {
  if (h->tcp) return h->tcp;
  tcp_state *st = calloc(1, sizeof *st);
  if (st == NULL) return NULL;
  st->h = h;
  st->spare = -1;
  st->drain = malloc(sizeof *st->drain);
  if (st->drain == NULL) {
    free(st);
    return NULL;
  }
  uv_prepare_init(&h->loop, st->drain);
  st->drain->data = st;
  h->tcp = st;
  return st;
}

/* ------------------------------------------------------------ records */

static void unlink_sock(tend_sock *s) {
  tcp_state *st = s->st;
  if (st == NULL) return;
  if (s->prev)
    s->prev->next = s->next;
  else if (st->socks == s)
    st->socks = s->next;
  if (s->next) s->next->prev = s->prev;
  s->prev = s->next = NULL;
}

/* A record leaves st->socks only here, when its handle is closed: until
 * then close_all can reach it (an ended socket may still be shutting
 * down, its writes queued). Then it has no state: a request that outlives
 * the handle (a lookup) may complete after close_all freed st. */
static void free_handle(uv_handle_t *handle) {
  free(handle);
}

static void on_close(uv_handle_t *handle) {
  tend_sock *s = handle->data;
  s->handle_open = 0;
  if (s->linger) uv_close((uv_handle_t *)s->linger, free_handle);
  s->linger = NULL;
  unlink_sock(s);
  s->st = NULL;
  tend_tcp_free_if_unused(s);
}

void tend_tcp_free_if_unused(tend_sock *s) {
  if (!s->lua_gone || s->handle_open || s->pending) return;
  tend_framer_free(&s->framer);
  free(s->conn);
  free(s);
}

tend_sock *tend_tcp_sock_new(tcp_state *st) {
  tend_sock *s = calloc(1, sizeof *s);
  if (s == NULL) return NULL;
  if (uv_tcp_init(&st->h->loop, &s->tcp) != 0) {
    free(s);
    return NULL;
  }
  s->tcp.data = s;
  s->handle_open = 1;
  s->ud_ref = LUA_NOREF;
  s->st = st;
  s->next = st->socks;
  if (st->socks) st->socks->prev = s;
  st->socks = s;
  return s;
}

void tend_tcp_set_handle(lua_State *L, tend_sock *s, int ud) {
  lua_pushvalue(L, ud);
  s->ud_ref = luaL_ref(L, LUA_REGISTRYINDEX);
}

/* ------------------------------------------------------------ owners */

static int grow_owners(tcp_state *st, uint32_t id) {
  if (id < st->n_by_owner) return 0;
  uint32_t n = st->n_by_owner ? st->n_by_owner : 64;
  while (n <= id) n *= 2;
  void **v = realloc(st->by_owner, n * sizeof *v);
  if (v == NULL) return -1;
  memset(v + st->n_by_owner, 0, (n - st->n_by_owner) * sizeof *v);
  st->by_owner = v;
  st->n_by_owner = n;
  return 0;
}

static void disown(tend_sock *s) {
  tcp_state *st = s->st;
  if (s->owner_id == 0 || st == NULL || s->owner_id >= st->n_by_owner) return;
  tend_sock **p = (tend_sock **)&st->by_owner[s->owner_id];
  while (*p && *p != s) p = &(*p)->owner_next;
  if (*p) *p = s->owner_next;
  s->owner_next = NULL;
}

void tend_tcp_own(tend_sock *s, uint32_t id, uint32_t gen) {
  disown(s);
  s->owner_id = id;
  s->owner_gen = gen;
  tcp_state *st = s->st;
  tend_actor *a = tend_actor_live(st->h, id, gen);
  if (a == NULL || grow_owners(st, id) != 0) return;
  a->flags |= TEND_AF_SOCKET;
  s->owner_next = st->by_owner[id];
  st->by_owner[id] = s;
}

/* ------------------------------------------------------------ waits */

void tend_tcp_resolve(tend_sock *s, int code) {
  if (s->wait_id == 0 || s->st == NULL) return;
  tend_host *h = s->st->h;
  tend_promise *pr = tend_slots_get(&h->ids, s->wait_id, s->wait_gen);
  s->wait_id = s->wait_gen = 0;
  if (pr == NULL || pr->kind != TEND_ENTITY_PROMISE) return;
  tend_value v = {.type = TEND_VALUE_INT, .u.i = code};
  tend_promise_resolve(h->L, h, pr, v);
}

/* Can s still be written? (open, or its input ended) */
static int writable(const tend_sock *s) {
  return s->phase == TCP_OPEN || s->phase == TCP_INPUT_ENDED;
}

int tend_tcp_wait_drain(lua_State *L, tend_host *h, tend_actor *a,
                        tend_sock *s) {
  if (!writable(s) || uv_stream_get_write_queue_size((uv_stream_t *)&s->tcp) <=
                          TEND_TCP_WRITE_LOW)
    return 1;
  if (s->wait_id && tend_slots_get(&h->ids, s->wait_id, s->wait_gen)) return -1;
  tend_promise *pr = tend_promise_new(L, h, a, -1, "tend.tcp.write");
  s->wait_id = pr->id;
  s->wait_gen = pr->gen;
  return 0;
}

/* ------------------------------------------------------------ ending */

typedef struct telling {
  tend_sock *s;
  const char *kind, *key, *text;
  size_t n;
} telling;

static int tell_p(lua_State *L) {
  const telling *t = lua_touserdata(L, 1);
  tend_sock *s = t->s;
  tend_host *h = s->st->h;
  lua_createtable(L, 0, 2);
  lua_pushstring(L, t->kind);
  lua_setfield(L, -2, "tend");
  lua_pushlstring(L, t->text, t->n);
  lua_setfield(L, -2, t->key);
  tend_actor_send(L, h, s->to_id, s->to_gen, -1, s->owner_id, s->owner_gen);
  return 0;
}

/* Sends `to` a { tend = kind, key = text } message from the owner. It runs
 * in a uv callback, outside any protected call: protected here (out of
 * memory loses the message, nothing else). */
static void tell(tend_sock *s, const char *kind, const char *key,
                 const char *text, size_t n) {
  lua_State *L = s->st->h->L;
  telling t = {s, kind, key, text, n};
  lua_pushcfunction(L, tell_p);
  lua_pushlightuserdata(L, &t);
  if (lua_pcall(L, 1, 0, 0) != LUA_OK) lua_pop(L, 1);
}

static void stop_reading(tend_sock *s) {
  if (s->reading) uv_read_stop((uv_stream_t *)&s->tcp);
  s->reading = 0;
  if (!s->paused || s->st == NULL) return;
  s->paused = 0;
  tend_sock **p = &s->st->paused;
  while (*p && *p != s) p = &(*p)->paused_next;
  if (*p) *p = s->paused_next;
  s->paused_next = NULL;
}

static void on_shutdown(uv_shutdown_t *req, int status) {
  (void)status;
  tend_sock *s = req->data;
  free(req);
  s->pending--;
  if (!uv_is_closing((uv_handle_t *)&s->tcp))
    uv_close((uv_handle_t *)&s->tcp, on_close);
}

/* The linger time of a shutting-down socket is over: the peer did not take
 * its writes. It is reset (SO_LINGER 0: the close sends RST, libuv refuses
 * uv_tcp_close_reset while a shutdown is pending), the queue dropped. */
static void on_linger(uv_timer_t *t) {
  tend_sock *s = t->data;
  uv_handle_t *hd = (uv_handle_t *)&s->tcp;
  if (uv_is_closing(hd)) return;
  size_t queued = uv_stream_get_write_queue_size((uv_stream_t *)&s->tcp);
  if (s->st && tend_host_logs(s->st->h, TEND_LOG_WARN))
    tend_host_log(s->st->h, TEND_LOG_WARN, "/system/tcp",
                  "a closed connection's peer took no data for %d s: "
                  "%zu bytes dropped, connection reset",
                  TCP_LINGER_MS / 1000, queued);
  uv_os_fd_t fd;
  struct linger l = {1, 0};
  if (uv_fileno(hd, &fd) == 0)
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  uv_close(hd, on_close);
}

/* Graceful with writes queued: a shutdown after them, bounded by a linger
 * timer. 0 when it started. */
static int start_shutdown(tend_sock *s) {
  uv_shutdown_t *req = malloc(sizeof *req);
  uv_timer_t *t = malloc(sizeof *t);
  if (req == NULL || t == NULL ||
      uv_shutdown(req, (uv_stream_t *)&s->tcp, on_shutdown) != 0) {
    free(req);
    free(t);
    return -1;
  }
  req->data = s;
  s->pending++;
  uv_timer_init(s->tcp.loop, t);
  t->data = s;
  s->linger = t;
  uv_timer_start(t, on_linger, TCP_LINGER_MS, 0);
  return 0;
}

static void close_handle(tend_sock *s, int graceful, int reset) {
  uv_handle_t *hd = (uv_handle_t *)&s->tcp;
  if (!s->handle_open || uv_is_closing(hd)) return;
  if (reset && uv_tcp_close_reset(&s->tcp, on_close) == 0) return;
  if (graceful && uv_stream_get_write_queue_size((uv_stream_t *)&s->tcp) > 0 &&
      start_shutdown(s) == 0)
    return;
  uv_close(hd, on_close);
}

/* `to` gets { tend = "closed", reason } and the owner is ended: a
 * PoisonPill when it is `to`, else the done token (its Lua handle). */
static void tell_end(tend_sock *s, const char *reason) {
  tend_host *h = s->st->h;
  lua_State *L = h->L;
  if (s->to_id && tend_actor_live(h, s->to_id, s->to_gen))
    tell(s, "closed", "reason", reason, strlen(reason));
  tend_actor *owner = tend_actor_live(h, s->owner_id, s->owner_gen);
  if (owner && s->to_id) {
    if (s->owner_id == s->to_id && s->owner_gen == s->to_gen) {
      tend_actor_send_poison(h, owner);
    } else if (s->ud_ref != LUA_NOREF) { /* the done token */
      lua_rawgeti(L, LUA_REGISTRYINDEX, s->ud_ref);
      tend_actor_send(L, h, s->owner_id, s->owner_gen, -1, 0, 0);
      lua_pop(L, 1);
    }
  }
}

void tend_tcp_end(tend_sock *s, const char *reason, int graceful, int reset) {
  if (s->phase == TCP_CLOSED) return;
  int told = s->phase == TCP_INPUT_ENDED; /* `to` heard eof already */
  s->phase = TCP_CLOSED;
  stop_reading(s);
  tcp_state *st = s->st;
  if (st) {
    tend_host *h = st->h;
    lua_State *L = h->L;
    if (!told) tell_end(s, reason);
    tend_tcp_resolve(s, 0); /* a writer waiting for the queue */
    if (s->listener) tend_tcp_listener_lost(s->listener, s);
    disown(s); /* it stays in st->socks until its handle is closed */
    luaL_unref(L, LUA_REGISTRYINDEX, s->ud_ref);
    s->ud_ref = LUA_NOREF;
  }
  tend_framer_free(&s->framer);
  close_handle(s, graceful, reset);
  if (st)
    tend_tcp_listeners_resume(st); /* its descriptor is free (or
                                      soon, after a shutdown) */
}

void tend_tcp_drop(tend_sock *s) {
  s->to_id = s->to_gen = 0;
  s->owner_id = s->owner_gen = 0;
  tend_tcp_end(s, "closed", 0, 0);
}

void tend_tcp_close(tend_sock *s) {
  tend_tcp_end(s, "closed", 1, 0);
}

void tend_tcp_reset(tend_sock *s) {
  tend_tcp_end(s, "reset", 0, 1);
}

int tend_tcp_is_closed(const tend_sock *s) {
  return s->phase == TCP_CLOSED;
}

void tend_tcp_release(tend_sock *s) {
  s->lua_gone = 1;
  if (s->phase == TCP_CONNECTING) tend_tcp_connect_abandon(s);
  if (s->phase != TCP_CLOSED) tend_tcp_drop(s);
  tend_tcp_free_if_unused(s);
}

/* The owner of some sockets (or listeners) died: they close; `to`, when
 * another actor, hears it. */
static void owner_died(lua_State *L, tend_host *h, tend_actor *a) {
  (void)L;
  tcp_state *st = h->tcp;
  if (!(a->flags & TEND_AF_SOCKET) || st == NULL) return;
  while (a->id < st->n_by_owner && st->by_owner[a->id]) {
    tend_sock *s = st->by_owner[a->id]; /* off the list first: the loop
                                           ends whatever the end does */
    st->by_owner[a->id] = s->owner_next;
    s->owner_next = NULL;
    if (s->owner_id != a->id || s->owner_gen != a->gen) continue; /* stale */
    tend_tcp_end(s, "closed", 1, 0);
  }
  tend_tcp_listener_owner_died(st, a->id, a->gen);
}

/* The host closes: every handle is closed, also of a socket that ended
 * and still shuts down with writes queued (a peer that does not read would
 * keep the loop waiting; their callbacks come after st is freed, and see
 * s->st NULL). */
static void close_all(tend_host *h) {
  tcp_state *st = h->tcp;
  if (st == NULL) return;
  tend_tcp_listeners_close_all(st);
  while (st->socks) {
    tend_sock *s = st->socks;
    unlink_sock(s);
    stop_reading(s);
    luaL_unref(h->L, LUA_REGISTRYINDEX, s->ud_ref);
    s->ud_ref = LUA_NOREF;
    s->wait_id = 0;
    s->st = NULL;
    s->phase = TCP_CLOSED;
    close_handle(s, 0, 0);
  }
  uv_close((uv_handle_t *)st->drain, free_handle);
  free(st->rbuf);
  free(st->by_owner);
  h->tcp = NULL;
  free(st);
}

/* ------------------------------------------------------------ reading */

static void on_alloc(uv_handle_t *handle, size_t hint, uv_buf_t *buf) {
  (void)hint;
  tend_sock *s = handle->data;
  tcp_state *st = s->st;
  if (st && st->rbuf == NULL) st->rbuf = malloc(TCP_READ_SIZE);
  *buf = uv_buf_init(st ? st->rbuf : NULL, st && st->rbuf ? TCP_READ_SIZE : 0);
}

static int deliver(void *ud, const char *frame, size_t n) {
  tend_sock *s = ud;
  tell(s, "data", "data", frame, n);
  return s->phase != TCP_OPEN; /* a frame's receiver may have closed it */
}

static void check_drain(uv_prepare_t *c);

static void pause(tend_sock *s) {
  tcp_state *st = s->st;
  uv_read_stop((uv_stream_t *)&s->tcp);
  s->reading = 0;
  s->paused = 1;
  s->paused_next = st->paused;
  st->paused = s;
  if (!st->drain_active) {
    uv_prepare_start(st->drain, check_drain);
    st->drain_active = 1;
  }
}

static void read_frames(tend_sock *s, ssize_t nread, const uv_buf_t *buf);

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf) {
  tend_sock *s = stream->data;
  tcp_state *st = s->st;
  if (s->phase != TCP_OPEN || st == NULL || nread == 0) return;
  read_frames(s, nread, buf);
  tend_tcp_poke(st);
}

/* The peer ended its sending side (a FIN: it closed, or shut down its
 * writing half). A line begun is delivered, then `to` gets closed, reason
 * "eof", and the owner is ended, as at any end; but the socket stays open
 * for writing until it closes (the owner stops, or ctx:close), so an
 * answer to the last request still goes out (gen_tcp's
 * {exit_on_close, false}, Node's allowHalfOpen). */
static void input_ended(tend_sock *s) {
  tend_framer_end(&s->framer, deliver, s);
  if (s->phase != TCP_OPEN) return;
  stop_reading(s);
  s->phase = TCP_INPUT_ENDED;
  tend_framer_free(&s->framer);
  tell_end(s, "eof");
}

static void read_frames(tend_sock *s, ssize_t nread, const uv_buf_t *buf) {
  tend_host *h = s->st->h;
  if (nread == UV_EOF) {
    input_ended(s);
    return;
  }
  if (nread < 0) {
    tend_tcp_end(s, nread == UV_ECONNRESET ? "reset" : uv_strerror((int)nread),
                 0, 0);
    return;
  }
  tend_actor *to = tend_actor_live(h, s->to_id, s->to_gen);
  if (to == NULL) { /* nobody reads: the connection goes */
    tend_tcp_end(s, "closed", 0, 0);
    return;
  }
  int r = tend_framer_feed(&s->framer, buf->base, (size_t)nread, deliver, s);
  if (r == -1) {
    tend_tcp_end(s, "frame_too_long", 0, 0);
  } else if (r == -2) {
    tend_tcp_end(s, "out of memory", 0, 0);
  } else if (s->phase == TCP_OPEN &&
             (to = tend_actor_live(h, s->to_id, s->to_gen)) != NULL &&
             to->mbox.n_user >= TEND_TCP_READ_HIGH) {
    pause(s);
  }
}

/* Before the loop would block (a prepare handle), while some are paused:
 * resumes those whose reader is down to the low mark (or gone). A check
 * handle would come after the block: a reader that drained its mailbox
 * meanwhile would leave the loop waiting for data it does not read. */
static void check_drain(uv_prepare_t *c) {
  tcp_state *st = c->data;
  tend_sock **p = &st->paused;
  while (*p) {
    tend_sock *s = *p;
    tend_actor *to = tend_actor_live(st->h, s->to_id, s->to_gen);
    if (to && to->mbox.n_user > TEND_TCP_READ_LOW) {
      p = &s->paused_next;
      continue;
    }
    *p = s->paused_next;
    s->paused_next = NULL;
    s->paused = 0;
    if (uv_read_start((uv_stream_t *)&s->tcp, on_alloc, on_read) == 0)
      s->reading = 1;
  }
  tend_tcp_poke(st);
  if (st->paused == NULL) {
    uv_prepare_stop(c);
    st->drain_active = 0;
  }
}

int tend_tcp_start(tend_sock *s, uint32_t owner_id, uint32_t owner_gen,
                   uint32_t to_id, uint32_t to_gen, tend_framing framing,
                   size_t max_line) {
  if (s->phase != TCP_OPEN) return UV_ENOTCONN;
  if (s->to_id) return UV_EALREADY;
  if (s->listener) { /* no longer the listener's to close */
    tend_sock **p = &s->listener->pending;
    while (*p && *p != s) p = &(*p)->pend_next;
    if (*p) *p = s->pend_next;
    s->pend_next = NULL;
  }
  tend_tcp_own(s, owner_id, owner_gen);
  s->to_id = to_id;
  s->to_gen = to_gen;
  tend_framer_init(&s->framer, framing, max_line);
  int r = uv_read_start((uv_stream_t *)&s->tcp, on_alloc, on_read);
  if (r == 0) s->reading = 1;
  return r;
}

/* ------------------------------------------------------------ writing */

typedef struct write_req {
  uv_write_t req;
  char data[]; /* what the kernel did not take at once */
} write_req;

static void on_write(uv_write_t *req, int status) {
  tend_sock *s = req->data;
  tcp_state *st = s->st;
  free(req);
  s->pending--;
  if (status < 0 && status != UV_ECANCELED && writable(s)) {
    tend_tcp_end(s,
                 status == UV_ECONNRESET || status == UV_EPIPE
                     ? "reset"
                     : uv_strerror(status),
                 0, 0);
  } else if (writable(s) && s->wait_id &&
             uv_stream_get_write_queue_size((uv_stream_t *)&s->tcp) <=
                 TEND_TCP_WRITE_LOW) {
    tend_tcp_resolve(s, 1);
  }
  tend_tcp_free_if_unused(s);
  tend_tcp_poke(st); /* after the writer is woken: it runs at once */
}

int tend_tcp_write(tend_sock *s, const char *data, size_t n) {
  if (!writable(s)) return UV_ENOTCONN;
  tend_framing mode = s->to_id ? s->framer.mode : TEND_FRAME_RAW;
  char head[4];
  tend_frame_header(mode, n, head);
  const char *tail = tend_frame_trailer(mode);
  uv_buf_t bufs[3];
  int nb = 0;
  if (mode == TEND_FRAME_LENGTH) bufs[nb++] = uv_buf_init(head, 4);
  bufs[nb++] = uv_buf_init((char *)data, (unsigned)n);
  if (*tail) bufs[nb++] = uv_buf_init((char *)tail, 1);
  size_t total = n + (mode == TEND_FRAME_LENGTH ? 4 : 0) + (*tail ? 1 : 0);
  int done = uv_try_write((uv_stream_t *)&s->tcp, bufs, (unsigned)nb);
  if (done == UV_EAGAIN || done == UV_ENOSYS) done = 0;
  if (done < 0) {
    tend_tcp_end(
        s,
        done == UV_ECONNRESET || done == UV_EPIPE ? "reset" : uv_strerror(done),
        0, 0);
    return done;
  }
  if ((size_t)done == total) return 0;
  size_t left = total - (size_t)done;
  write_req *w = malloc(sizeof *w + left);
  if (w == NULL) return UV_ENOMEM;
  size_t skip = (size_t)done, at = 0; /* copy what is left of the bufs */
  for (int i = 0; i < nb; i++) {
    size_t len = bufs[i].len;
    if (skip >= len) {
      skip -= len;
      continue;
    }
    memcpy(w->data + at, bufs[i].base + skip, len - skip);
    at += len - skip;
    skip = 0;
  }
  w->req.data = s;
  uv_buf_t b = uv_buf_init(w->data, (unsigned)left);
  int r = uv_write(&w->req, (uv_stream_t *)&s->tcp, &b, 1, on_write);
  if (r != 0) {
    free(w);
    return r;
  }
  s->pending++;
  return uv_stream_get_write_queue_size((uv_stream_t *)&s->tcp) >
                 TEND_TCP_WRITE_HIGH
             ? 1
             : 0;
}

int tend_tcp_describe(tend_host *h, const tend_actor *a, char *buf,
                      size_t size) {
  tcp_state *st = h->tcp;
  if (!(a->flags & TEND_AF_SOCKET) || st == NULL) return -1;
  if (a->id < st->n_by_owner) {
    for (tend_sock *s = st->by_owner[a->id]; s; s = s->owner_next) {
      if (s->owner_gen != a->gen || s->to_id == 0) continue; /* not started */
      char peer[80];
      if (tend_tcp_peer(s, peer, sizeof peer) != 0) continue;
      snprintf(buf, size, "peer=%s", peer);
      return 0;
    }
  }
  int port = tend_tcp_listener_port_of(st, a->id, a->gen);
  if (port < 0) return -1;
  snprintf(buf, size, "port=%d", port);
  return 0;
}

int tend_tcp_peer(const tend_sock *s, char *buf, size_t size) {
  struct sockaddr_storage sa;
  int len = sizeof sa;
  if (!s->handle_open || s->phase == TCP_CONNECTING) return UV_ENOTCONN;
  int r = uv_tcp_getpeername(&s->tcp, (struct sockaddr *)&sa, &len);
  if (r != 0) return r;
  char ip[64];
  int port;
  if (sa.ss_family == AF_INET6) {
    const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)&sa;
    uv_ip6_name(a6, ip, sizeof ip);
    port = ntohs(a6->sin6_port);
    snprintf(buf, size, "[%s]:%d", ip, port);
  } else {
    const struct sockaddr_in *a4 = (const struct sockaddr_in *)&sa;
    uv_ip4_name(a4, ip, sizeof ip);
    port = ntohs(a4->sin_port);
    snprintf(buf, size, "%s:%d", ip, port);
  }
  return 0;
}

const tend_driver tend_tcp_driver = {
    .name = "tcp", .death = owner_died, .close_all = close_all};
