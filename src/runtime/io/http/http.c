/* http: requests on libcurl's multi-socket API, on the host's loop (see
 * http.h). */
#include "runtime/io/http/http.h"

#include <ctype.h>
#include <curl/curl.h>
#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/core/promise.h"

/* Where a request stands. */
typedef enum http_phase {
  HTTP_RUNNING,  /* in the multi handle */
  HTTP_DONE,     /* curl finished it: a response or an error */
  HTTP_ABANDONED /* its actor stopped waiting (died, restarted, was
                    interrupted) or the host closed */
} http_phase;

typedef struct http_sock http_sock;

/* The host's HTTP client: one multi handle, its timer, the requests in
 * flight and the sockets curl asked us to watch. */
typedef struct tend_http_state {
  tend_host *h;
  CURLM *multi;
  uv_timer_t *timer;   /* curl's timeout (freed in its close callback) */
  tend_http_req *reqs; /* requests in flight (HTTP_RUNNING), linked */
  http_sock *socks;    /* watched sockets, linked */
  int n_reqs;          /* length of reqs */
} http_state;

/* A socket curl asked us to watch (curl_multi_assign'ed to it). */
struct http_sock {
  uv_poll_t poll;         /* first: the handle's memory is the record's */
  curl_socket_t fd;       /* curl's socket */
  int events;             /* what curl asked to watch (UV_READABLE...) */
  http_state *st;         /* or NULL once the client is shut down */
  http_sock *prev, *next; /* st->socks */
};

/* A request. While HTTP_RUNNING it is in st->reqs and its easy handle in
 * the multi handle; after, easy is NULL and only the result is left.
 * Freed when it is no longer running and lua_gone. */
struct tend_http_req {
  http_phase phase;
  http_state *st;               /* while running */
  CURL *easy;                   /* while running */
  struct curl_slist *headers;   /* request headers, while running */
  uint32_t owner_id, owner_gen; /* the actor that made it */
  uint32_t wait_id, wait_gen;   /* the promise it waits on, or 0 */
  int lua_gone;                 /* 1: the Lua handle was collected */
  long status;                  /* HTTP status of the last response */
  char *body;                   /* response body so far */
  size_t body_len, body_cap, max_body;
  char *head; /* header lines of the last response */
  size_t head_len, head_cap;
  int head_lines;    /* their number */
  int head_done;     /* 1: the blank line that ends them came */
  const char *over;  /* the bound passed, or NULL */
  const char *error; /* why it failed, or NULL */
  char errbuf[CURL_ERROR_SIZE];
  tend_http_req *prev, *next; /* st->reqs */
};

/* ------------------------------------------------------------ records */

static void free_req(tend_http_req *r) {
  free(r->body);
  free(r->head);
  free(r);
}

/* Takes r out of curl and the list; its result stays. */
static void detach(tend_http_req *r, http_phase phase) {
  http_state *st = r->st;
  if (r->phase != HTTP_RUNNING) return;
  r->phase = phase;
  curl_multi_remove_handle(st->multi, r->easy);
  curl_easy_cleanup(r->easy);
  curl_slist_free_all(r->headers);
  r->easy = NULL;
  r->headers = NULL;
  if (r->prev)
    r->prev->next = r->next;
  else
    st->reqs = r->next;
  if (r->next) r->next->prev = r->prev;
  r->prev = r->next = NULL;
  r->st = NULL;
  st->n_reqs--;
}

static void abandon(tend_http_req *r) {
  if (r->phase != HTTP_RUNNING) return;
  detach(r, HTTP_ABANDONED);
  r->wait_id = r->wait_gen = 0;
  r->error = "abandoned";
}

