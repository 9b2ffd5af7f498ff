/* schedulers: several schedulers in one process (see schedulers.h). */
#include "runtime/nodes/schedulers.h"

#include <lauxlib.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mpsc.h"
#include "runtime/core/lifecycle.h"
#include "runtime/core/send.h"
#include "runtime/core/value.h"
#include "runtime/nodes/codec.h"
#include "runtime/nodes/remote.h"

/* What an envelope carries from one scheduler to another. */
typedef enum env_kind {
  ENV_MSG,     /* data: the message, then its sender (a ref or nil), for
                  (to_id, to_gen); a: where the sender's bytes begin */
  ENV_WATCH,   /* the proxy (a, b) on `from` watches (to_id, to_gen) */
  ENV_DOWN,    /* data: {reason}: the proxy (to_id, to_gen) ends */
  ENV_CONTROL, /* (to_id, to_gen) is stopped (a = 0), or gets a Kill or a
                  PoisonPill (a: its tend_msg_kind) */
  ENV_SPAWN,   /* data: the request (spawn_req's strings, packed); the
                  answer goes to the pending ask (a, b) on `from` */
  ENV_QUIT     /* the scheduler's tree stops (a = 1: at once) */
} env_kind;

typedef struct envelope {
  tend_mpsc_node node; /* first: a node is its envelope */
  env_kind kind;
  int from;               /* the scheduler it comes from */
  uint32_t to_id, to_gen; /* its target on the scheduler it goes to */
  uint32_t a, b;          /* see env_kind */
  size_t len;
  char data[]; /* msgpack (codec.h) */
} envelope;

/* A name under /user, taken on one scheduler (names are unique across). */
typedef struct user_name {
  char *name;
  int sched;
} user_name;

struct tend_scheds {
  int n;
  int threaded; /* real clock: 1..n-1 each run on a thread of its own */
  tend_host *h[TEND_SCHEDULERS_MAX];
  tend_mpsc inbox[TEND_SCHEDULERS_MAX];
  /* Real clock: each one's wake-up on its loop, and whether it is open
   * (posting to a closed one drops the envelope), under lock[k]. */
  uv_async_t *wake[TEND_SCHEDULERS_MAX];
  int open[TEND_SCHEDULERS_MAX];
  uv_mutex_t lock[TEND_SCHEDULERS_MAX];
  uv_thread_t thread[TEND_SCHEDULERS_MAX];
  int busy_flag[TEND_SCHEDULERS_MAX]; /* its own thread's view */
  atomic_int pending;                 /* envelopes posted, not yet taken */
  atomic_int busy;                    /* schedulers 1..n-1 with work */
  atomic_uint seq;                    /* anonymous names' counter */
  atomic_uint turn;                   /* "spread" under the real clock */
  uv_sem_t ready;                     /* a thread opened its host (or not) */
  int failed;                         /* a thread could not open its host */
  uv_mutex_t names_lock;
  user_name *names;
  int n_names, cap_names;
};

#define NO_LIMIT ((size_t)1 << 30) /* the codec's bound within a process */
#define AWAY "move to another scheduler" /* the codec's words for a refusal */

int tend_schedulers_count(const tend_host *h) {
  return h->scheds ? h->scheds->n : 1;
}

int tend_schedulers_index(const tend_host *h) {
  return (int)h->sched_index;
}

int tend_schedulers_threaded(const tend_host *h) {
  return h->scheds && h->scheds->threaded;
}

int tend_schedulers_least_loaded(const tend_host *h) {
  tend_scheds *s = h->scheds;
  if (s == NULL) return 0;
  if (s->threaded) /* the others' counts are theirs: each in turn */
    return (int)(atomic_fetch_add(&s->turn, 1) % (unsigned)s->n);
  int best = 0;
  uint64_t least = UINT64_MAX;
  for (int k = 0; k < s->n; k++) {
    if (s->h[k] == NULL) continue;
    tend_counts c;
    tend_host_counts(s->h[k], &c);
    if (c.actors < least) {
      least = c.actors;
      best = k;
    }
  }
  return best;
}

/* ------------------------------------------------------------ names */

void tend_schedulers_claim_name(lua_State *L, tend_host *h, int name,
                                const char *fn) {
  tend_scheds *s = h->scheds;
  if (s == NULL) return;
  const char *n = lua_tostring(L, name);
  int taken = -1;
  uv_mutex_lock(&s->names_lock);
  for (int i = 0; i < s->n_names && taken < 0; i++)
    if (strcmp(s->names[i].name, n) == 0) taken = s->names[i].sched;
  char *copy = taken < 0 ? strdup(n) : NULL;
  if (copy && s->n_names == s->cap_names) {
    int cap = s->cap_names ? 2 * s->cap_names : 16;
    user_name *v = realloc(s->names, (size_t)cap * sizeof *v);
    if (v) {
      s->names = v;
      s->cap_names = cap;
    }
  }
  if (copy && s->n_names < s->cap_names)
    s->names[s->n_names++] = (user_name){copy, (int)h->sched_index};
  else
    free(copy);
  uv_mutex_unlock(&s->names_lock);
  if (taken >= 0)
    luaL_error(L,
               "%s: name '%s' is already taken: /user/%s exists on "
               "scheduler %d",
               fn, n, n, taken);
}

