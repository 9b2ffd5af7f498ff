/* nats: NATS connections on cnats's threads, handed to the loop (see
 * nats.h). */
#include "runtime/nodes/nats.h"

#include <lauxlib.h>
#include <nats/adapters/libuv.h>
#include <nats/nats.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "runtime/core/promise.h"
#include "runtime/core/sched.h"
#include "runtime/core/value.h"
#include "runtime/nodes/wire.h"

/* A status cnats gave on one of its threads, for the loop thread. */
typedef struct item {
  struct item *next;
  const char *status; /* a static string */
} item;

/* One subscription: cnats's closure (freed with the record). */
typedef struct sub {
  tend_nats *c;
  int id;
  natsSubscription *ns; /* NULL once unsubscribed */
} sub;

struct tend_nats {
  tend_host *h;
  natsConnection *nc; /* NULL once closed */
  uv_async_t async;   /* wakes the loop for status changes */
  uv_check_t check;   /* after each poll: the messages read */
  uv_mutex_t lock;    /* guards the queue */
  item *head, *tail;
  int status_ref; /* registry: function(status), or LUA_NOREF */
  int fns_ref;    /* registry: table id -> function(data, subject, reply) */
  sub **subs;     /* by id - 1 */
  int n_subs, cap_subs;
  uv_prepare_t prepare;  /* before the loop waits: batches leave */
  struct batch *batches; /* frames waiting per subject */
  int n_batches, cap_batches;
  int queued;          /* frames in the batches since the last flush */
  int want_write;      /* cnats has bytes to write: written in on_prepare */
  natsLibuvEvents *ev; /* the adapter's record (set by ev_write), or NULL */
  int jobs;            /* key-value operations in flight: they use nc */
  int closing;         /* closed while jobs ran: ends when the last is done */
  int closing_handles; /* at host close: handles not yet closed */
  tend_nats *next;     /* the host's list */
};

/* Frames for one subject, sent as one message before the loop waits. */
typedef struct batch {
  char *subject;
  char *buf;
  size_t n, cap;
} batch;

#define BATCH_MAX (512u << 10) /* bytes: flushed before (max_payload 1 MiB) */
/* A batch waits at most this many scheduler steps (a tenth of the
 * quantum) before the loop gets its turn and the batch leaves: without it
 * a busy node held its envelopes for a whole run (20000 steps, a few ms)
 * and read the other nodes' only as often. */
#define BATCH_STEPS 2000

/* ------------------------------------------------------------ cnats side */

static void push_item(tend_nats *c, item *it) {
  uv_mutex_lock(&c->lock);
  if (c->tail)
    c->tail->next = it;
  else
    c->head = it;
  c->tail = it;
  uv_mutex_unlock(&c->lock);
  uv_async_send(&c->async);
}

static char *copy(const char *s, size_t n) {
  char *p = malloc(n + 1);
  if (p == NULL) return NULL;
  if (n) memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

static void on_status(tend_nats *c, const char *status) {
  item *it = calloc(1, sizeof *it);
  if (it == NULL) return;
  it->status = status;
  push_item(c, it);
}
static void on_disconnected(natsConnection *nc, void *closure) {
  (void)nc;
  on_status(closure, "disconnected");
}
static void on_reconnected(natsConnection *nc, void *closure) {
  (void)nc;
  on_status(closure, "reconnected");
}

/* ------------------------------------------------------------ loop side */

static void free_item(item *it) {
  free(it);
}

/* Runs the status function for each queued status, protected. */
static void on_async(uv_async_t *a) {
  tend_nats *c = a->data;
  tend_host *h = c->h;
  uv_mutex_lock(&c->lock);
  item *it = c->head;
  c->head = c->tail = NULL;
  uv_mutex_unlock(&c->lock);
  lua_State *L = h->L;
  while (it) {
    item *next = it->next;
    if (L && c->status_ref != LUA_NOREF) {
      lua_rawgeti(L, LUA_REGISTRYINDEX, c->status_ref);
      lua_pushstring(L, it->status);
      if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
        tend_host_log(h, TEND_LOG_WARN, NULL, "nats: a callback raised: %s",
                      lua_tostring(L, -1));
        lua_pop(L, 1);
      }
    }
    free_item(it);
    it = next;
  }
  tend_host_poke(h); /* what the function sent */
}

