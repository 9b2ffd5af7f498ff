/* simnodes: simulated nodes stepped by the world (see simnodes.h). */
#include "runtime/nodes/simnodes.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/core/event.h"
#include "runtime/nodes/wire.h"

#define TO_NODE_LEN (sizeof TEND_WIRE_TO_NODE - 1) /* "tend.n." */

/* A node of the world. */
typedef struct simnode {
  char *name;               /* owned */
  tend_host *h;             /* its host; NULL once crashed or ended */
  int own;                  /* 1: h is the node's own (closed with it); 0:
                               the world itself */
  uint64_t inc;             /* incarnation: 1, then one more per restart */
  tend_simnode_state state; /* up, crashed, ended */
} simnode;

/* A link between two nodes (i < j), both directions. */
typedef struct simlink {
  int i, j;            /* the nodes */
  int cut;             /* 1: partitioned */
  int64_t latency;     /* ns per delivery */
  int64_t jitter;      /* plus uniform 0..jitter ns */
  int64_t last_due[2]; /* the last delivery's due time, i->j and j->i: a
                          later one never overtakes it */
} simlink;

/* Bytes on their way, in a list sorted by (due, seq). */
typedef struct simmsg {
  struct simmsg *next;
  int64_t due;
  uint64_t seq;  /* tie-break: the order they were published */
  int to;        /* the node */
  uint64_t inc;  /* the incarnation they were sent to */
  char *subject; /* owned (one block with data) */
  char *data;    /* inside the same block */
  size_t len;
} simmsg;

/* A key-value entry. */
typedef struct simkv {
  char *bucket, *key; /* owned */
  char *value;        /* owned */
  size_t len;
  uint64_t rev;    /* its revision */
  int64_t written; /* when it was last written */
} simkv;

typedef struct simbucket {
  char *name;  /* owned */
  int64_t ttl; /* ns; 0: entries stay */
} simbucket;

struct tend_simworld {
  tend_host *world; /* the host these nodes are stepped by */
  simnode *nodes;
  int n, cap;
  simlink *links;
  int n_links, cap_links;
  simmsg *queue; /* in flight, soonest first */
  uint64_t seq;  /* publishes so far */
  simkv *kv;
  int n_kv, cap_kv;
  simbucket *buckets;
  int n_buckets, cap_buckets;
  uint64_t rev; /* the store's last revision */
};

static int grow(void **p, int *cap, int need, size_t size) {
  if (need <= *cap) return 0;
  int c = *cap ? *cap * 2 : 8;
  while (c < need) c *= 2;
  void *q = realloc(*p, (size_t)c * size);
  if (q == NULL) return -1;
  *p = q;
  *cap = c;
  return 0;
}

static char *dup(const char *s) {
  size_t n = strlen(s) + 1;
  char *c = malloc(n);
  if (c) memcpy(c, s, n);
  return c;
}

/* ------------------------------------------------------------ hooks */

/* The world's clock now: a node's clock is moved to it before it runs. */
static void sync_clock(tend_host *world, tend_host *node) {
  if (node != world) tend_clock_jump(&node->clock, world->clock.now);
}

static void close_node(tend_simworld *w, int i, tend_simnode_state state) {
  simnode *s = &w->nodes[i];
  if (s->state != TEND_SIMNODE_UP) return;
  s->state = state;
  tend_host *h = s->h;
  s->h = NULL;
  if (h == NULL || !s->own) return;
  sync_clock(w->world, h); /* what it says as it goes is said now */
  tend_host_close(h);
}

/* Hands one delivery to its node's dispatch function. */
static void deliver(tend_host *world, simmsg *m) {
  simnode *s = &world->sim->nodes[m->to];
  tend_host *h = s->h;
  if (s->state != TEND_SIMNODE_UP || s->inc != m->inc || h == NULL ||
      h->sim_dispatch_ref == LUA_NOREF)
    return; /* gone meanwhile: NATS drops it too */
  sync_clock(world, h);
  lua_State *L = h->L;
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->sim_dispatch_ref);
  lua_pushstring(L, m->subject);
  lua_pushlstring(L, m->data, m->len);
  if (lua_pcall(L, 2, 0, 0) != LUA_OK) {
    tend_host_log(h, TEND_LOG_WARN, "/system/node", "a delivery failed: %s",
                  luaL_tolstring(L, -1, NULL));
    lua_pop(L, 2);
  }
}

/* The world's pump, at its current time: every due delivery, then a turn
 * of each node. A node whose tree has stopped is closed. */
