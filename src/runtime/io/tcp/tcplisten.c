/* tcplisten: listening and accepting, and connecting (see tcp.h). */
#define _GNU_SOURCE /* accept4 */
#include <errno.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "runtime/core/promise.h"
#include "runtime/core/send.h"
#include "runtime/io/tcp/tcprec.h"

/* ------------------------------------------------------------ addresses */

/* Fills sa with host:port when host is a numeric address; 0 or -1. */
static int numeric(const char *host, int port, struct sockaddr_storage *sa) {
  if (uv_ip4_addr(host, port, (struct sockaddr_in *)sa) == 0) return 0;
  if (uv_ip6_addr(host, port, (struct sockaddr_in6 *)sa) == 0) return 0;
  return -1;
}

static void set_port(struct sockaddr *sa, int port) {
  if (sa->sa_family == AF_INET6)
    ((struct sockaddr_in6 *)sa)->sin6_port = htons((uint16_t)port);
  else
    ((struct sockaddr_in *)sa)->sin_port = htons((uint16_t)port);
}

static const char *resolve_error(int status) {
  switch (status) {
    case UV_EAI_NONAME:
    case UV_EAI_NODATA:
    case UV_EAI_FAIL:
    case UV_EAI_AGAIN: return "host not found";
    default: return NULL;
  }
}

/* ------------------------------------------------------------ listeners */

#define ACCEPT_BATCH 128 /* connections accepted per wake-up, at most */
#define SHED_BATCH 4096  /* closed at once per wake-up out of descriptors */

static void listener_free_if_unused(tend_listener *l) {
  if (l->lua_gone && l->handles == 0) free(l);
}

static void on_listener_close(uv_handle_t *handle) {
  tend_listener *l = handle->data;
  l->handles--;
  listener_free_if_unused(l);
}

void tend_tcp_listener_lost(tend_listener *l, tend_sock *s) {
  tend_sock **p = &l->pending;
  while (*p && *p != s) p = &(*p)->pend_next;
  if (*p) *p = s->pend_next;
  s->pend_next = NULL;
  s->listener = NULL;
  l->live--;
}

/* Sends l's actor { tend = "accept", socket = <handle>, peer = "a:p" }
 * for s (a protected call: uv callbacks run outside any). */
static int accept_p(lua_State *L) {
  tend_listener *l = lua_touserdata(L, 1);
  tend_sock *s = lua_touserdata(L, 2);
  lua_createtable(L, 0, 3);
  lua_pushliteral(L, "accept");
  lua_setfield(L, -2, "tend");
  tend_sock **ud = lua_newuserdatauv(L, sizeof *ud, 0);
  *ud = s;
  luaL_setmetatable(L, TEND_SOCKET_MT);
  tend_tcp_set_handle(L, s, -1);
  lua_setfield(L, -2, "socket");
  char peer[80];
  if (tend_tcp_peer(s, peer, sizeof peer) == 0) {
    lua_pushstring(L, peer);
    lua_setfield(L, -2, "peer");
  }
  tend_actor_send(L, l->st->h, l->owner_id, l->owner_gen, -1, l->owner_id,
                  l->owner_gen);
  return 0;
}

/* The connection fd, just accepted by l: its actor hears of it, or it is
 * closed at once (refused: over max_connections, its actor gone, out of
 * memory). */
static void take(tend_listener *l, int fd) {
  tcp_state *st = l->st;
  tend_host *h = st->h;
  tend_sock *s = tend_tcp_sock_new(st);
  if (s == NULL || uv_tcp_open(&s->tcp, fd) != 0) {
    close(fd);
    l->refused++;
    if (s) {
      s->lua_gone = 1;
      tend_tcp_drop(s);
    }
    return;
  }
  tend_actor *a = tend_actor_live(h, l->owner_id, l->owner_gen);
  if (a == NULL || l->live >= l->max_connections) { /* refused at once */
    l->refused++;
    s->lua_gone = 1;
    tend_tcp_drop(s);
    return;
  }
  s->phase = TCP_OPEN;
  s->listener = l;
  l->live++;
  s->pend_next = l->pending;
  l->pending = s;
  tend_tcp_own(s, l->owner_id, l->owner_gen); /* until started */
  lua_State *L = h->L;
  lua_pushcfunction(L, accept_p);
  lua_pushlightuserdata(L, l);
  lua_pushlightuserdata(L, s);
  if (lua_pcall(L, 2, 0, 0) != LUA_OK) { /* out of memory: it goes */
    lua_pop(L, 1);
    tend_tcp_listener_lost(l, s);
    tend_tcp_drop(s);
  }
}