/* After each poll (the adapter read the socket there): every message the
 * subscriptions hold goes to its Lua function, in order, protected. */
static void on_check(uv_check_t *handle) {
  tend_nats *c = handle->data;
  tend_host *h = c->h;
  lua_State *L = h->L;
  int any = 0;
  for (int i = 0; i < c->n_subs && L && c->nc; i++) {
    natsMsg *m = NULL;
    while (c->subs[i]->ns &&
           natsSubscription_NextMsg(&m, c->subs[i]->ns, 0) == NATS_OK) {
      any = 1;
      const char *reply = natsMsg_GetReply(m);
      lua_rawgeti(L, LUA_REGISTRYINDEX, c->fns_ref);
      lua_rawgeti(L, -1, c->subs[i]->id);
      lua_remove(L, -2);
      lua_pushlstring(L, natsMsg_GetData(m), (size_t)natsMsg_GetDataLength(m));
      lua_pushstring(L, natsMsg_GetSubject(m));
      if (reply)
        lua_pushstring(L, reply);
      else
        lua_pushnil(L);
      natsMsg_Destroy(m);
      if (lua_pcall(L, 3, 0, 0) != LUA_OK) {
        tend_host_log(h, TEND_LOG_WARN, NULL, "nats: a callback raised: %s",
                      lua_tostring(L, -1));
        lua_pop(L, 1);
      }
    }
  }
  if (any) tend_host_poke(h); /* what the callbacks sent */
}

/* ------------------------------------------------------------ writing */

static void on_prepare(uv_prepare_t *handle);

/* The connection of loop whose cnats connection is nc, or NULL. Only on
 * the loop's own thread. */
static tend_nats *conn_of(uv_loop_t *loop, natsConnection *nc) {
  tend_host *h = (tend_host *)((char *)loop - offsetof(tend_host, loop));
  for (tend_nats *c = h->nats; c; c = c->next)
    if (c->nc == nc) return c;
  return NULL;
}

/* cnats asks for (add) or gives up (remove) write readiness. The adapter
 * would start polling the socket for it at each message and stop after
 * the write: two uv_poll_start, each an epoll_ctl DEL and ADD. On the
 * loop's thread, with the socket not polled for writing, the request is
 * noted instead and on_prepare writes the bytes itself before the loop
 * waits (one send); only a write that would block polls (the adapter's
 * way, as are requests from other threads: key-value workers, cnats's
 * own). */
static natsStatus ev_write(void *user, bool add) {
  natsLibuvEvents *nle = user;
  if (uv_key_get(&uvLoopThreadKey) == nle->loop && nle->head == NULL &&
      !(nle->events & UV_WRITABLE)) {
    tend_nats *c = conn_of(nle->loop, nle->nc);
    if (c) {
      c->ev = nle;
      c->want_write = add;
      if (add) uv_prepare_start(&c->prepare, on_prepare);
      return NATS_OK;
    }
  }
  return natsLibuv_Write(user, add);
}

/* The batches leave as one message per subject, then what cnats holds is
 * written at once (a send that would block leaves the rest to the poll). */
static void flush(tend_nats *c) {
  for (int i = 0; i < c->n_batches; i++) {
    batch *b = &c->batches[i];
    if (b->n && c->nc)
      natsConnection_Publish(c->nc, b->subject, b->buf, (int)b->n);
    b->n = 0;
  }
  c->queued = 0;
  if (c->want_write && c->nc) {
    natsConnection_ProcessWriteEvent(c->nc); /* clears want_write when done */
    if (c->want_write && c->ev) {
      c->want_write = 0;
      natsLibuv_Write(c->ev, true); /* it would block: poll for it */
    }
  }
}

/* Before the loop waits (or polls, between passes of the scheduler). */
static void on_prepare(uv_prepare_t *handle) {
  flush(handle->data);
  uv_prepare_stop(handle);
}

/* Each of the record's three handles closes; the last one frees it. */
static void handle_closed(uv_handle_t *handle) {
  tend_nats *c = handle->data;
  if (--c->closing_handles == 0) free(c);
}

