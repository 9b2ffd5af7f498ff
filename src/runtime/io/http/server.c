/* server: HTTP servers on H2O's libuv build (see server.h). */
#include "runtime/io/http/server_int.h"

#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "runtime/core/actor.h"
#include "runtime/core/send.h"

/* ------------------------------------------------------------ the end */

static void free_if_unused(tend_httpd *s) {
  if (s->lua_gone && !s->ctx_live && !s->listener_open) free(s);
}

/* H2O's context embeds libuv timers that h2o_context_dispose only starts
 * closing: s (which holds them) must outlive their close. They end in the
 * loop's closing pass that follows the dispose; the reaper's first close
 * ends in that same pass, and its second one in the pass after it, when
 * the timers are surely done: only then is the context gone. */
static void reaped(uv_handle_t *handle) {
  tend_httpd *s = handle->data;
  s->ctx_live = 0;
  free_if_unused(s);
}

static void reap_again(uv_handle_t *handle) {
  tend_httpd *s = handle->data;
  uv_idle_init(&s->h->loop, &s->reaper);
  s->reaper.data = s;
  uv_close((uv_handle_t *)&s->reaper, reaped);
}

/* Closed, with no connection and no listener left: H2O's context goes,
 * then (once its timers closed) s is freed if unused. */
static void finish(tend_httpd *s) {
  if (s->open || s->listener_open || s->live > 0 || !s->ctx_live ||
      s->ctx_closing)
    return;
  s->ctx_closing = 1;
  uv_close((uv_handle_t *)&s->ws_drain, NULL); /* ends before the reaper */
  h2o_context_dispose(&s->ctx);
  h2o_config_dispose(&s->config);
  SSL_CTX_free(s->accept.ssl_ctx);
  s->accept.ssl_ctx = NULL;
  tend_slots_free(&s->reqs);
  tend_slots_free(&s->wss);
  uv_idle_init(&s->h->loop, &s->reaper);
  s->reaper.data = s;
  uv_close((uv_handle_t *)&s->reaper, reap_again);
}

static void on_listener_close(uv_handle_t *handle) {
  tend_httpd *s = handle->data;
  s->listener_open = 0;
  finish(s);
  free_if_unused(s);
}

static void on_conn_close(uv_handle_t *handle) {
  httpd_conn *c = (httpd_conn *)handle;
  tend_httpd *s = c->srv;
  if (c->prev)
    c->prev->next = c->next;
  else
    s->conns = c->next;
  if (c->next) c->next->prev = c->prev;
  s->live--;
  free(c);
  finish(s);
  free_if_unused(s);
}

static void free_handle(uv_handle_t *handle) {
  free(handle);
}

/* ------------------------------------------------------------ answers */

const char *tend_httpd_reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 303: return "See Other";
    case 304: return "Not Modified";
    case 307: return "Temporary Redirect";
    case 308: return "Permanent Redirect";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 409: return "Conflict";
    case 413: return "Payload Too Large";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return status < 300 ? "OK" : "Unknown";
  }
}

/* H2O disposes the request (answered, or its client went away). */
static void on_req_dispose(void *p) {
  httpd_req *r = p;
  if (r->streaming) tend_httpd_stream_disposed(r); /* tells the owner */
  if (r->srv) tend_slots_release(&r->srv->reqs, r->id);
  r->srv = NULL;
}

/* Headers H2O writes itself. */
static int reserved(const char *name, size_t n) {
  return (n == 14 && strncmp(name, "content-length", n) == 0) ||
         (n == 17 && strncmp(name, "transfer-encoding", n) == 0) ||
         (n == 10 && strncmp(name, "connection", n) == 0);
}

/* Adds the string pairs of the table at hidx to r's response headers. */
void tend_httpd_add_headers(lua_State *L, h2o_req_t *req, int hidx) {
  lua_pushnil(L);
  while (lua_next(L, hidx) != 0) {
    if (lua_type(L, -2) == LUA_TSTRING && lua_isstring(L, -1)) {
      size_t n, vn;
      const char *k = lua_tolstring(L, -2, &n);
      const char *v = lua_tolstring(L, -1, &vn);
      char *name = h2o_mem_alloc_pool(&req->pool, n + 1);
      for (size_t i = 0; i < n; i++)
        name[i] = (char)((k[i] >= 'A' && k[i] <= 'Z') ? k[i] + 32 : k[i]);
      name[n] = '\0';
      if (n > 0 && !reserved(name, n)) {
        h2o_iovec_t val = h2o_strdup(&req->pool, v, vn);
        h2o_add_header_by_str(&req->pool, &req->res.headers, name, n, 1, NULL,
                              val.base, val.len);
      }
    }
    lua_pop(L, 1);
  }
}