static int path_p(lua_State *L) {
  tend_actor_push_path(L, lua_touserdata(L, 1), lua_touserdata(L, 2));
  return 1;
}

/* The first refusal of a burst out of descriptors is logged, under the
 * listener actor's path. */
static void warn_shedding(tend_listener *l, int err) {
  tend_host *h = l->st->h;
  lua_State *L = h->L;
  if (!tend_host_logs(h, TEND_LOG_WARN)) return;
  tend_actor *a = tend_actor_live(h, l->owner_id, l->owner_gen);
  const char *path = NULL;
  if (a) {
    lua_pushcfunction(L, path_p);
    lua_pushlightuserdata(L, h);
    lua_pushlightuserdata(L, a);
    if (lua_pcall(L, 2, 1, 0) == LUA_OK) path = lua_tostring(L, -1);
  } /* pushed: the path, or pcall's error (out of memory) */
  tend_host_log(h, TEND_LOG_WARN, path ? path : "/system/tcp",
                "port %d: out of file descriptors (%s): new connections are "
                "closed at once and counted in 'refused' until one can be "
                "accepted (raise the limit, `ulimit -n`, or lower "
                "max_connections)",
                l->port, uv_strerror(err));
  if (a) lua_pop(L, 1);
}

/* Out of descriptors (EMFILE, ENFILE): the spare one is given up for a
 * moment to accept each pending connection and close it at once (its
 * peer sees it closed, not a hang), each counted in refused. With no
 * spare, accepting stops until a connection ends (level-triggered, the
 * socket would wake the loop for ever). */
static void shed(tend_listener *l, int err) {
  tcp_state *st = l->st;
  if (st->spare < 0) st->spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (!l->shedding) warn_shedding(l, err);
  l->shedding = 1;
  if (st->spare < 0) {
    uv_poll_stop(&l->poll);
    l->stalled = 1;
    return;
  }
  close(st->spare);
  for (int i = 0; i < SHED_BATCH; i++) {
    int fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd >= 0) {
      close(fd);
      l->refused++;
    } else if (errno != EINTR && errno != ECONNABORTED) {
      break;
    }
  }
  st->spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

/* l's socket is readable: connections to accept. */
static void on_acceptable(uv_poll_t *poll, int status, int events) {
  (void)events;
  tend_listener *l = poll->data;
  if (status < 0 || !l->open || l->st == NULL) return;
  tcp_state *st = l->st;
  for (int i = 0; i < ACCEPT_BATCH && l->open; i++) {
    int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      l->shedding = 0; /* a burst out of descriptors is over */
      take(l, fd);
      continue;
    }
    if (errno == EINTR || errno == ECONNABORTED) continue;
    if (errno == EMFILE || errno == ENFILE) shed(l, -errno);
    break; /* EAGAIN: none left */
  }
  tend_tcp_poke(st);
}

void tend_tcp_listeners_resume(tcp_state *st) {
  for (tend_listener *l = st->listeners; l; l = l->next) {
    if (!l->stalled || !l->open) continue;
    l->stalled = 0;
    uv_poll_start(&l->poll, UV_READABLE, on_acceptable);
  }
}

/* Binds and listens; 0 or a libuv error. */
static int bind_listen(tend_listener *l, const struct sockaddr *sa,
                       int backlog) {
  uv_os_fd_t fd;
  int r = uv_tcp_bind(&l->tcp, sa, 0);
  if (r == 0)
    r = l->tcp.delayed_error; /* libuv may keep EADDRINUSE for
                                 uv_listen, which is not called */
  if (r == 0) r = uv_fileno((uv_handle_t *)&l->tcp, &fd);
  if (r == 0 && listen(fd, backlog) != 0) r = -errno;
  if (r == 0) r = uv_poll_init_socket(l->tcp.loop, &l->poll, fd);
  if (r != 0) return r;
  l->fd = fd;
  l->poll.data = l;
  l->handles++;
  r = uv_poll_start(&l->poll, UV_READABLE, on_acceptable);
  if (r != 0) return r;
  struct sockaddr_storage me;
  int len = sizeof me;
  r = uv_tcp_getsockname(&l->tcp, (struct sockaddr *)&me, &len);
  if (r != 0) return r;
  l->port =
      ntohs(me.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&me)->sin6_port
                                     : ((struct sockaddr_in *)&me)->sin_port);
  return 0;
}