static void close_all(tend_host *h) {
  if (h->nats == NULL) return; /* never connected */
  for (tend_nats *c = h->nats; c; c = c->next) {
    while (c->jobs) uv_run(&h->loop, UV_RUN_ONCE); /* they use the conn */
    tend_nats_close(c);
  }
  nats_CloseAndWait(2000); /* cnats's threads are done: no late callback */
  tend_nats *c = h->nats;
  while (c) {
    tend_nats *next = c->next;
    for (item *it = c->head; it;) {
      item *n = it->next;
      free_item(it);
      it = n;
    }
    for (int i = 0; i < c->n_subs; i++) free(c->subs[i]);
    free(c->subs);
    uv_mutex_destroy(&c->lock);
    for (int i = 0; i < c->n_batches; i++) {
      free(c->batches[i].subject);
      free(c->batches[i].buf);
    }
    free(c->batches);
    c->closing_handles = 3;
    uv_close((uv_handle_t *)&c->prepare, handle_closed);
    uv_close((uv_handle_t *)&c->check, handle_closed);
    uv_close((uv_handle_t *)&c->async, handle_closed);
    c = next;
  }
  h->nats = NULL;
}

tend_nats *tend_nats_connect(lua_State *L, tend_host *h,
                             const tend_nats_opts *o, int on_status_fn) {
  natsOptions *opts = NULL;
  natsConnection *nc = NULL;
  tend_nats *c = calloc(1, sizeof *c);
  if (c == NULL) {
    lua_pushliteral(L, "out of memory");
    return NULL;
  }
  c->h = h;
  natsStatus s = natsOptions_Create(&opts);
  if (s == NATS_OK) s = natsOptions_SetURL(opts, o->url);
  if (s == NATS_OK && o->name) s = natsOptions_SetName(opts, o->name);
  if (s == NATS_OK) s = natsOptions_SetTimeout(opts, o->timeout_ms);
  if (s == NATS_OK) s = natsOptions_SetAllowReconnect(opts, o->reconnect);
  if (s == NATS_OK) s = natsOptions_SetMaxReconnect(opts, -1); /* forever */
  if (s == NATS_OK) s = natsOptions_SetReconnectWait(opts, 250);
  /* no flusher delay: a message leaves at its publish (a remote pingpong
   * otherwise waits about 1 ms per hop) */
  if (s == NATS_OK) s = natsOptions_SetSendAsap(opts, true);
  if (s == NATS_OK) s = natsOptions_SetDisconnectedCB(opts, on_disconnected, c);
  if (s == NATS_OK) s = natsOptions_SetReconnectedCB(opts, on_reconnected, c);
  natsLibuv_Init();
  natsLibuv_SetThreadLocalLoop(&h->loop); /* this thread runs the loop */
  if (s == NATS_OK)
    s = natsOptions_SetEventLoop(opts, &h->loop, natsLibuv_Attach,
                                 natsLibuv_Read, ev_write, natsLibuv_Detach);
  /* the connect blocks in cnats's poll(), which a signal cuts short with
   * EINTR (a failed connect): the preemption watchdog's SIGURG
   * (preempt.c) waits until it is done */
  sigset_t urg, mask;
  sigemptyset(&urg);
  sigaddset(&urg, SIGURG);
  pthread_sigmask(SIG_BLOCK, &urg, &mask);
  if (s == NATS_OK) s = natsConnection_Connect(&nc, opts);
  pthread_sigmask(SIG_SETMASK, &mask, NULL);
  natsOptions_Destroy(opts);
  if (s != NATS_OK) {
    const char *why = nats_GetLastError(NULL);
    lua_pushstring(L, why && *why ? why : natsStatus_GetText(s));
    free(c);
    return NULL;
  }
  c->nc = nc;
  uv_mutex_init(&c->lock);
  uv_async_init(&h->loop, &c->async, on_async);
  c->async.data = c;
  uv_unref((uv_handle_t *)&c->async);
  uv_prepare_init(&h->loop, &c->prepare);
  c->prepare.data = c;
  uv_unref((uv_handle_t *)&c->prepare);
  uv_check_init(&h->loop, &c->check);
  c->check.data = c;
  uv_check_start(&c->check, on_check);
  uv_unref((uv_handle_t *)&c->check);
  lua_newtable(L);
  c->fns_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  c->status_ref = LUA_NOREF;
  if (on_status_fn) {
    lua_pushvalue(L, on_status_fn);
    c->status_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  }
  c->next = h->nats;
  h->nats = c;
  return c;
}