/* The owner waits no more; curl is done with r: it wakes. */
static void wake_owner(tend_host *h, tend_http_req *r) {
  if (r->wait_id == 0) return;
  tend_promise *pr = tend_slots_get(&h->ids, r->wait_id, r->wait_gen);
  r->wait_id = r->wait_gen = 0;
  if (pr == NULL || pr->kind != TEND_ENTITY_PROMISE) return;
  tend_value v = {.type = TEND_VALUE_INT, .u.i = 1};
  tend_promise_resolve(h->L, h, pr, v);
  tend_host_poke(h);
}

#define HEADERS_OVER "response headers over their bound (256 lines, 64 KiB)"

/* Did curl give up on a header line over its own bound (100 KiB in curl
 * 7, "Out of memory"; CURLE_TOO_LARGE since 8.6)? Only while the headers
 * are not complete, where it is the one allocation that large. */
static int headers_too_large(CURLcode result) {
#if LIBCURL_VERSION_NUM >= 0x080600
  if (result == CURLE_TOO_LARGE) return 1;
#endif
  return result == CURLE_OUT_OF_MEMORY;
}

/* curl finished r with result. */
static void finish(http_state *st, tend_http_req *r, CURLcode result) {
  curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &r->status);
  if (r->over)
    r->error = r->over;
  else if (!r->head_done && headers_too_large(result))
    r->error = HEADERS_OVER; /* a line over curl's own bound */
  else if (result != CURLE_OK)
    r->error = r->errbuf[0] ? r->errbuf : curl_easy_strerror(result);
  size_t n = strlen(r->errbuf); /* curl ends some texts with a newline */
  while (n > 0 && r->errbuf[n - 1] == '\n') r->errbuf[--n] = '\0';
  detach(r, HTTP_DONE);
  wake_owner(st->h, r);
  if (r->lua_gone) free_req(r);
}

/* Every request curl has finished. */
static void check_done(http_state *st) {
  CURLMsg *m;
  int left;
  while ((m = curl_multi_info_read(st->multi, &left))) {
    if (m->msg != CURLMSG_DONE) continue;
    tend_http_req *r = NULL;
    curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&r);
    if (r) finish(st, r, m->data.result);
  }
}

/* ------------------------------------------------------------ curl's sockets
 * and timer */

/* An error on the socket (libuv says so on POLLERR, e.g. a peer's RST,
 * and stops the handle) is passed to curl as the readiness it waited for,
 * not as CURL_CSELECT_ERR: curl then reads or writes, gets the response
 * still queued or the OS's error ("Connection reset by peer"), and retries
 * a request on a fresh connection when a reused one was dead, as curl's
 * own tool does. The handle is started again while curl still wants the
 * socket. */
static void on_poll(uv_poll_t *handle, int status, int events) {
  http_sock *s = (http_sock *)handle;
  http_state *st = s->st;
  if (st == NULL) return;
  if (status < 0) events = s->events;
  int flags = 0;
  if (events & UV_READABLE) flags |= CURL_CSELECT_IN;
  if (events & UV_WRITABLE) flags |= CURL_CSELECT_OUT;
  int running;
  curl_multi_socket_action(st->multi, s->fd, flags, &running);
  if (status < 0 && s->st && !uv_is_active((uv_handle_t *)&s->poll))
    uv_poll_start(&s->poll, s->events, on_poll); /* still curl's */
  check_done(st);
}

static void free_sock(uv_handle_t *handle) {
  free(handle); /* the http_sock: the poll is its first field */
}

static void drop_sock(http_sock *s) {
  http_state *st = s->st;
  if (st) {
    if (s->prev)
      s->prev->next = s->next;
    else
      st->socks = s->next;
    if (s->next) s->next->prev = s->prev;
  }
  s->st = NULL;
  uv_poll_stop(&s->poll);
  uv_close((uv_handle_t *)&s->poll, free_sock);
}