/* The name of a's (a child of /user) goes. */
static void release_name(lua_State *L, tend_host *h, tend_actor *a) {
  tend_scheds *s = h->scheds;
  tend_actor_push_path(L, h, a);
  const char *n = lua_tostring(L, -1) + strlen("/user/");
  uv_mutex_lock(&s->names_lock);
  for (int i = 0; i < s->n_names; i++) {
    if (s->names[i].sched != (int)h->sched_index ||
        strcmp(s->names[i].name, n) != 0)
      continue;
    free(s->names[i].name);
    s->names[i] = s->names[--s->n_names];
    break;
  }
  uv_mutex_unlock(&s->names_lock);
  lua_pop(L, 1);
}

/* ------------------------------------------------------------ envelopes */

/* Queues an envelope for scheduler `to` (data: len bytes, may be NULL)
 * and wakes it. Returns -1 when out of memory or `to` is closed. */
static int post(tend_host *h, int to, env_kind kind, uint32_t to_id,
                uint32_t to_gen, uint32_t a, uint32_t b, const char *data,
                size_t len) {
  tend_scheds *s = h->scheds;
  envelope *e = malloc(sizeof *e + len);
  if (e == NULL) return -1;
  e->kind = kind;
  e->from = (int)h->sched_index;
  e->to_id = to_id;
  e->to_gen = to_gen;
  e->a = a;
  e->b = b;
  e->len = len;
  if (len) memcpy(e->data, data, len);
  if (!s->threaded) {
    atomic_fetch_add(&s->pending, 1);
    tend_mpsc_push(&s->inbox[to], &e->node);
    return 0;
  }
  uv_mutex_lock(&s->lock[to]);
  if (!s->open[to]) {
    uv_mutex_unlock(&s->lock[to]);
    free(e);
    return -1;
  }
  /* counted before it can be taken: the count never drops to 0 while an
     envelope is on its way */
  atomic_fetch_add(&s->pending, 1);
  tend_mpsc_push(&s->inbox[to], &e->node);
  uv_async_send(s->wake[to]);
  uv_mutex_unlock(&s->lock[to]);
  return 0;
}

/* The coordinates of a proxy of this process's scheduler k: the key of
 * the proxies table. */
static void push_key(lua_State *L, int k, uint32_t id, uint32_t gen) {
  lua_pushfstring(L, "%d:%d:%d", k, (int)id, (int)gen);
}

static void push_proxies(lua_State *L, tend_host *h) {
  if (h->sched_proxies_ref == LUA_NOREF) {
    lua_newtable(L);
    lua_pushvalue(L, -1);
    h->sched_proxies_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return;
  }
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->sched_proxies_ref);
}

void tend_schedulers_push_proxy(lua_State *L, tend_host *h, int k, uint32_t id,
                                uint32_t gen, int path, int kind) {
  path = lua_absindex(L, path);
  push_proxies(L, h);
  push_key(L, k, id, gen);
  lua_rawget(L, -2);
  if (!lua_isnil(L, -1)) {
    lua_remove(L, -2);
    return;
  }
  lua_pop(L, 1);
  const char *node = h->node_name ? h->node_name : "";
  lua_pushstring(L, node);
  lua_pushinteger(L, (lua_Integer)h->node_inc);
  lua_pushinteger(L, id);
  lua_pushinteger(L, gen);
  lua_pushvalue(L, path);
  lua_pushinteger(L, kind | (k << 1));
  tend_actor *p = tend_remote_new(L, h, -6); /* pushes its ref */
  p->flags |= TEND_AF_SCHED;
  lua_replace(L, -7);
  lua_settop(L, lua_gettop(L) - 5); /* [proxies] ref */
  push_key(L, k, id, gen);
  lua_pushvalue(L, -2);
  lua_rawset(L, -4); /* proxies[key] = ref */
  lua_remove(L, -2);
  if (kind == 0 && post(h, k, ENV_WATCH, id, gen, p->id, p->gen, NULL, 0) != 0) {
    lua_pushliteral(L, "noproc"); /* its scheduler is gone */
    tend_remote_end(L, h, p, -1);
    lua_pop(L, 1);
  }
}