int tend_nats_publish_batched(tend_nats *c, const char *subject,
                              const char *data, size_t n) {
  if (c->nc == NULL || n > TEND_WIRE_ENVELOPE_MAX) return -1;
  batch *b = NULL;
  for (int i = 0; i < c->n_batches && !b; i++)
    if (strcmp(c->batches[i].subject, subject) == 0) b = &c->batches[i];
  if (b == NULL) {
    if (c->n_batches == c->cap_batches) {
      int cap = c->cap_batches ? 2 * c->cap_batches : 4;
      batch *v = realloc(c->batches, (size_t)cap * sizeof *v);
      if (v == NULL) return -1;
      c->batches = v;
      c->cap_batches = cap;
    }
    b = &c->batches[c->n_batches];
    memset(b, 0, sizeof *b);
    b->subject = copy(subject, strlen(subject));
    if (b->subject == NULL) return -1;
    c->n_batches++;
  }
  size_t framed = TEND_WIRE_LENGTH_PREFIX + n; /* the envelope in a batch */
  if (b->n && b->n + framed > BATCH_MAX) flush(c);
  if (b->n + framed > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + framed) cap *= 2;
    char *p = realloc(b->buf, cap);
    if (p == NULL) return -1;
    b->buf = p;
    b->cap = cap;
  }
  tend_wire_put_length((unsigned char *)b->buf + b->n, n);
  memcpy(b->buf + b->n + TEND_WIRE_LENGTH_PREFIX, data, n);
  b->n += framed;
  if (c->queued++ == 0) { /* the first since the last flush */
    uv_prepare_start(&c->prepare, on_prepare);
    tend_sched_return_within(c->h, BATCH_STEPS);
  }
  return 0;
}

int tend_nats_publish(tend_nats *c, const char *subject, const char *data,
                      size_t n, const char *reply) {
  if (c->nc == NULL) return -1;
  natsStatus s =
      reply ? natsConnection_PublishRequest(c->nc, subject, reply, data, (int)n)
            : natsConnection_Publish(c->nc, subject, data, (int)n);
  return s == NATS_OK ? 0 : -1;
}

int tend_nats_subscribe(lua_State *L, tend_nats *c, const char *subject,
                        int fn) {
  fn = lua_absindex(L, fn);
  if (c->nc == NULL) {
    lua_pushliteral(L, "the connection is closed");
    return 0;
  }
  if (c->n_subs == c->cap_subs) {
    int cap = c->cap_subs ? 2 * c->cap_subs : 8;
    sub **v = realloc(c->subs, (size_t)cap * sizeof *v);
    if (v == NULL) {
      lua_pushliteral(L, "out of memory");
      return 0;
    }
    c->subs = v;
    c->cap_subs = cap;
  }
  sub *s = calloc(1, sizeof *s);
  if (s == NULL) {
    lua_pushliteral(L, "out of memory");
    return 0;
  }
  s->c = c;
  s->id = c->n_subs + 1;
  lua_rawgeti(L, LUA_REGISTRYINDEX, c->fns_ref);
  lua_pushvalue(L, fn);
  lua_rawseti(L, -2, s->id);
  lua_pop(L, 1);
  natsStatus st = natsConnection_SubscribeSync(&s->ns, c->nc, subject);
  if (st != NATS_OK) {
    lua_pushstring(L, natsStatus_GetText(st));
    free(s);
    return 0;
  }
  c->subs[c->n_subs++] = s;
  return s->id;
}

void tend_nats_unsubscribe(tend_nats *c, int id) {
  if (id < 1 || id > c->n_subs || c->subs[id - 1]->ns == NULL) return;
  sub *s = c->subs[id - 1];
  natsSubscription_Unsubscribe(s->ns);
  natsSubscription_Destroy(s->ns);
  s->ns = NULL;
  lua_State *L = c->h->L;
  lua_rawgeti(L, LUA_REGISTRYINDEX, c->fns_ref);
  lua_pushnil(L);
  lua_rawseti(L, -2, id); /* what is queued already is dropped */
  lua_pop(L, 1);
}