static void send_answer(lua_State *L, httpd_req *r, int status, int hidx,
                        const char *body, size_t len) {
  h2o_req_t *req = r->req;
  tend_slots_release(&r->srv->reqs, r->id);
  r->srv = NULL; /* answered: dispose has nothing to forget */
  req->res.status = status;
  req->res.reason = tend_httpd_reason(status);
  if (hidx == TEND_HTTPD_PLAIN) /* H2O's token: no lookup, no copy */
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL,
                   H2O_STRLIT("text/plain; charset=utf-8"));
  else if (L && hidx)
    tend_httpd_add_headers(L, req, hidx);
  req->res.content_length = len;
  h2o_send_inline(req, body, len);
}

int64_t tend_httpd_req_id(const tend_httpd *s, const httpd_req *r) {
  uint32_t gen = s->reqs.v[r->id].gen;
  return (int64_t)(((uint64_t)gen << 32) | r->id);
}

httpd_req *tend_httpd_req(tend_httpd *s, int64_t id) {
  if (!s->ctx_live || s->ctx_closing) return NULL;
  return tend_slots_get(&s->reqs, (uint32_t)(id & 0xffffffff),
                        (uint32_t)((uint64_t)id >> 32));
}

int tend_httpd_respond(lua_State *L, tend_httpd *s, int64_t id, int status,
                       int hidx, const char *body, size_t len) {
  httpd_req *r = tend_httpd_req(s, id);
  if (r == NULL || r->streaming) return 0;
  if (hidx < 0 && hidx != TEND_HTTPD_PLAIN) hidx = lua_gettop(L) + hidx + 1;
  send_answer(L, r, status, hidx, body, len);
  return 1;
}

static void answer_all_unavailable(tend_httpd *s) {
  for (uint32_t i = 1; i < s->reqs.n; i++) {
    httpd_req *r = s->reqs.v[i].ptr;
    if (r == NULL) continue;
    if (r->streaming) { /* its head went: the body ends short */
      tend_httpd_stream_abort(r);
      continue;
    }
    send_answer(NULL, r, 503, TEND_HTTPD_PLAIN,
                H2O_STRLIT("Service Unavailable\n"));
  }
}

/* ------------------------------------------------------------ requests */

typedef struct tell_args {
  tend_httpd *s;
  const char *ev;
  int64_t id;
  uint32_t aid, agen;
} tell_args;

static int tell_p(lua_State *L) {
  const tell_args *a = lua_touserdata(L, -1);
  lua_createtable(L, 0, 2);
  lua_pushstring(L, a->ev);
  lua_setfield(L, -2, "tend");
  lua_pushinteger(L, (lua_Integer)a->id);
  lua_setfield(L, -2, "id");
  tend_actor_send(L, a->s->h, a->aid, a->agen, -1, a->s->owner_id,
                  a->s->owner_gen);
  lua_pop(L, 2);
  return 0;
}

void tend_httpd_tell(lua_State *L, tend_httpd *s, const char *ev, int64_t id,
                     uint32_t aid, uint32_t agen) {
  tell_args a = {s, ev, id, aid, agen};
  if (L) { /* inside a Lua call: sent from there */
    lua_pushlightuserdata(L, &a);
    tell_p(L);
    return;
  }
  L = s->h->L;
  if (L == NULL) return; /* the host is closing */
  lua_pushcfunction(L, tell_p);
  lua_pushlightuserdata(L, &a);
  if (lua_pcall(L, 1, 0, 0) != LUA_OK) lua_pop(L, 1); /* out of memory */
  tend_host_poke(s->h);
}

static int on_req(h2o_handler_t *self, h2o_req_t *req) {
  tend_httpd *s = ((httpd_handler *)self)->srv;
  tend_host *h = s->h;
  if (!s->open || tend_actor_live(h, s->owner_id, s->owner_gen) == NULL) {
    h2o_send_error_503(req, "Service Unavailable", "Service Unavailable\n", 0);
    return 0;
  }
  httpd_req *r = h2o_mem_alloc_shared(&req->pool, sizeof *r, on_req_dispose);
  memset(r, 0, sizeof *r);
  r->req = req;
  uint32_t gen;
  r->id = tend_slots_alloc(&s->reqs, r, &gen);
  if (r->id == 0) {
    h2o_send_error_503(req, "Service Unavailable", "Service Unavailable\n", 0);
    return 0;
  }
  r->srv = s;
  lua_State *L = h->L;
  lua_rawgeti(L, LUA_REGISTRYINDEX, s->request_ref); /* request_p */
  lua_pushlightuserdata(L, s);
  lua_pushlightuserdata(L, r);
  if (lua_pcall(L, 2, 0, 0) != LUA_OK) { /* out of memory */
    lua_pop(L, 1);
    send_answer(NULL, r, 503, 0, H2O_STRLIT("Service Unavailable\n"));
  }
  tend_host_poke(h);
  return 0;
}