/* CURLMOPT_SOCKETFUNCTION: watch fd for what curl wants, or stop. */
static int on_socket(CURL *easy, curl_socket_t fd, int what, void *userp,
                     void *socketp) {
  (void)easy;
  http_state *st = userp;
  http_sock *s = socketp;
  if (what == CURL_POLL_REMOVE) {
    if (s) {
      curl_multi_assign(st->multi, fd, NULL);
      drop_sock(s);
    }
    return 0;
  }
  if (s == NULL) {
    s = calloc(1, sizeof *s);
    if (s == NULL) return -1; /* curl fails the transfer */
    if (uv_poll_init_socket(&st->h->loop, &s->poll, fd) != 0) {
      free(s);
      return -1;
    }
    s->fd = fd;
    s->st = st;
    s->next = st->socks;
    if (st->socks) st->socks->prev = s;
    st->socks = s;
    curl_multi_assign(st->multi, fd, s);
  }
  int events = 0;
  if (what == CURL_POLL_IN || what == CURL_POLL_INOUT) events |= UV_READABLE;
  if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT) events |= UV_WRITABLE;
  s->events = events;
  uv_poll_start(&s->poll, events, on_poll);
  return 0;
}

static void on_timer(uv_timer_t *t) {
  http_state *st = t->data;
  int running;
  curl_multi_socket_action(st->multi, CURL_SOCKET_TIMEOUT, 0, &running);
  check_done(st);
}

/* CURLMOPT_TIMERFUNCTION: curl wants to be called after ms (-1: never). */
static int on_curl_timer(CURLM *multi, long ms, void *userp) {
  (void)multi;
  http_state *st = userp;
  if (ms < 0)
    uv_timer_stop(st->timer);
  else
    uv_timer_start(st->timer, on_timer, (uint64_t)ms, 0);
  return 0;
}

/* ------------------------------------------------------------ state */

static http_state *state_of(tend_host *h) {
  if (h->http) return h->http;
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return NULL;
  http_state *st = calloc(1, sizeof *st);
  uv_timer_t *t = malloc(sizeof *t);
  CURLM *m = curl_multi_init();
  if (st == NULL || t == NULL || m == NULL) goto fail;
  st->h = h;
  st->multi = m;
  st->timer = t;
  uv_timer_init(&h->loop, t);
  t->data = st;
  curl_multi_setopt(m, CURLMOPT_SOCKETFUNCTION, on_socket);
  curl_multi_setopt(m, CURLMOPT_SOCKETDATA, st);
  curl_multi_setopt(m, CURLMOPT_TIMERFUNCTION, on_curl_timer);
  curl_multi_setopt(m, CURLMOPT_TIMERDATA, st);
  h->http = st;
  return st;
fail:
  if (m) curl_multi_cleanup(m);
  free(t);
  free(st);
  curl_global_cleanup();
  return NULL;
}

/* a died or restarts: its requests go (nothing wakes it later). */
static void owner_gone(lua_State *L, tend_host *h, tend_actor *a) {
  (void)L;
  http_state *st = h->http;
  if (st == NULL || !(a->flags & TEND_AF_HTTP)) return;
  tend_http_req *next;
  for (tend_http_req *r = st->reqs; r; r = next) {
    next = r->next;
    if (r->owner_id == a->id && r->owner_gen == a->gen) abandon(r);
  }
}

static void free_timer(uv_handle_t *handle) {
  free(handle);
}

/* The host closes: every request dropped, curl shut down. */
static void close_all(tend_host *h) {
  http_state *st = h->http;
  if (st == NULL) return;
  while (st->reqs) abandon(st->reqs);
  curl_multi_cleanup(st->multi); /* may still name sockets to drop */
  while (st->socks) drop_sock(st->socks);
  uv_close((uv_handle_t *)st->timer, free_timer);
  curl_global_cleanup();
  h->http = NULL;
  free(st);
}

int tend_http_in_flight(const tend_host *h) {
  const http_state *st = h->http;
  return st ? st->n_reqs : 0;
}

/* ------------------------------------------------------------ the response */