/* The scheduler, id, generation and kind of the proxy p. */
static void coords_of(lua_State *L, tend_host *h, tend_actor *p, int *k,
                      uint32_t *id, uint32_t *gen, int *kind) {
  tend_remote_push_coords(L, h, p);
  lua_rawgeti(L, -1, 3);
  lua_rawgeti(L, -2, 4);
  lua_rawgeti(L, -3, 6);
  *k = (int)(lua_tointeger(L, -1) >> 1);
  *kind = (int)(lua_tointeger(L, -1) & 1);
  *id = (uint32_t)lua_tointeger(L, -3);
  *gen = (uint32_t)lua_tointeger(L, -2);
  lua_pop(L, 4);
}

/* The proxy p ends with the reason at stack index reason. */
static void end_proxy(lua_State *L, tend_host *h, tend_actor *p, int reason) {
  reason = lua_absindex(L, reason);
  int k, kind;
  uint32_t id, gen;
  coords_of(L, h, p, &k, &id, &gen, &kind);
  push_proxies(L, h);
  push_key(L, k, id, gen);
  lua_pushnil(L);
  lua_rawset(L, -3);
  lua_pop(L, 1);
  tend_remote_end(L, h, p, reason);
}

/* A message v from (sid, sgen) to the proxy p leaves for p's scheduler
 * (v consumed). A value that cannot travel raises in the sender's code
 * (a coroutine), else is logged. */
static void sched_send(lua_State *L, tend_host *h, tend_actor *p,
                       tend_value *v, uint32_t sid, uint32_t sgen) {
  int top = lua_gettop(L);
  tend_value_take(L, h, v);
  if (tend_codec_encode_to(L, h, -1, NO_LIMIT, AWAY) != TEND_CODEC_OK) {
    if (L != h->L) lua_error(L);
    tend_host_log(h, TEND_LOG_WARN, NULL, "a message to another scheduler: %s",
                  lua_tostring(L, -1));
    lua_settop(L, top);
    return;
  }
  uint32_t split = (uint32_t)lua_rawlen(L, -1);
  tend_ref_push(L, h, sid, sgen); /* the sender: a ref, or nil */
  tend_codec_encode(L, h, -1, NO_LIMIT);
  lua_remove(L, -2);
  lua_concat(L, 2); /* the message's bytes (split of them), the sender's */
  size_t len;
  const char *bytes = lua_tolstring(L, -1, &len);
  int k, kind;
  uint32_t id, gen;
  coords_of(L, h, p, &k, &id, &gen, &kind);
  post(h, k, ENV_MSG, id, gen, split, 0, bytes, len); /* (gone: dropped) */
  lua_settop(L, top);
  if (kind == 1) { /* an ask's reply: one is all it takes */
    lua_pushliteral(L, "normal");
    end_proxy(L, h, p, -1);
    lua_pop(L, 1);
  }
}

/* The proxy p's actor is stopped (what < 0), killed or poisoned. */
static void sched_control(tend_host *h, tend_actor *p, int what) {
  int k, kind;
  uint32_t id, gen;
  coords_of(h->L, h, p, &k, &id, &gen, &kind);
  post(h, k, ENV_CONTROL, id, gen, what < 0 ? 0 : (uint32_t)what, 0, NULL, 0);
}

/* ------------------------------------------------------------ spawning */

typedef struct spawn_req {
  const char *factory;      /* "module.field" */
  const char *name;         /* or NULL */
  const char *path, *cpath; /* the spawner's package.path and cpath */
  const char *args;         /* msgpack of the args table, or NULL */
  size_t args_len;
  uint32_t id, gen; /* out */
  char *path_out;   /* out: its path, malloc'd */
} spawn_req;

/* Runs in the target scheduler's state: the actor under its /user. */
static int spawn_p(lua_State *L) {
  spawn_req *r = lua_touserdata(L, 1);
  tend_host *h = tend_host_of(L);
  if (h->user == NULL) return luaL_error(L, "its scheduler is stopping");
  const char *dot = strrchr(r->factory, '.');
  /* the modules are found where the spawner finds them */
  lua_getglobal(L, "package");
  if (lua_istable(L, -1)) {
    if (r->path) lua_pushstring(L, r->path), lua_setfield(L, -2, "path");
    if (r->cpath) lua_pushstring(L, r->cpath), lua_setfield(L, -2, "cpath");
  }
  lua_pop(L, 1);
  lua_getglobal(L, "require");
  lua_pushlstring(L, r->factory, (size_t)(dot - r->factory));
  lua_call(L, 1, 1);
  if (!lua_istable(L, -1))
    return luaL_error(L, "module '%s' is not a table", lua_tostring(L, -2));
  lua_getfield(L, -1, dot + 1);
  if (!lua_isfunction(L, -1))
    return luaL_error(L, "'%s' is not a function there", r->factory);
  int factory = lua_gettop(L);
  tend_spawn_opts o;
  tend_spawn_opts_init(&o);
  if (r->name) {
    lua_pushstring(L, r->name);
    o.name = lua_gettop(L);
  }
  if (r->args) {
    if (tend_codec_decode(L, h, r->args, r->args_len) != TEND_CODEC_OK)
      return lua_error(L);
    o.args = lua_gettop(L);
  }
  tend_actor_check_spawn(L, h, h->user, o.name, "tend.spawn");
  if (o.name) tend_schedulers_claim_name(L, h, o.name, "tend.spawn");
  tend_actor *a = tend_actor_spawn(L, h, h->user, factory, &o);
  r->id = a->id;
  r->gen = a->gen;
  tend_actor_push_path(L, h, a);
  r->path_out = strdup(lua_tostring(L, -1));
  return 0;
}