/* ------------------------------------------------------------ listening */

static void on_connection(uv_stream_t *listener, int status) {
  tend_httpd *s = listener->data;
  if (status < 0) return;
  httpd_conn *c = calloc(1, sizeof *c);
  if (c == NULL) return;
  uv_tcp_init(listener->loop, &c->tcp);
  if (uv_accept(listener, (uv_stream_t *)&c->tcp) != 0) {
    uv_close((uv_handle_t *)&c->tcp, free_handle);
    return;
  }
  if (!s->open || s->live >= s->max_connections) { /* refused at once */
    s->refused++;
    uv_close((uv_handle_t *)&c->tcp, free_handle);
    return;
  }
  c->srv = s;
  c->next = s->conns;
  if (s->conns) s->conns->prev = c;
  s->conns = c;
  s->live++;
  h2o_socket_t *sock =
      h2o_uv_socket_create((uv_stream_t *)&c->tcp, on_conn_close);
  h2o_accept(&s->accept, sock);
}

/* Fills sa with host:port (a numeric address, or a name resolved now,
 * blocking); 0 or a libuv error. */
static int address(tend_host *h, const char *host, int port,
                   struct sockaddr_storage *sa) {
  if (uv_ip4_addr(host, port, (struct sockaddr_in *)sa) == 0) return 0;
  if (uv_ip6_addr(host, port, (struct sockaddr_in6 *)sa) == 0) return 0;
  uv_getaddrinfo_t req;
  struct addrinfo hints = {.ai_family = AF_UNSPEC,
                           .ai_socktype = SOCK_STREAM,
                           .ai_flags = AI_PASSIVE};
  int r = uv_getaddrinfo(&h->loop, &req, NULL, host, NULL, &hints);
  if (r != 0) return r;
  memcpy(sa, req.addrinfo->ai_addr, req.addrinfo->ai_addrlen);
  uv_freeaddrinfo(req.addrinfo);
  if (sa->ss_family == AF_INET6)
    ((struct sockaddr_in6 *)sa)->sin6_port = htons((uint16_t)port);
  else
    ((struct sockaddr_in *)sa)->sin_port = htons((uint16_t)port);
  return 0;
}

static void setup_h2o(tend_httpd *s, const tend_httpd_spec *spec) {
  h2o_config_init(&s->config);
  s->config.max_request_entity_size = spec->max_body;
  /* slowloris: a request's head (and an idle keep-alive connection) gets
   * the handler's timeout, then the connection is closed */
  s->config.http1.req_timeout = spec->timeout_ms;
  s->config.http2.idle_timeout = spec->timeout_ms;
  s->config.handshake_timeout = spec->timeout_ms; /* TLS's, as slow */
  s->config.server_name = h2o_iovec_init(H2O_STRLIT("tend"));
  h2o_hostconf_t *host = h2o_config_register_host(
      &s->config, h2o_iovec_init(H2O_STRLIT("default")), 65535);
  h2o_pathconf_t *path = h2o_config_register_path(host, "/", 0);
  httpd_handler *hd = (httpd_handler *)h2o_create_handler(path, sizeof *hd);
  hd->super.on_req = on_req;
  hd->srv = s;
  h2o_context_init(&s->ctx, &s->h->loop, &s->config);
  uv_prepare_init(&s->h->loop, &s->ws_drain);
  s->ws_drain.data = s;
  s->accept.ctx = &s->ctx;
  s->accept.hosts = s->config.hosts;
  s->ctx_live = 1;
}