tend_listener *tend_tcp_listen(lua_State *L, tend_host *h, const char *host,
                               int port, int backlog, int max_connections,
                               uint32_t id, uint32_t gen) {
  tcp_state *st = tend_tcp_state(h);
  if (st == NULL) {
    lua_pushliteral(L, "out of memory");
    return NULL;
  }
  struct sockaddr_storage sa;
  struct addrinfo *res = NULL;
  const struct sockaddr *addr = (const struct sockaddr *)&sa;
  if (numeric(host, port, &sa) != 0) { /* a name: resolved now (blocking) */
    uv_getaddrinfo_t req;
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE};
    int r = uv_getaddrinfo(&h->loop, &req, NULL, host, NULL, &hints);
    if (r != 0) {
      const char *why = resolve_error(r);
      lua_pushfstring(L, "%s: %s", host, why ? why : uv_strerror(r));
      return NULL;
    }
    res = req.addrinfo;
    set_port(res->ai_addr, port);
    addr = res->ai_addr;
  }
  tend_listener *l = calloc(1, sizeof *l);
  if (l == NULL || uv_tcp_init(&h->loop, &l->tcp) != 0) {
    free(l);
    uv_freeaddrinfo(res);
    lua_pushliteral(L, "out of memory");
    return NULL;
  }
  l->tcp.data = l;
  l->handles = 1;
  l->ud_ref = LUA_NOREF;
  if (st->spare < 0) st->spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
  int r = bind_listen(l, addr, backlog);
  uv_freeaddrinfo(res);
  if (r != 0) {
    lua_pushfstring(L, "%s:%d: %s", host, port, uv_strerror(r));
    l->lua_gone = 1;
    if (l->handles == 2) uv_close((uv_handle_t *)&l->poll, on_listener_close);
    uv_close((uv_handle_t *)&l->tcp, on_listener_close);
    return NULL;
  }
  l->st = st;
  l->open = 1;
  l->owner_id = id;
  l->owner_gen = gen;
  l->max_connections = max_connections;
  l->next = st->listeners;
  if (st->listeners) st->listeners->prev = l;
  st->listeners = l;
  tend_actor *a = tend_actor_live(h, id, gen);
  if (a) a->flags |= TEND_AF_SOCKET;
  return l;
}

void tend_tcp_listener_set_handle(lua_State *L, tend_listener *l, int ud) {
  lua_pushvalue(L, ud);
  l->ud_ref = luaL_ref(L, LUA_REGISTRYINDEX);
}

int tend_tcp_listener_port(const tend_listener *l) {
  return l->port;
}

uint64_t tend_tcp_listener_refused(const tend_listener *l) {
  return l->refused;
}

void tend_tcp_listener_close(tend_listener *l) {
  if (!l->open) return;
  l->open = 0;
  tcp_state *st = l->st;
  while (l->pending) { /* accepted and never started: they go too */
    tend_sock *s = l->pending;
    tend_tcp_listener_lost(l, s);
    tend_tcp_drop(s);
  }
  if (st) {
    for (tend_sock *s = st->socks; s; s = s->next)
      if (s->listener == l) s->listener = NULL; /* no longer counted */
    if (l->prev)
      l->prev->next = l->next;
    else if (st->listeners == l)
      st->listeners = l->next;
    if (l->next) l->next->prev = l->prev;
    l->prev = l->next = NULL;
    if (st->h) luaL_unref(st->h->L, LUA_REGISTRYINDEX, l->ud_ref);
  }
  l->ud_ref = LUA_NOREF;
  l->st = NULL;
  if (l->handles == 2 && !uv_is_closing((uv_handle_t *)&l->poll))
    uv_close((uv_handle_t *)&l->poll, on_listener_close); /* before its fd */
  if (l->handles && !uv_is_closing((uv_handle_t *)&l->tcp))
    uv_close((uv_handle_t *)&l->tcp, on_listener_close);
}

void tend_tcp_listener_release(tend_listener *l) {
  l->lua_gone = 1;
  tend_tcp_listener_close(l);
  listener_free_if_unused(l);
}

void tend_tcp_listener_owner_died(tcp_state *st, uint32_t id, uint32_t gen) {
  tend_listener *l = st->listeners;
  while (l) {
    tend_listener *next = l->next;
    if (l->owner_id == id && l->owner_gen == gen) tend_tcp_listener_close(l);
    l = next;
  }
}

int tend_tcp_listener_port_of(tcp_state *st, uint32_t id, uint32_t gen) {
  for (tend_listener *l = st->listeners; l; l = l->next)
    if (l->open && l->owner_id == id && l->owner_gen == gen) return l->port;
  return -1;
}

void tend_tcp_listeners_close_all(tcp_state *st) {
  while (st->listeners) tend_tcp_listener_close(st->listeners);
  if (st->spare >= 0) close(st->spare);
  st->spare = -1;
}

/* ------------------------------------------------------------ connecting */

typedef struct tcp_connect {
  uv_connect_t req;
  uv_getaddrinfo_t gai;
  int port;
  int resolving; /* 1: gai in flight */
} tcp_connect;