/* The request's strings packed into one buffer (ENV_SPAWN's data), and
 * back: five NUL-ended strings (empty: none), then the args' bytes. */
static void pack_req(luaL_Buffer *b, const spawn_req *r) {
  const char *f[4] = {r->factory, r->name, r->path, r->cpath};
  for (int i = 0; i < 4; i++) {
    if (f[i]) luaL_addstring(b, f[i]);
    luaL_addchar(b, '\0');
  }
  if (r->args) luaL_addlstring(b, r->args, r->args_len);
}

static void unpack_req(spawn_req *r, const char *data, size_t len) {
  const char **f[4] = {&r->factory, &r->name, &r->path, &r->cpath};
  const char *p = data;
  for (int i = 0; i < 4; i++) {
    *f[i] = *p ? p : NULL;
    p += strlen(p) + 1;
  }
  r->args = p < data + len ? p : NULL;
  r->args_len = (size_t)(data + len - p);
}

/* The request's fields from the caller's stack (factory, args, name);
 * pushes what must stay alive while r is used (args' bytes, package). */
static void fill_req(lua_State *L, tend_host *h, spawn_req *r, int factory,
                     int args, int name, const char *fn) {
  r->factory = lua_tostring(L, factory);
  if (name) r->name = lua_tostring(L, name);
  if (args) {
    if (tend_codec_encode_to(L, h, args, NO_LIMIT, AWAY) != TEND_CODEC_OK)
      luaL_error(L, "%s: args: %s", fn, lua_tostring(L, -1));
    r->args = lua_tolstring(L, -1, &r->args_len);
  }
  lua_getglobal(L, "package");
  if (lua_istable(L, -1)) {
    lua_getfield(L, -1, "path");
    r->path = lua_tostring(L, -1);
    lua_getfield(L, -2, "cpath");
    r->cpath = lua_tostring(L, -1);
  }
}

static void check_target(lua_State *L, tend_host *h, int k, int factory,
                         const char *fn) {
  int n = tend_schedulers_count(h);
  if (k < 0 || k >= n)
    luaL_error(L, "%s: scheduler: expected 0..%d, got %d", fn, n - 1, k);
  const char *spec = lua_tostring(L, factory);
  const char *dot = spec ? strrchr(spec, '.') : NULL;
  if (dot == NULL || dot == spec || dot[1] == '\0')
    luaL_error(L, "%s: factory: expected \"module.factory\", got %s", fn,
               luaL_typename(L, factory));
}

void tend_schedulers_spawn(lua_State *L, tend_host *h, int k, int factory,
                           int args, int name, const char *fn) {
  check_target(L, h, k, factory, fn);
  tend_scheds *s = h->scheds;
  int top = lua_gettop(L);
  spawn_req r = {0};
  fill_req(L, h, &r, factory, args, name, fn);
  lua_State *KL = s->h[k]->L; /* one thread under the virtual clock */
  lua_pushcfunction(KL, spawn_p);
  lua_pushlightuserdata(KL, &r);
  if (lua_pcall(KL, 1, 0, 0) != LUA_OK) {
    lua_pushfstring(L, "%s: on scheduler %d: %s", fn, k,
                    luaL_tolstring(KL, -1, NULL));
    lua_pop(KL, 2);
    lua_error(L);
  }
  lua_settop(L, top);
  lua_pushstring(L, r.path_out);
  free(r.path_out);
  tend_schedulers_push_proxy(L, h, k, r.id, r.gen, -1, 0);
  lua_remove(L, -2);
}

void tend_schedulers_spawn_request(lua_State *L, tend_host *h, int k,
                                   int factory, int args, int name,
                                   uint32_t ask_id, uint32_t ask_gen,
                                   const char *fn) {
  check_target(L, h, k, factory, fn);
  int top = lua_gettop(L);
  spawn_req r = {0};
  fill_req(L, h, &r, factory, args, name, fn);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  pack_req(&b, &r);
  luaL_pushresult(&b);
  size_t len;
  const char *data = lua_tolstring(L, -1, &len);
  if (post(h, k, ENV_SPAWN, 0, 0, ask_id, ask_gen, data, len) != 0)
    luaL_error(L, "%s: scheduler %d is stopping", fn, k);
  lua_settop(L, top);
}