static void step(tend_host *world) {
  tend_simworld *w = world->sim;
  int64_t now = world->clock.now;
  while (w->queue && w->queue->due <= now) {
    simmsg *m = w->queue;
    w->queue = m->next;
    deliver(world, m);
    free(m->subject);
    free(m);
  }
  for (int i = 0; i < w->n; i++) {
    simnode *s = &w->nodes[i];
    if (s->state != TEND_SIMNODE_UP || !s->own) continue;
    sync_clock(world, s->h);
    tend_host_turn(s->h);
    if (s->h->user == NULL && s->h->system == NULL)
      close_node(w, i, TEND_SIMNODE_ENDED);
  }
}

/* The earliest time anything of the nodes is due, or -1; *busy: a node
 * can run now. */
static int64_t next_due(tend_host *world, int *busy) {
  tend_simworld *w = world->sim;
  int64_t next = w->queue ? w->queue->due : -1;
  *busy = 0;
  for (int i = 0; i < w->n; i++) {
    simnode *s = &w->nodes[i];
    if (s->state != TEND_SIMNODE_UP || !s->own) continue;
    if (s->h->runq_head) *busy = 1;
    tend_timer *t = tend_timer_heap_top(&s->h->timers);
    if (t && (next < 0 || t->due < next)) next = t->due;
  }
  return next;
}

static void close_all(tend_host *world) {
  tend_simworld *w = world->sim;
  if (w == NULL) return;
  for (int i = 0; i < w->n; i++) {
    close_node(w, i, TEND_SIMNODE_ENDED);
    free(w->nodes[i].name);
  }
  while (w->queue) {
    simmsg *m = w->queue;
    w->queue = m->next;
    free(m->subject);
    free(m);
  }
  for (int i = 0; i < w->n_kv; i++) {
    free(w->kv[i].bucket);
    free(w->kv[i].key);
    free(w->kv[i].value);
  }
  for (int i = 0; i < w->n_buckets; i++) free(w->buckets[i].name);
  free(w->kv);
  free(w->buckets);
  free(w->links);
  free(w->nodes);
  free(w);
  world->sim = NULL;
}

/* ------------------------------------------------------------ nodes */

static tend_simworld *world_of(tend_host *world) {
  if (world->sim) return world->sim;
  world->sim = calloc(1, sizeof *world->sim);
  if (world->sim) {
    world->sim->world = world;
  }
  return world->sim;
}

int tend_sim_find(const tend_host *world, const char *name) {
  const tend_simworld *w = world->sim;
  for (int i = 0; w && i < w->n; i++)
    if (strcmp(w->nodes[i].name, name) == 0) return i;
  return -1;
}

uint64_t tend_sim_add(tend_host *world, const char *name, tend_host *node) {
  tend_simworld *w = world_of(world);
  if (w == NULL) return 0;
  int i = tend_sim_find(world, name);
  if (i < 0) {
    char *copy = dup(name);
    if (copy == NULL ||
        grow((void **)&w->nodes, &w->cap, w->n + 1, sizeof *w->nodes)) {
      free(copy);
      return 0;
    }
    i = w->n++;
    memset(&w->nodes[i], 0, sizeof w->nodes[i]);
    w->nodes[i].name = copy;
  }
  simnode *s = &w->nodes[i];
  s->h = node;
  s->own = node != world;
  s->inc++;
  s->state = TEND_SIMNODE_UP;
  if (node != world) node->world = world;
  node->sim_node = i + 1;
  return s->inc;
}

uint64_t tend_sim_inc(const tend_host *world, int i) {
  return world->sim->nodes[i].inc;
}

tend_simnode_state tend_sim_state(const tend_host *world, int i) {
  return world->sim->nodes[i].state;
}

int tend_sim_count(const tend_host *world) {
  return world->sim ? world->sim->n : 0;
}

const char *tend_sim_name(const tend_host *world, int i) {
  return world->sim->nodes[i].name;
}

void tend_sim_set_dispatch(lua_State *L, tend_host *h, int fn) {
  luaL_unref(L, LUA_REGISTRYINDEX, h->sim_dispatch_ref);
  lua_pushvalue(L, fn);
  h->sim_dispatch_ref = luaL_ref(L, LUA_REGISTRYINDEX);
}

void tend_sim_crash(tend_host *world, int i) {
  close_node(world->sim, i, TEND_SIMNODE_CRASHED);
}

void tend_sim_stop_all(tend_host *world) {
  tend_simworld *w = world->sim;
  for (int i = 0; w && i < w->n; i++) {
    simnode *s = &w->nodes[i];
    if (s->state == TEND_SIMNODE_UP && !s->own) s->state = TEND_SIMNODE_ENDED;
    if (s->state == TEND_SIMNODE_UP && !s->h->shutdown) {
      sync_clock(world, s->h);
      tend_host_shutdown(s->h, 0);
    }
  }
}

/* ------------------------------------------------------------ the bus */