const char *tend_nats_status(tend_nats *c) {
  if (c->nc == NULL) return "closed";
  switch (natsConnection_Status(c->nc)) {
    case NATS_CONN_STATUS_CONNECTED: return "connected";
    case NATS_CONN_STATUS_RECONNECTING:
    case NATS_CONN_STATUS_CONNECTING:
    case NATS_CONN_STATUS_DISCONNECTED: return "reconnecting";
    default: return "closed";
  }
}

void tend_nats_close(tend_nats *c) {
  if (c->nc == NULL) return;
  flush(c);
  if (c->jobs) { /* a worker uses the connection: after the last one */
    c->closing = 1;
    return;
  }
  for (int i = 0; i < c->n_subs; i++)
    if (c->subs[i]->ns) {
      natsSubscription_Destroy(c->subs[i]->ns);
      c->subs[i]->ns = NULL;
    }
  natsConnection_Close(c->nc);
  natsConnection_Destroy(c->nc);
  c->nc = NULL;
  on_status(c, "closed");
}

void tend_nats_close_every(tend_host *h) {
  for (tend_nats *c = h->nats; c; c = c->next) tend_nats_close(c);
}

/* ------------------------------------------------------------ key-value */

typedef struct kv_job {
  uv_work_t work;
  tend_nats *c;
  tend_kv_args a; /* its strings owned */
  uint32_t wait_id, wait_gen;
  natsStatus status;
  char *value;
  int n;
  uint64_t rev;
  kvKeysList keys;
  int has_keys;
  char why[256]; /* cnats's text for a failure (per thread: taken there) */
} kv_job;

static natsStatus kv_run(kv_job *j) {
  jsCtx *js = NULL;
  kvStore *kv = NULL;
  natsStatus s = natsConnection_JetStream(&js, j->c->nc, NULL);
  if (s != NATS_OK) return s;
  if (j->a.op == TEND_KV_BUCKET) {
    s = js_KeyValue(&kv, js, j->a.bucket);
    if (s == NATS_NOT_FOUND) {
      kvConfig cfg;
      kvConfig_Init(&cfg);
      cfg.Bucket = j->a.bucket;
      cfg.History = 1;
      cfg.TTL = j->a.ttl_s * 1000000000; /* nanoseconds (a Go duration) */
      s = js_CreateKeyValue(&kv, js, &cfg);
    }
  } else {
    s = js_KeyValue(&kv, js, j->a.bucket);
  }
  if (s == NATS_OK) {
    kvEntry *e = NULL;
    int n = (int)j->a.n;
    switch (j->a.op) {
      case TEND_KV_BUCKET: break;
      case TEND_KV_GET:
        s = kvStore_Get(&e, kv, j->a.key);
        if (s == NATS_OK) {
          j->n = kvEntry_ValueLen(e);
          j->value = copy(kvEntry_Value(e), (size_t)j->n);
          j->rev = kvEntry_Revision(e);
          kvEntry_Destroy(e);
        }
        break;
      case TEND_KV_CREATE:
        s = kvStore_Create(&j->rev, kv, j->a.key, j->a.value, n);
        break;
      case TEND_KV_PUT:
        s = kvStore_Put(&j->rev, kv, j->a.key, j->a.value, n);
        break;
      case TEND_KV_UPDATE:
        s = kvStore_Update(&j->rev, kv, j->a.key, j->a.value, n, j->a.revision);
        break;
      case TEND_KV_DELETE: s = kvStore_Delete(kv, j->a.key); break;
      case TEND_KV_KEYS:
        s = kvStore_Keys(&j->keys, kv, NULL);
        if (s == NATS_OK) j->has_keys = 1;
        if (s == NATS_NOT_FOUND) s = NATS_OK; /* no keys */
        break;
    }
  }
  kvStore_Destroy(kv);
  jsCtx_Destroy(js);
  return s;
}

static void kv_work(uv_work_t *w) {
  kv_job *j = w->data;
  j->status = kv_run(j); /* nc stays while jobs > 0 (tend_nats_close) */
  if (j->status != NATS_OK) {
    const char *e = nats_GetLastError(NULL);
    snprintf(j->why, sizeof j->why, "%s",
             e && *e ? e : natsStatus_GetText(j->status));
  }
  nats_ReleaseThreadMemory(); /* cnats's per-thread error state: libuv's
                                 workers outlive the host */
}