/* ------------------------------------------------------------ arrivals */

/* Sends scheduler `to`'s pending ask (id, gen) the value at idx. */
static void answer(lua_State *L, tend_host *h, int to, uint32_t id,
                   uint32_t gen, int idx) {
  lua_pushvalue(L, idx);
  if (tend_codec_encode(L, h, -1, NO_LIMIT) == TEND_CODEC_OK) {
    uint32_t split = (uint32_t)lua_rawlen(L, -1);
    lua_pushnil(L); /* no sender */
    tend_codec_encode(L, h, -1, NO_LIMIT);
    lua_remove(L, -2);
    lua_concat(L, 2);
    size_t len;
    const char *bytes = lua_tolstring(L, -1, &len);
    post(h, to, ENV_MSG, id, gen, split, 0, bytes, len);
  }
  lua_pop(L, 2);
}

/* Runs in the receiving state: the envelope handed on. Protected
 * (lua_pcall): a malformed message is logged, not raised. */
static int arrive_p(lua_State *L) {
  tend_host *h = lua_touserdata(L, 1);
  envelope *e = lua_touserdata(L, 2);
  switch (e->kind) {
    case ENV_MSG: {
      if (tend_codec_decode(L, h, e->data, e->a) != TEND_CODEC_OK ||
          tend_codec_decode(L, h, e->data + e->a, e->len - e->a) !=
              TEND_CODEC_OK)
        return lua_error(L);
      const tend_ref *r = tend_ref_test(L, -1);
      uint32_t sid = r ? r->id : 0, sgen = r ? r->gen : 0;
      tend_actor_send(L, h, e->to_id, e->to_gen, -2, sid, sgen);
      return 0;
    }
    case ENV_WATCH: {
      tend_actor *a = tend_actor_live(h, e->to_id, e->to_gen);
      if (a == NULL) { /* gone already: the proxy ends at once */
        lua_createtable(L, 1, 0);
        lua_pushliteral(L, "noproc");
        lua_rawseti(L, -2, 1);
        if (tend_codec_encode(L, h, -1, NO_LIMIT) != TEND_CODEC_OK)
          return lua_error(L);
        size_t len;
        const char *b = lua_tolstring(L, -1, &len);
        post(h, e->from, ENV_DOWN, e->a, e->b, 0, 0, b, len);
        return 0;
      }
      /* watchers[id] = {from, proxy id, proxy gen, ...} */
      if (h->sched_watchers_ref == LUA_NOREF) {
        lua_newtable(L);
        h->sched_watchers_ref = luaL_ref(L, LUA_REGISTRYINDEX);
      }
      lua_rawgeti(L, LUA_REGISTRYINDEX, h->sched_watchers_ref);
      lua_rawgeti(L, -1, a->id);
      if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_rawseti(L, -3, a->id);
      }
      lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
      lua_pushinteger(L, e->from);
      lua_rawseti(L, -2, n + 1);
      lua_pushinteger(L, e->a);
      lua_rawseti(L, -2, n + 2);
      lua_pushinteger(L, e->b);
      lua_rawseti(L, -2, n + 3);
      a->flags |= TEND_AF_WATCHED_ABROAD;
      return 0;
    }
    case ENV_CONTROL: {
      tend_actor *a = tend_actor_live(h, e->to_id, e->to_gen);
      if (a == NULL || a->parent == NULL) return 0; /* gone, or a guardian */
      if (e->a == 0)
        tend_actor_stop(L, h, a, TEND_STOP_NORMAL);
      else if (e->a == TEND_MSG_KILL)
        tend_actor_send_kill(h, a);
      else
        tend_actor_send_poison(h, a);
      return 0;
    }
    case ENV_DOWN: {
      tend_actor *p = tend_actor_live(h, e->to_id, e->to_gen);
      if (p == NULL || !(p->flags & TEND_AF_SCHED)) return 0;
      if (tend_codec_decode(L, h, e->data, e->len) != TEND_CODEC_OK)
        return lua_error(L);
      lua_rawgeti(L, -1, 1);
      end_proxy(L, h, p, -1);
      return 0;
    }
    case ENV_SPAWN: { /* answered with {ref = its ref} or {error = why} */
      spawn_req r = {0};
      unpack_req(&r, e->data, e->len);
      lua_createtable(L, 0, 1);
      lua_pushcfunction(L, spawn_p);
      lua_pushlightuserdata(L, &r);
      if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
        lua_setfield(L, -2, "error");
      } else {
        tend_ref_push(L, h, r.id, r.gen);
        lua_setfield(L, -2, "ref");
        free(r.path_out);
      }
      answer(L, h, e->from, e->a, e->b, -1);
      return 0;
    }
    case ENV_QUIT:
      if (e->a) { /* at once: the process is going */
        h->shutdown = TEND_SHUTDOWN_FORCED;
        uv_stop(&h->loop);
      } else {
        tend_host_shutdown(h, 0);
      }
      return 0;
  }
  return 0;
}