static simlink *link_of(tend_simworld *w, int i, int j, int make) {
  if (i > j) {
    int t = i;
    i = j;
    j = t;
  }
  for (int k = 0; k < w->n_links; k++)
    if (w->links[k].i == i && w->links[k].j == j) return &w->links[k];
  if (!make ||
      grow((void **)&w->links, &w->cap_links, w->n_links + 1, sizeof *w->links))
    return NULL;
  simlink *l = &w->links[w->n_links++];
  memset(l, 0, sizeof *l);
  l->i = i;
  l->j = j;
  return l;
}

void tend_sim_link(tend_host *world, int i, int j, int cut, int64_t latency,
                   int64_t jitter) {
  simlink *l = link_of(world->sim, i, j, 1);
  if (l == NULL) return;
  if (cut >= 0) l->cut = cut;
  if (latency >= 0) l->latency = latency;
  if (jitter >= 0) l->jitter = jitter;
}

void tend_sim_heal(tend_host *world) {
  tend_simworld *w = world->sim;
  for (int k = 0; w && k < w->n_links; k++) {
    w->links[k].cut = 0;
    w->links[k].latency = w->links[k].jitter = 0;
  }
}

static void drop_event(tend_host *world, int from, int to, const char *why) {
  char path[256], other[256];
  snprintf(path, sizeof path, "/node/%s", world->sim->nodes[to].name);
  snprintf(other, sizeof other, "/node/%s", world->sim->nodes[from].name);
  tend_event e = TEND_EVENT_INIT(TEND_EV_NODE, NULL);
  e.path = path;
  e.to = other;
  e.detail = why;
  tend_event_emit(world->L, world, &e);
}

/* One delivery from node `from` to node `to`, queued after its link's
 * latency, never before the link's last one. */
static void send_one(tend_host *world, int from, int to, const char *subject,
                     const char *data, size_t len) {
  tend_simworld *w = world->sim;
  simnode *t = &w->nodes[to];
  if (t->state != TEND_SIMNODE_UP) return; /* nobody subscribes there */
  simlink *l = link_of(w, from, to, 1);
  if (l && l->cut) { /* heartbeats are dropped without a word */
    if (strncmp(subject, TEND_WIRE_TO_NODE, TO_NODE_LEN) == 0)
      drop_event(world, from, to, "drop: partitioned");
    return;
  }
  int64_t delay = l ? l->latency : 0;
  if (l && l->jitter > 0)
    delay += (int64_t)(tend_rng_double(&world->rng) * (double)l->jitter);
  int64_t due = world->clock.now + delay;
  if (l) {
    int64_t *last = &l->last_due[from < to ? 0 : 1];
    if (due < *last) due = *last;
    *last = due;
  }
  size_t ns = strlen(subject) + 1;
  simmsg *m = malloc(sizeof *m);
  char *block = malloc(ns + len + 1);
  if (m == NULL || block == NULL) {
    free(m);
    free(block);
    return; /* out of memory: lost, as on a network */
  }
  memcpy(block, subject, ns);
  memcpy(block + ns, data, len);
  *m = (simmsg){.due = due,
                .seq = ++w->seq,
                .to = to,
                .inc = t->inc,
                .subject = block,
                .data = block + ns,
                .len = len};
  simmsg **p = &w->queue;
  while (*p && ((*p)->due < due || ((*p)->due == due && (*p)->seq < m->seq)))
    p = &(*p)->next;
  m->next = *p;
  *p = m;
}

void tend_sim_publish(tend_host *h, const char *subject, const char *data,
                      size_t len) {
  tend_host *world = h->world ? h->world : h;
  if (world->sim == NULL || h->sim_node == 0) return;
  tend_simworld *w = world->sim;
  int from = (int)h->sim_node - 1;
  if (strncmp(subject, TEND_WIRE_TO_NODE, TO_NODE_LEN) == 0) {
    int to = tend_sim_find(world, subject + TO_NODE_LEN);
    if (to >= 0 && to != from) send_one(world, from, to, subject, data, len);
    return;
  }
  for (int to = 0; to < w->n; to++) /* a subject every node takes */
    if (to != from) send_one(world, from, to, subject, data, len);
}

/* ------------------------------------------------------------ key-value */

static simbucket *bucket_of(tend_simworld *w, const char *name) {
  for (int i = 0; i < w->n_buckets; i++)
    if (strcmp(w->buckets[i].name, name) == 0) return &w->buckets[i];
  return NULL;
}

static void remove_at(tend_simworld *w, int i) {
  free(w->kv[i].bucket);
  free(w->kv[i].key);
  free(w->kv[i].value);
  w->kv[i] = w->kv[--w->n_kv];
}