static void connect_done(tend_sock *s) {
  free(s->conn);
  s->conn = NULL;
}

/* The attempt failed: why (static text), or an OS error's text. */
static void connect_failed(tend_sock *s, const char *why, int status) {
  if (why == NULL) {
    switch (status) {
      case UV_ECONNREFUSED: why = "connection refused"; break;
      case UV_ETIMEDOUT: why = "timed out"; break;
      case UV_ENETUNREACH:
      case UV_EHOSTUNREACH: why = "host unreachable"; break;
      default: why = uv_strerror(status);
    }
  }
  s->error = why;
  tend_tcp_drop(s); /* resolves the wait with 0 */
}

/* The poke comes after the wait is resolved: a poke before it would see
 * no actor runnable, and the caller would sleep until its timeout. */
static void on_connected(uv_connect_t *req, int status) {
  tend_sock *s = req->data;
  tcp_state *st = s->st;
  s->pending--;
  connect_done(s);
  if (s->phase == TCP_CONNECTING && status < 0) {
    connect_failed(s, NULL, status); /* the wait resolved with 0 */
  } else if (s->phase == TCP_CONNECTING) {
    s->phase = TCP_OPEN;
    tend_tcp_resolve(s, 1);
  } /* else abandoned meanwhile */
  tend_tcp_free_if_unused(s);
  tend_tcp_poke(st); /* the woken caller runs now */
}

static int start_connect(tend_sock *s, const struct sockaddr *sa) {
  s->conn->req.data = s;
  int r = uv_tcp_connect(&s->conn->req, &s->tcp, sa, on_connected);
  if (r == 0) s->pending++;
  return r;
}

static void on_resolved(uv_getaddrinfo_t *req, int status,
                        struct addrinfo *res) {
  tend_sock *s = req->data;
  tcp_state *st = s->st;
  s->pending--;
  if (s->conn) s->conn->resolving = 0;
  if (s->phase != TCP_CONNECTING || s->conn == NULL) { /* abandoned */
    uv_freeaddrinfo(res);
    connect_done(s);
  } else if (status < 0 || res == NULL) {
    uv_freeaddrinfo(res);
    connect_done(s);
    connect_failed(s, resolve_error(status), status);
  } else {
    set_port(res->ai_addr, s->conn->port);
    int r = start_connect(s, res->ai_addr);
    uv_freeaddrinfo(res);
    if (r != 0) {
      connect_done(s);
      connect_failed(s, NULL, r);
    }
  }
  tend_tcp_free_if_unused(s);
  tend_tcp_poke(st); /* after the wait is resolved (see on_connected) */
}

tend_sock *tend_tcp_connect(lua_State *L, tend_host *h, tend_actor *a,
                            const char *host, int port, int64_t timeout_ns) {
  tcp_state *st = tend_tcp_state(h);
  tend_sock *s = st ? tend_tcp_sock_new(st) : NULL;
  if (s == NULL || (s->conn = calloc(1, sizeof *s->conn)) == NULL) {
    if (s) {
      s->lua_gone = 1;
      tend_tcp_drop(s);
    }
    lua_pushliteral(L, "out of memory");
    return NULL;
  }
  s->phase = TCP_CONNECTING;
  s->conn->port = port;
  struct sockaddr_storage sa;
  int r;
  if (numeric(host, port, &sa) == 0) {
    r = start_connect(s, (const struct sockaddr *)&sa);
  } else {
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM};
    s->conn->gai.data = s;
    r = uv_getaddrinfo(&h->loop, &s->conn->gai, on_resolved, host, NULL,
                       &hints);
    if (r == 0) {
      s->pending++;
      s->conn->resolving = 1;
    }
  }
  if (r != 0) {
    connect_done(s);
    s->lua_gone = 1;
    tend_tcp_drop(s);
    lua_pushfstring(L, "%s:%d: %s", host, port, uv_strerror(r));
    return NULL;
  }
  tend_promise *pr = tend_promise_new(L, h, a, timeout_ns, "tend.tcp.connect");
  s->wait_id = pr->id;
  s->wait_gen = pr->gen;
  return s;
}

const char *tend_tcp_connect_error(const tend_sock *s) {
  return s->phase == TCP_OPEN ? NULL : s->error ? s->error : "closed";
}

void tend_tcp_connect_abandon(tend_sock *s) {
  if (s->phase != TCP_CONNECTING) return;
  s->error = "timed out";
  s->wait_id = s->wait_gen = 0;
  if (s->conn && s->conn->resolving)
    uv_cancel((uv_req_t *)&s->conn->gai); /* or its callback sees it */
  tend_tcp_drop(s); /* closing the handle cancels a connect */
}