/* Real clock: when no scheduler but 0 works and nothing is on its way,
 * scheduler 0 is woken to look (it may end). */
static void maybe_wake0(tend_scheds *s) {
  if (!s->threaded || atomic_load(&s->busy) != 0 ||
      atomic_load(&s->pending) != 0)
    return;
  uv_mutex_lock(&s->lock[0]);
  if (s->open[0]) uv_async_send(s->wake[0]);
  uv_mutex_unlock(&s->lock[0]);
}

/* Hands scheduler k (h) its inbox, oldest first. */
static void arrive_all(tend_host *h) {
  tend_scheds *s = h->scheds;
  int k = (int)h->sched_index;
  tend_mpsc_node *n;
  while ((n = tend_mpsc_pop(&s->inbox[k])) != NULL) {
    envelope *e = (envelope *)n;
    lua_State *L = h->L;
    lua_pushcfunction(L, arrive_p);
    lua_pushlightuserdata(L, h);
    lua_pushlightuserdata(L, e);
    if (lua_pcall(L, 2, 0, 0) != LUA_OK) {
      tend_host_log(h, TEND_LOG_WARN, NULL,
                    "a message from scheduler %d was lost: %s", e->from,
                    luaL_tolstring(L, -1, NULL));
      lua_pop(L, 2);
    }
    free(e);
    /* taken after it made its target busy: see post */
    if (atomic_fetch_sub(&s->pending, 1) == 1 && k != 0) maybe_wake0(s);
  }
}

/* ------------------------------------------------------------ deaths */

/* a dies: the proxies of it on other schedulers end with its reason, and
 * its name under /user is free again. */
static void death(lua_State *L, tend_host *h, tend_actor *a) {
  if (h->scheds == NULL) return;
  if ((a->flags & TEND_AF_NAMED) && a->parent == h->user && h->user)
    release_name(L, h, a);
  if (!(a->flags & TEND_AF_WATCHED_ABROAD)) return;
  int top = lua_gettop(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->sched_watchers_ref);
  lua_rawgeti(L, -1, a->id);
  int list = lua_gettop(L);
  lua_createtable(L, 1, 0);
  if (a->stop_reason == TEND_STOP_FAILURE)
    tend_actor_push_ext(L, a, TEND_EXT(error_ref));
  else
    lua_pushstring(L, tend_actor_reason_name(L, a));
  lua_rawseti(L, -2, 1);
  if (tend_codec_encode(L, h, -1, NO_LIMIT) != TEND_CODEC_OK) {
    lua_pop(L, 1); /* an error value that cannot travel: its name does */
    lua_createtable(L, 1, 0);
    lua_pushstring(L, tend_actor_reason_name(L, a));
    lua_rawseti(L, -2, 1);
    tend_codec_encode(L, h, -1, NO_LIMIT);
  }
  size_t len;
  const char *b = lua_tolstring(L, -1, &len);
  lua_Integer n = (lua_Integer)lua_rawlen(L, list);
  for (lua_Integer i = 1; i + 2 <= n; i += 3) {
    lua_rawgeti(L, list, i);
    lua_rawgeti(L, list, i + 1);
    lua_rawgeti(L, list, i + 2);
    post(h, (int)lua_tointeger(L, -3), ENV_DOWN,
         (uint32_t)lua_tointeger(L, -2), (uint32_t)lua_tointeger(L, -1), 0, 0,
         b, len);
    lua_pop(L, 3);
  }
  lua_pushnil(L);
  lua_rawseti(L, list - 1, a->id);
  lua_settop(L, top);
}

/* ------------------------------------------------------------ the pump */

/* Virtual clock: scheduler 0's pump, after its own turn: its inbox, then
 * each other scheduler's inbox and turn, in index order, on scheduler 0's
 * clock. */
static void step(tend_host *h) {
  tend_scheds *s = h->scheds;
  if (s == NULL || s->threaded || h->sched_index != 0) return;
  arrive_all(h);
  for (int k = 1; k < s->n; k++) {
    tend_host *o = s->h[k];
    if (o == NULL) continue;
    tend_clock_jump(&o->clock, h->clock.now);
    arrive_all(o);
    tend_host_turn(o);
  }
}

/* Real clock, on scheduler k >= 1: whether it has work now (something to
 * run, a timer, a handle or request of its own), kept in the shared count;
 * the last to go idle with nothing on its way wakes scheduler 0, which
 * may then end. */