/* CURLOPT_WRITEFUNCTION: body bytes, up to max_body. */
static size_t on_body(char *data, size_t size, size_t n, void *ud) {
  tend_http_req *r = ud;
  n *= size;
  if (n > r->max_body - r->body_len) {
    r->over = "response body over max_body";
    return 0; /* curl fails the transfer */
  }
  if (r->body_len + n > r->body_cap) {
    size_t cap = r->body_cap ? r->body_cap : 4096;
    while (cap < r->body_len + n) cap *= 2;
    if (cap > r->max_body) cap = r->max_body;
    char *b = realloc(r->body, cap);
    if (b == NULL) {
      r->over = "out of memory for the response body";
      return 0;
    }
    r->body = b;
    r->body_cap = cap;
  }
  memcpy(r->body + r->body_len, data, n);
  r->body_len += n;
  return n;
}

/* CURLOPT_HEADERFUNCTION: one header line of a response; a status line
 * begins a new response (after a 100 Continue), whose lines replace the
 * earlier ones. Bounded by TEND_HTTP_MAX_HEADER_BYTES and _HEADERS. */
static size_t on_header(char *line, size_t size, size_t n, void *ud) {
  tend_http_req *r = ud;
  n *= size;
  if (n >= 5 && memcmp(line, "HTTP/", 5) == 0) {
    r->head_len = 0;
    r->head_lines = 0;
    r->head_done = 0;
    r->body_len = 0;
    return n;
  }
  if ((n == 2 && line[0] == '\r' && line[1] == '\n') ||
      (n == 1 && line[0] == '\n')) {
    r->head_done = 1; /* the end of this response's headers */
    return n;
  }
  if (r->head_len + n > TEND_HTTP_MAX_HEADER_BYTES ||
      r->head_lines >= TEND_HTTP_MAX_HEADERS) {
    r->over = HEADERS_OVER;
    return 0;
  }
  if (r->head_len + n > r->head_cap) {
    size_t cap = r->head_cap ? r->head_cap : 1024;
    while (cap < r->head_len + n) cap *= 2;
    char *b = realloc(r->head, cap);
    if (b == NULL) {
      r->over = "out of memory for the response headers";
      return 0;
    }
    r->head = b;
    r->head_cap = cap;
  }
  memcpy(r->head + r->head_len, line, n);
  r->head_len += n;
  r->head_lines++;
  return n;
}

/* Pushes the table of header lines in head[0..n): lowercased names; a
 * repeated name's values joined with ", ". */
static void push_headers(lua_State *L, const char *head, size_t n) {
  lua_createtable(L, 0, 8);
  const char *end = head + n;
  while (head < end) {
    const char *eol = memchr(head, '\n', (size_t)(end - head));
    if (eol == NULL) eol = end;
    const char *colon = memchr(head, ':', (size_t)(eol - head));
    if (colon && colon > head) {
      luaL_Buffer b;
      luaL_buffinit(L, &b);
      for (const char *p = head; p < colon; p++)
        luaL_addchar(&b, (char)tolower((unsigned char)*p));
      luaL_pushresult(&b); /* the name */
      const char *v = colon + 1, *ve = eol;
      while (v < ve && (*v == ' ' || *v == '\t')) v++;
      while (ve > v && (ve[-1] == '\r' || ve[-1] == ' ' || ve[-1] == '\t'))
        ve--;
      lua_pushvalue(L, -1);
      if (lua_rawget(L, -3) == LUA_TSTRING) { /* name, earlier */
        lua_pushliteral(L, ", ");
        lua_pushlstring(L, v, (size_t)(ve - v));
        lua_concat(L, 3);
      } else {
        lua_pop(L, 1);
        lua_pushlstring(L, v, (size_t)(ve - v));
      }
      lua_rawset(L, -3);
    }
    head = eol + 1;
  }
}