/* Entries past their bucket's ttl go (JetStream's MaxAge). */
static void purge(tend_host *world) {
  tend_simworld *w = world->sim;
  for (int i = 0; i < w->n_kv;) {
    simbucket *b = bucket_of(w, w->kv[i].bucket);
    if (b && b->ttl > 0 && world->clock.now - w->kv[i].written >= b->ttl)
      remove_at(w, i);
    else
      i++;
  }
}

/* The live entry of bucket/key, or -1. */
static int find_kv(tend_host *world, const char *bucket, const char *key) {
  tend_simworld *w = world->sim;
  purge(world);
  for (int i = 0; i < w->n_kv; i++)
    if (strcmp(w->kv[i].bucket, bucket) == 0 && strcmp(w->kv[i].key, key) == 0)
      return i;
  return -1;
}

tend_simkv_result tend_simkv_bucket(tend_host *world, const char *bucket,
                                    int64_t ttl) {
  tend_simworld *w = world_of(world);
  if (w == NULL) return TEND_SIMKV_NOMEM;
  simbucket *b = bucket_of(w, bucket);
  if (b == NULL) {
    char *name = dup(bucket);
    if (name == NULL || grow((void **)&w->buckets, &w->cap_buckets,
                             w->n_buckets + 1, sizeof *w->buckets)) {
      free(name);
      return TEND_SIMKV_NOMEM;
    }
    b = &w->buckets[w->n_buckets++];
    b->name = name;
  }
  b->ttl = ttl;
  return TEND_SIMKV_OK;
}

tend_simkv_result tend_simkv_get(tend_host *world, const char *bucket,
                                 const char *key, const char **value,
                                 size_t *len, uint64_t *rev) {
  if (world_of(world) == NULL) return TEND_SIMKV_NOMEM;
  int i = find_kv(world, bucket, key);
  if (i < 0) return TEND_SIMKV_NONE;
  simkv *e = &world->sim->kv[i];
  *value = e->value;
  *len = e->len;
  *rev = e->rev;
  return TEND_SIMKV_OK;
}

tend_simkv_result tend_simkv_write(tend_host *world, char op,
                                   const char *bucket, const char *key,
                                   const char *value, size_t len,
                                   uint64_t *rev) {
  tend_simworld *w = world_of(world);
  if (w == NULL) return TEND_SIMKV_NOMEM;
  int i = find_kv(world, bucket, key);
  if (op == 'c' && i >= 0) return TEND_SIMKV_EXISTS;
  if (op == 'u' && (i < 0 || w->kv[i].rev != *rev)) return TEND_SIMKV_WRONG;
  char *copy = malloc(len + 1);
  if (copy == NULL) return TEND_SIMKV_NOMEM;
  memcpy(copy, value, len);
  copy[len] = '\0';
  if (i < 0) {
    char *b = dup(bucket), *k = dup(key);
    if (b == NULL || k == NULL ||
        grow((void **)&w->kv, &w->cap_kv, w->n_kv + 1, sizeof *w->kv)) {
      free(b);
      free(k);
      free(copy);
      return TEND_SIMKV_NOMEM;
    }
    i = w->n_kv++;
    w->kv[i] = (simkv){.bucket = b, .key = k};
  }
  simkv *e = &w->kv[i];
  free(e->value);
  e->value = copy;
  e->len = len;
  e->rev = ++w->rev;
  e->written = world->clock.now;
  *rev = e->rev;
  return TEND_SIMKV_OK;
}

void tend_simkv_delete(tend_host *world, const char *bucket, const char *key) {
  if (world->sim == NULL) return;
  int i = find_kv(world, bucket, key);
  if (i >= 0) remove_at(world->sim, i);
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

void tend_simkv_push_keys(lua_State *L, tend_host *world, const char *bucket) {
  tend_simworld *w = world_of(world);
  lua_newtable(L);
  if (w == NULL || w->n_kv == 0) return;
  const char **keys = malloc((size_t)w->n_kv * sizeof *keys);
  if (keys == NULL) return;
  purge(world);
  int n = 0;
  for (int i = 0; i < w->n_kv; i++)
    if (strcmp(w->kv[i].bucket, bucket) == 0) keys[n++] = w->kv[i].key;
  qsort(keys, (size_t)n, sizeof *keys, by_name);
  for (int i = 0; i < n; i++) {
    lua_pushstring(L, keys[i]);
    lua_rawseti(L, -2, i + 1);
  }
  free(keys);
}

/* ------------------------------------------------------------ driver */

static void step_world(tend_host *h) {
  if (h->sim) step(h);
}

static int64_t next_due_world(tend_host *h, int *busy) {
  return h->sim ? next_due(h, busy) : -1;
}

const tend_driver tend_simnodes_driver = {.name = "simulated nodes",
                                          .shutdown = tend_sim_stop_all,
                                          .close_all = close_all,
                                          .next_due = next_due_world,
                                          .step = step_world};