tend_httpd *tend_httpd_listen(lua_State *L, tend_host *h,
                              const tend_httpd_spec *spec, uint32_t id,
                              uint32_t gen) {
  struct sockaddr_storage sa;
  int r = address(h, spec->host, spec->port, &sa);
  if (r != 0) {
    lua_pushfstring(L, "%s:%d: %s", spec->host, spec->port,
                    r == UV_EAI_NONAME ? "host not found" : uv_strerror(r));
    return NULL;
  }
  SSL_CTX *tls = NULL;
  if (spec->tls_cert) {
    tls = tend_httpd_tls(L, spec->tls_cert, spec->tls_key);
    if (tls == NULL) return NULL;
  }
  tend_httpd *s = calloc(1, sizeof *s);
  if (s == NULL || uv_tcp_init(&h->loop, &s->listener) != 0) {
    free(s);
    SSL_CTX_free(tls);
    lua_pushliteral(L, "out of memory");
    return NULL;
  }
  s->h = h;
  s->listener.data = s;
  s->listener_open = 1;
  s->ud_ref = s->request_ref = LUA_NOREF;
  r = uv_tcp_bind(&s->listener, (const struct sockaddr *)&sa, 0);
  if (r == 0) r = uv_listen((uv_stream_t *)&s->listener, 128, on_connection);
  struct sockaddr_storage me;
  int len = sizeof me;
  if (r == 0)
    r = uv_tcp_getsockname(&s->listener, (struct sockaddr *)&me, &len);
  if (r != 0) {
    lua_pushfstring(L, "%s:%d: %s", spec->host, spec->port, uv_strerror(r));
    SSL_CTX_free(tls);
    s->lua_gone = 1; /* freed once the handle closed */
    uv_close((uv_handle_t *)&s->listener, on_listener_close);
    return NULL;
  }
  s->port =
      ntohs(me.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&me)->sin6_port
                                     : ((struct sockaddr_in *)&me)->sin_port);
  tend_slots_init(&s->reqs);
  tend_slots_init(&s->wss);
  setup_h2o(s, spec);
  s->accept.ssl_ctx = tls; /* H2O runs the handshake on each connection */
  s->open = 1;
  s->owner_id = id;
  s->owner_gen = gen;
  s->max_connections = spec->max_connections;
  s->next = h->httpd;
  if (h->httpd) h->httpd->prev = s;
  h->httpd = s;
  return s;
}

void tend_httpd_set_handle(lua_State *L, tend_httpd *s, int ud) {
  lua_pushvalue(L, ud);
  s->ud_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  tend_httpd_push_request_fn(L);
  s->request_ref = luaL_ref(L, LUA_REGISTRYINDEX);
}

int tend_httpd_port(const tend_httpd *s) {
  return s->port;
}

uint64_t tend_httpd_refused(const tend_httpd *s) {
  return s->refused;
}

int tend_httpd_connections(const tend_httpd *s) {
  return s->live;
}

void tend_httpd_close(tend_httpd *s) {
  if (!s->open) return;
  s->open = 0;
  tend_host *h = s->h;
  if (s->prev)
    s->prev->next = s->next;
  else if (h->httpd == s)
    h->httpd = s->next;
  if (s->next) s->next->prev = s->prev;
  s->prev = s->next = NULL;
  if (h->L) {
    luaL_unref(h->L, LUA_REGISTRYINDEX, s->ud_ref);
    luaL_unref(h->L, LUA_REGISTRYINDEX, s->request_ref);
  }
  s->ud_ref = s->request_ref = LUA_NOREF;
  uv_close((uv_handle_t *)&s->listener, on_listener_close);
  answer_all_unavailable(s);
  tend_httpd_ws_end_all(s, 0, 0, 1);
  for (httpd_conn *c = s->conns; c; c = c->next) { /* H2O reads the end */
    uv_os_fd_t fd;
    if (uv_fileno((uv_handle_t *)&c->tcp, &fd) == 0) shutdown(fd, SHUT_RDWR);
  }
}

void tend_httpd_release(tend_httpd *s) {
  s->lua_gone = 1;
  tend_httpd_close(s);
  free_if_unused(s);
}

int tend_httpd_describe(tend_host *h, const tend_actor *a, char *buf,
                        size_t size) {
  for (tend_httpd *s = h->httpd; s; s = s->next) {
    if (s->owner_id != a->id || s->owner_gen != a->gen) continue;
    snprintf(buf, size, "http port=%d", s->port);
    return 0;
  }
  return -1;
}

/* ------------------------------------------------------------ the driver */

static void owner_died(lua_State *L, tend_host *h, tend_actor *a) {
  (void)L;
  tend_httpd *s = h->httpd;
  while (s) {
    tend_httpd *next = s->next;
    if (s->owner_id == a->id && s->owner_gen == a->gen)
      tend_httpd_close(s);
    else if (s->wss.n > 1) /* a WebSocket connection's actor */
      tend_httpd_ws_end_all(s, a->id, a->gen, 0);
    s = next;
  }
}

static void close_all(tend_host *h) {
  while (h->httpd) tend_httpd_close(h->httpd);
}

const tend_driver tend_httpd_driver = {
    .name = "httpd", .death = owner_died, .close_all = close_all};