static void note_busy(tend_host *h) {
  tend_scheds *s = h->scheds;
  int k = (int)h->sched_index;
  uv_loop_t *l = &h->loop;
  unsigned handles = l->active_handles;
  handles -= uv_is_active((uv_handle_t *)&h->idle) ? 1u : 0u;
  handles -= uv_is_active((uv_handle_t *)&h->uvtimer) ? 1u : 0u;
  int busy = h->runq_head != NULL || tend_timer_heap_top(&h->timers) ||
             handles > 1 /* its wake-up */ || l->active_reqs.count > 0;
  if (busy == s->busy_flag[k]) return;
  s->busy_flag[k] = busy;
  if (busy)
    atomic_fetch_add(&s->busy, 1);
  else if (atomic_fetch_sub(&s->busy, 1) == 1)
    maybe_wake0(s);
}

/* Real clock, scheduler 0: its loop is held (its wake-up referenced)
 * while another scheduler works or an envelope is on its way. */
static void hold0(tend_scheds *s) {
  if (atomic_load(&s->busy) > 0 || atomic_load(&s->pending) > 0)
    uv_ref((uv_handle_t *)s->wake[0]);
  else
    uv_unref((uv_handle_t *)s->wake[0]);
}

static int64_t next_due(tend_host *h, int *busy) {
  tend_scheds *s = h->scheds;
  int64_t next = -1;
  *busy = 0;
  if (s == NULL) return -1;
  if (s->threaded) {
    if (h->sched_index == 0) { /* alive while the others work */
      hold0(s);
    } else {
      note_busy(h);
    }
    return -1;
  }
  if (h->sched_index != 0) return -1;
  if (atomic_load(&s->pending) > 0) *busy = 1; /* envelopes to hand over */
  for (int k = 1; k < s->n; k++) {
    tend_host *o = s->h[k];
    if (o == NULL) continue;
    if (o->runq_head) *busy = 1;
    tend_timer *t = tend_timer_heap_top(&o->timers);
    if (t && (next < 0 || t->due < next)) next = t->due;
  }
  return next;
}

/* Real clock, scheduler k >= 1: its tree is gone, so its loop may end
 * (its wake-up no longer holds it) and it counts as idle. */
static void tree_gone(tend_host *h) {
  tend_scheds *s = h->scheds;
  if (s == NULL || !s->threaded || h->sched_index == 0) return;
  int k = (int)h->sched_index;
  uv_unref((uv_handle_t *)s->wake[k]);
  if (s->busy_flag[k]) {
    s->busy_flag[k] = 0;
    atomic_fetch_sub(&s->busy, 1);
  }
  uv_mutex_lock(&s->lock[0]);
  if (s->open[0]) uv_async_send(s->wake[0]);
  uv_mutex_unlock(&s->lock[0]);
}

/* Scheduler 0's tree starts stopping: so do the others'. */
static void stop_all(tend_host *h) {
  tend_scheds *s = h->scheds;
  if (s == NULL || h->sched_index != 0) return;
  for (int k = 1; k < s->n; k++) {
    if (s->threaded)
      post(h, k, ENV_QUIT, 0, 0, h->shutdown == TEND_SHUTDOWN_FORCED, 0, NULL,
           0);
    else if (s->h[k])
      tend_host_shutdown(s->h[k], 0);
  }
}

static void free_handle(uv_handle_t *handle) {
  free(handle);
}

/* Drops what is still queued for scheduler k. */
static void drain(tend_scheds *s, int k) {
  tend_mpsc_node *n;
  while ((n = tend_mpsc_pop(&s->inbox[k])) != NULL) {
    free(n);
    atomic_fetch_sub(&s->pending, 1);
  }
}

static void free_scheds(tend_scheds *s) {
  for (int i = 0; i < s->n_names; i++) free(s->names[i].name);
  free(s->names);
  if (s->threaded) {
    for (int k = 0; k < s->n; k++) uv_mutex_destroy(&s->lock[k]);
    uv_sem_destroy(&s->ready);
  }
  uv_mutex_destroy(&s->names_lock);
  free(s);
}

static void close_all(tend_host *h) {
  tend_scheds *s = h->scheds;
  if (s == NULL) return;
  int k0 = (int)h->sched_index;
  if (s->threaded) { /* its wake-up goes first: nothing more is posted */
    uv_mutex_lock(&s->lock[k0]);
    s->open[k0] = 0;
    uv_mutex_unlock(&s->lock[k0]);
    uv_close((uv_handle_t *)s->wake[k0], free_handle);
  }
  if (k0 != 0) {
    drain(s, k0);
    h->scheds = NULL;
    return;
  }
  for (int k = 1; k < s->n; k++) {
    if (s->threaded) {
      /* each stops at once if it has not yet, then its thread ends */
      post(h, k, ENV_QUIT, 0, 0, 1, 0, NULL, 0);
      uv_thread_join(&s->thread[k]);
    } else if (s->h[k]) {
      tend_host *o = s->h[k];
      s->h[k] = NULL;
      tend_clock_jump(&o->clock, h->clock.now);
      tend_host_close(o);
    }
  }
  drain(s, 0);
  h->scheds = NULL;
  free_scheds(s);
}