static void kv_free(kv_job *j) {
  free((char *)j->a.bucket);
  free((char *)j->a.key);
  free((char *)j->a.value);
  free(j->value);
  if (j->has_keys) kvKeysList_Destroy(&j->keys);
  free(j);
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The result table: {ok = true, value, revision, keys} or {ok = false,
 * reason}; a missing key, a create of a present one and an update from a
 * wrong revision are answers, not failures (ok, with reason). */
static void push_result(lua_State *L, kv_job *j) {
  lua_createtable(L, 0, 4);
  natsStatus s = j->status;
  int answer = s == NATS_OK || (j->a.op == TEND_KV_GET && s == NATS_NOT_FOUND);
  const char *reason = NULL;
  if (j->a.op == TEND_KV_CREATE && s == NATS_ERR) { /* "wrong last
                                                        sequence" */
    answer = 1;
    reason = "exists";
  } else if (j->a.op == TEND_KV_UPDATE && s == NATS_ERR) {
    answer = 1;
    reason = "wrong revision";
  }
  lua_pushboolean(L, answer);
  lua_setfield(L, -2, "ok");
  if (!answer) reason = j->why;
  if (reason) {
    lua_pushstring(L, reason);
    lua_setfield(L, -2, "reason");
  }
  if (s == NATS_OK && j->value) {
    lua_pushlstring(L, j->value, (size_t)j->n);
    lua_setfield(L, -2, "value");
  }
  if (s == NATS_OK && j->rev) {
    lua_pushinteger(L, (lua_Integer)j->rev);
    lua_setfield(L, -2, "revision");
  }
  if (j->a.op == TEND_KV_KEYS && s == NATS_OK) {
    int n = j->has_keys ? j->keys.Count : 0;
    if (n > 1) qsort(j->keys.Keys, (size_t)n, sizeof(char *), by_name);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
      lua_pushstring(L, j->keys.Keys[i]);
      lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "keys");
  }
}

static void kv_done(uv_work_t *w, int status) {
  (void)status;
  kv_job *j = w->data;
  tend_host *h = j->c->h;
  if (--j->c->jobs == 0 && j->c->closing) tend_nats_close(j->c);
  tend_promise *pr =
      h->L ? tend_slots_get(&h->ids, j->wait_id, j->wait_gen) : NULL;
  if (pr && pr->kind == TEND_ENTITY_PROMISE) {
    lua_State *L = h->L;
    push_result(L, j);
    tend_value v;
    if (tend_value_store(L, h, -1, &v) == 0 &&
        !tend_promise_resolve(L, h, pr, v))
      tend_value_drop(L, h, &v);
    lua_pop(L, 1);
    tend_host_poke(h);
  }
  kv_free(j);
}

static char *dup_or_null(const char *s, size_t n) {
  return s ? copy(s, n) : NULL;
}

int tend_nats_kv(lua_State *L, tend_nats *c, tend_actor *a,
                 const tend_kv_args *k) {
  kv_job *j = calloc(1, sizeof *j);
  if (j == NULL) {
    lua_pushliteral(L, "out of memory");
    return -1;
  }
  j->c = c;
  j->a = *k;
  j->a.bucket = dup_or_null(k->bucket, k->bucket ? strlen(k->bucket) : 0);
  j->a.key = dup_or_null(k->key, k->key ? strlen(k->key) : 0);
  j->a.value = dup_or_null(k->value, k->n);
  j->work.data = j;
  if (uv_queue_work(&c->h->loop, &j->work, kv_work, kv_done) != 0) {
    kv_free(j);
    lua_pushliteral(L, "no worker thread");
    return -1;
  }
  c->jobs++;
  tend_promise *pr = tend_promise_new(L, c->h, a, -1, "nats kv");
  j->wait_id = pr->id;
  j->wait_gen = pr->gen;
  return 0;
}

const tend_driver tend_nats_driver = {
    .name = "nats", .tree_gone = tend_nats_close_every, .close_all = close_all};