void tend_http_push_response(lua_State *L, tend_http_req *r) {
  lua_createtable(L, 0, 3);
  lua_pushinteger(L, r->status);
  lua_setfield(L, -2, "status");
  push_headers(L, r->head, r->head_len);
  lua_setfield(L, -2, "headers");
  lua_pushlstring(L, r->body ? r->body : "", r->body_len);
  lua_setfield(L, -2, "body");
  free(r->body); /* read once: the memory goes now, not at the GC */
  free(r->head);
  r->body = r->head = NULL;
  r->body_len = r->body_cap = r->head_len = r->head_cap = 0;
}

/* ------------------------------------------------------------ requests */

const char *tend_http_error(tend_http_req *r) {
  abandon(r);
  return r->error;
}

void tend_http_release(tend_http_req *r) {
  r->lua_gone = 1;
  abandon(r);
  if (r->phase != HTTP_RUNNING) free_req(r);
}

/* Sets up r's easy handle for spec; 0 or -1 (out of memory). */
static int setup(tend_http_req *r, const tend_http_spec *spec) {
  CURL *e = r->easy;
  for (const char *const *l = spec->headers; l && *l; l++) {
    struct curl_slist *s = curl_slist_append(r->headers, *l);
    if (s == NULL) return -1;
    r->headers = s;
  }
  /* no "Expect: 100-continue" wait before a body */
  struct curl_slist *s = curl_slist_append(r->headers, "Expect:");
  if (s == NULL) return -1;
  r->headers = s;
  int bad = 0;
  bad |= curl_easy_setopt(e, CURLOPT_URL, spec->url) != CURLE_OK;
  bad |= curl_easy_setopt(e, CURLOPT_PRIVATE, r) != CURLE_OK;
  bad |= curl_easy_setopt(e, CURLOPT_ERRORBUFFER, r->errbuf) != CURLE_OK;
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)spec->timeout_ms);
  curl_easy_setopt(e, CURLOPT_USERAGENT, "tend/" TEND_VERSION);
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, r->headers);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, r);
  if (strcmp(spec->method, "HEAD") == 0)
    curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
  else if (strcmp(spec->method, "GET") != 0 || spec->body)
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, spec->method);
  if (spec->body || strcmp(spec->method, "POST") == 0) {
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
                     (curl_off_t)(spec->body ? spec->body_len : 0));
    bad |= curl_easy_setopt(e, CURLOPT_COPYPOSTFIELDS,
                            spec->body ? spec->body : "") != CURLE_OK;
  }
  return bad ? -1 : 0;
}

tend_http_req *tend_http_start(lua_State *L, tend_host *h, tend_actor *a,
                               const tend_http_spec *spec,
                               tend_http_req **slot) {
  http_state *st = state_of(h);
  if (st == NULL) {
    lua_pushliteral(L, "libcurl could not be initialised");
    return NULL;
  }
  tend_http_req *r = calloc(1, sizeof *r);
  if (r == NULL || (r->easy = curl_easy_init()) == NULL ||
      setup(r, spec) != 0 || curl_multi_add_handle(st->multi, r->easy)) {
    if (r) {
      if (r->easy) curl_easy_cleanup(r->easy);
      curl_slist_free_all(r->headers);
      free(r);
    }
    lua_pushliteral(L, "out of memory");
    return NULL;
  }
  r->phase = HTTP_RUNNING;
  r->st = st;
  r->max_body = spec->max_body;
  r->owner_id = a->id;
  r->owner_gen = a->gen;
  r->next = st->reqs;
  if (st->reqs) st->reqs->prev = r;
  st->reqs = r;
  st->n_reqs++;
  a->flags |= TEND_AF_HTTP;
  *slot = r; /* the Lua handle owns r from here (the promise may raise) */
  tend_promise *pr = tend_promise_new(L, h, a, -1, "tend.http.request");
  r->wait_id = pr->id;
  r->wait_gen = pr->gen;
  return r;
}

const tend_driver tend_http_driver = {.name = "http",
                                      .rebuild = owner_gone,
                                      .death = owner_gone,
                                      .close_all = close_all};