/* ------------------------------------------------------------ opening */

static void on_wake(uv_async_t *handle) {
  tend_host *h = handle->data;
  if (h->scheds == NULL) return;
  arrive_all(h);
  tend_host_poke(h);
  if (h->sched_index == 0) hold0(h->scheds); /* (its tree may be gone) */
}

/* Makes h scheduler k of s (on h's own thread under the real clock). */
static int join(tend_scheds *s, tend_host *h, int k) {
  h->scheds = s;
  h->sched_index = (uint32_t)k;
  h->sched_send = sched_send;
  h->sched_control = sched_control;
  if (s->threaded)
    h->seq_shared = &s->seq; /* taken atomically (actor.c) */
  else if (k > 0)
    h->seq = s->h[0]->seq;
  s->h[k] = h;
  if (!s->threaded) return 0;
  s->wake[k] = malloc(sizeof(uv_async_t));
  if (s->wake[k] == NULL || uv_async_init(&h->loop, s->wake[k], on_wake) != 0)
    return -1;
  s->wake[k]->data = h;
  if (k == 0) uv_unref((uv_handle_t *)s->wake[k]);
  uv_mutex_lock(&s->lock[k]);
  s->open[k] = 1;
  uv_mutex_unlock(&s->lock[k]);
  return 0;
}

typedef struct thread_arg {
  tend_scheds *s;
  int k;
  tend_host_config cfg;
} thread_arg;

/* Scheduler k's thread: its host opened, run until told to quit, closed. */
static void run_thread(void *arg) {
  thread_arg *t = arg;
  tend_scheds *s = t->s;
  int k = t->k;
  tend_host *h = tend_host_open(&t->cfg);
  free(t);
  if (h == NULL || join(s, h, k) != 0) {
    s->failed = 1;
    uv_sem_post(&s->ready);
    if (h) tend_host_close(h);
    return;
  }
  uv_sem_post(&s->ready);
  tend_host_run(h);
  tend_host_close(h);
  /* gone: it counts as idle, and scheduler 0 looks again */
  if (s->busy_flag[k]) {
    s->busy_flag[k] = 0;
    atomic_fetch_sub(&s->busy, 1);
  }
  uv_mutex_lock(&s->lock[0]);
  if (s->open[0]) uv_async_send(s->wake[0]);
  uv_mutex_unlock(&s->lock[0]);
}

int tend_schedulers_open(tend_host *h, int n) {
  if (n <= 1) return 0;
  tend_scheds *s = calloc(1, sizeof *s);
  if (s == NULL) return -1;
  s->n = n;
  s->threaded = !h->clock.is_virtual;
  uv_mutex_init(&s->names_lock);
  for (int k = 0; k < n; k++) tend_mpsc_init(&s->inbox[k]);
  if (s->threaded) {
    for (int k = 0; k < n; k++) uv_mutex_init(&s->lock[k]);
    uv_sem_init(&s->ready, 0);
    atomic_store(&s->seq, h->next_seq);
  }
  if (join(s, h, 0) != 0) return -1;
  for (int k = 1; k < n; k++) {
    tend_host_config cfg = {
        .virtual_time = !s->threaded,
        .has_seed = 1,
        .seed = h->seed + (uint64_t)k * 0x9E3779B97F4A7C15ull,
        .log_level = h->log_level,
        .copy_messages = h->copy_messages,
        .drivers = tend_drivers,
        .open = h->open,
        .world = s->threaded ? NULL : h, /* its pump is scheduler 0's */
        .no_signals = 1,
    };
    if (!s->threaded) {
      tend_host *o = tend_host_open(&cfg);
      if (o == NULL) return -1;
      join(s, o, k);
      tend_clock_jump(&o->clock, h->clock.now);
      continue;
    }
    thread_arg *t = malloc(sizeof *t);
    if (t == NULL) return -1;
    *t = (thread_arg){s, k, cfg};
    if (uv_thread_create(&s->thread[k], run_thread, t) != 0) {
      free(t);
      return -1;
    }
    uv_sem_wait(&s->ready);
    if (s->failed) {
      fprintf(stderr, "tend: --schedulers: scheduler %d could not start\n",
              k);
      return -1;
    }
  }
  return 0;
}

const tend_driver tend_schedulers_driver = {
    .name = "schedulers",
    .death = death,
    .shutdown = stop_all,
    .tree_gone = tree_gone,
    .close_all = close_all,
    .next_due = next_due,
    .step = step,
};
