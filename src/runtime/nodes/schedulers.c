/* schedulers: several schedulers in one process (see schedulers.h). */
#include "runtime/nodes/schedulers.h"

#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/core/lifecycle.h"
#include "runtime/core/send.h"
#include "runtime/core/value.h"
#include "runtime/nodes/codec.h"
#include "runtime/nodes/remote.h"

/* What an envelope carries from one scheduler to another. */
typedef enum env_kind {
  ENV_MSG,   /* data: the message, then its sender (a ref or nil), for
                (to_id, to_gen) */
  ENV_WATCH, /* the proxy (from_id, from_gen) on `from` watches (to_id..) */
  ENV_DOWN,  /* data: {reason}: the proxy (to_id, to_gen) ends */
  ENV_CONTROL /* (to_id, to_gen) is stopped (from_id 0), or gets a Kill or a
                 PoisonPill (from_id: its tend_msg_kind) */
} env_kind;

typedef struct envelope {
  struct envelope *next;
  env_kind kind;
  int from;                   /* the scheduler it comes from */
  uint32_t to_id, to_gen;     /* its target on the scheduler it goes to */
  uint32_t from_id, from_gen; /* ENV_WATCH: the watching proxy; ENV_MSG:
                                 from_id is where the sender's bytes begin */
  size_t len;
  char data[]; /* msgpack (codec.h) */
} envelope;

struct tend_scheds {
  int n;
  tend_host *h[TEND_SCHEDULERS_MAX];
  envelope *head[TEND_SCHEDULERS_MAX]; /* each one's inbox, oldest first */
  envelope *tail[TEND_SCHEDULERS_MAX];
};

#define NO_LIMIT ((size_t)1 << 30) /* the codec's bound within a process */
#define AWAY "move to another scheduler" /* the codec's words for a refusal */

int tend_schedulers_count(const tend_host *h) {
  return h->scheds ? h->scheds->n : 1;
}

int tend_schedulers_index(const tend_host *h) {
  return (int)h->sched_index;
}

/* The actors living on h (guardians and proxies are not counted). */
static uint64_t live_actors(const tend_host *h) {
  uint64_t n = 0;
  for (uint32_t i = 1; i < h->ids.n; i++) {
    tend_actor *a = h->ids.v[i].ptr;
    if (a && a->kind == TEND_ENTITY_ACTOR && a->role != TEND_ROLE_GUARDIAN &&
        a->role != TEND_ROLE_REMOTE)
      n++;
  }
  return n;
}

int tend_schedulers_least_loaded(const tend_host *h) {
  tend_scheds *s = h->scheds;
  if (s == NULL) return 0;
  int best = 0;
  uint64_t least = UINT64_MAX;
  for (int k = 0; k < s->n; k++) {
    if (s->h[k] == NULL) continue;
    uint64_t live = live_actors(s->h[k]);
    if (live < least) {
      least = live;
      best = k;
    }
  }
  return best;
}

void tend_schedulers_check_name(lua_State *L, tend_host *h, int name,
                                const char *fn) {
  tend_scheds *s = h->scheds;
  if (s == NULL) return;
  const char *n = lua_tostring(L, name);
  for (int k = 0; k < s->n; k++) {
    tend_host *o = s->h[k];
    if (o == NULL || o == h) continue;
    lua_State *OL = o->L; /* (one thread under the virtual clock) */
    lua_rawgeti(OL, LUA_REGISTRYINDEX, o->names_ref);
    lua_pushfstring(OL, "/user/%s", n);
    int taken = lua_rawget(OL, -2) != LUA_TNIL;
    lua_pop(OL, 2);
    if (taken)
      luaL_error(L,
                 "%s: name '%s' is already taken: /user/%s exists on "
                 "scheduler %d",
                 fn, n, n, k);
  }
}

/* ------------------------------------------------------------ envelopes */

/* Queues an envelope for scheduler `to` (data: len bytes, may be NULL).
 * Returns -1 when out of memory. */
static int post(tend_host *h, int to, env_kind kind, uint32_t to_id,
                uint32_t to_gen, uint32_t from_id, uint32_t from_gen,
                const char *data, size_t len) {
  tend_scheds *s = h->scheds;
  envelope *e = malloc(sizeof *e + len);
  if (e == NULL) return -1;
  e->next = NULL;
  e->kind = kind;
  e->from = (int)h->sched_index;
  e->to_id = to_id;
  e->to_gen = to_gen;
  e->from_id = from_id;
  e->from_gen = from_gen;
  e->len = len;
  if (len) memcpy(e->data, data, len);
  if (s->tail[to])
    s->tail[to]->next = e;
  else
    s->head[to] = e;
  s->tail[to] = e;
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

/* Pushes the ref of the proxy of (k, id, gen) (kind 1: a pending ask),
 * made when there is none: an actor's proxy asks scheduler k to watch it. */
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
  if (kind == 0 &&
      post(h, k, ENV_WATCH, id, gen, p->id, p->gen, NULL, 0) != 0)
    luaL_error(L, "out of memory");
}

/* The proxy p ends with the reason at stack index reason. */
static void end_proxy(lua_State *L, tend_host *h, tend_actor *p, int reason) {
  reason = lua_absindex(L, reason);
  tend_remote_push_coords(L, h, p);
  lua_rawgeti(L, -1, 3);
  lua_rawgeti(L, -2, 4);
  lua_rawgeti(L, -3, 6);
  int k = (int)(lua_tointeger(L, -1) >> 1);
  uint32_t id = (uint32_t)lua_tointeger(L, -3);
  uint32_t gen = (uint32_t)lua_tointeger(L, -2);
  lua_pop(L, 4);
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
  tend_remote_push_coords(L, h, p);
  lua_rawgeti(L, -1, 3);
  lua_rawgeti(L, -2, 4);
  lua_rawgeti(L, -3, 6);
  int kind = (int)(lua_tointeger(L, -1) & 1);
  int k = (int)(lua_tointeger(L, -1) >> 1);
  uint32_t id = (uint32_t)lua_tointeger(L, -3);
  uint32_t gen = (uint32_t)lua_tointeger(L, -2);
  if (post(h, k, ENV_MSG, id, gen, split, 0, bytes, len) != 0) {
    lua_settop(L, top);
    luaL_error(L, "out of memory");
  }
  lua_settop(L, top);
  if (kind == 1) { /* an ask's reply: one is all it takes */
    lua_pushliteral(L, "normal");
    end_proxy(L, h, p, -1);
    lua_pop(L, 1);
  }
}

/* The proxy p's actor is stopped (what < 0), killed or poisoned. */
static void sched_control(tend_host *h, tend_actor *p, int what) {
  lua_State *L = h->L;
  tend_remote_push_coords(L, h, p);
  lua_rawgeti(L, -1, 3);
  lua_rawgeti(L, -2, 4);
  lua_rawgeti(L, -3, 6);
  int k = (int)(lua_tointeger(L, -1) >> 1);
  uint32_t id = (uint32_t)lua_tointeger(L, -3);
  uint32_t gen = (uint32_t)lua_tointeger(L, -2);
  lua_pop(L, 4);
  post(h, k, ENV_CONTROL, id, gen, what < 0 ? 0 : (uint32_t)what, 0, NULL, 0);
}

/* ------------------------------------------------------------ arrivals */

/* Runs in the receiving state: the envelope's bytes decoded and handed
 * on. Protected (lua_pcall): a malformed message is logged, not raised. */
static int arrive_p(lua_State *L) {
  tend_host *h = lua_touserdata(L, 1);
  envelope *e = lua_touserdata(L, 2);
  switch (e->kind) {
    case ENV_MSG: {
      if (tend_codec_decode(L, h, e->data, e->from_id) != TEND_CODEC_OK ||
          tend_codec_decode(L, h, e->data + e->from_id,
                            e->len - e->from_id) != TEND_CODEC_OK)
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
        if (post(h, e->from, ENV_DOWN, e->from_id, e->from_gen, 0, 0, b,
                 len) != 0)
          return luaL_error(L, "out of memory");
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
      lua_pushinteger(L, e->from_id);
      lua_rawseti(L, -2, n + 2);
      lua_pushinteger(L, e->from_gen);
      lua_rawseti(L, -2, n + 3);
      a->flags |= TEND_AF_WATCHED_ABROAD;
      return 0;
    }
    case ENV_CONTROL: {
      tend_actor *a = tend_actor_live(h, e->to_id, e->to_gen);
      if (a == NULL || a->parent == NULL) return 0; /* gone, or a guardian */
      if (e->from_id == 0)
        tend_actor_stop(L, h, a, TEND_STOP_NORMAL);
      else if (e->from_id == TEND_MSG_KILL)
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
  }
  return 0;
}

/* Hands scheduler k its inbox, oldest first. */
static void arrive_all(tend_host *world, int k) {
  tend_scheds *s = world->scheds;
  tend_host *h = s->h[k];
  while (s->head[k]) {
    envelope *e = s->head[k];
    s->head[k] = e->next;
    if (s->head[k] == NULL) s->tail[k] = NULL;
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
  }
}

/* ------------------------------------------------------------ deaths */

/* a dies: the proxies of it on other schedulers end with its reason. */
static void death(lua_State *L, tend_host *h, tend_actor *a) {
  if (!(a->flags & TEND_AF_WATCHED_ABROAD) || h->scheds == NULL) return;
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
  tend_codec_status st = tend_codec_encode(L, h, -1, NO_LIMIT);
  if (st != TEND_CODEC_OK) { /* an error value that cannot travel */
    lua_pop(L, 1);
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

/* ------------------------------------------------------------ spawning */

typedef struct spawn_req {
  const char *factory; /* "module.field" */
  const char *args;    /* msgpack of the args table, or NULL */
  size_t args_len;
  const char *name; /* or NULL */
  const char *path, *cpath; /* the spawner's package.path and cpath */
  uint32_t id, gen; /* out */
  char *path_out;   /* out: its path, malloc'd */
} spawn_req;

/* Runs in the target scheduler's state. */
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
  if (o.name) tend_schedulers_check_name(L, h, o.name, "tend.spawn");
  tend_actor *a = tend_actor_spawn(L, h, h->user, factory, &o);
  r->id = a->id;
  r->gen = a->gen;
  tend_actor_push_path(L, h, a);
  r->path_out = strdup(lua_tostring(L, -1));
  return 0;
}

void tend_schedulers_spawn(lua_State *L, tend_host *h, int k, int factory,
                           int args, int name, const char *fn) {
  tend_scheds *s = h->scheds;
  int n = s ? s->n : 1;
  if (k < 0 || k >= n)
    luaL_error(L, "%s: scheduler: expected 0..%d, got %d", fn, n - 1, k);
  const char *spec = lua_tostring(L, factory);
  const char *dot = spec ? strrchr(spec, '.') : NULL;
  if (dot == NULL || dot == spec || dot[1] == '\0')
    luaL_error(L, "%s: factory: expected \"module.factory\", got %s", fn,
               luaL_typename(L, factory));
  int top = lua_gettop(L);
  spawn_req r = {.factory = spec};
  if (name) r.name = lua_tostring(L, name);
  if (args) {
    if (tend_codec_encode(L, h, args, NO_LIMIT) != TEND_CODEC_OK)
      luaL_error(L, "%s: args: %s", fn, lua_tostring(L, -1));
    r.args = lua_tolstring(L, -1, &r.args_len);
  }
  lua_getglobal(L, "package"); /* kept on the stack until the spawn ends */
  if (lua_istable(L, -1)) {
    lua_getfield(L, -1, "path");
    r.path = lua_tostring(L, -1);
    lua_getfield(L, -2, "cpath");
    r.cpath = lua_tostring(L, -1);
  }
  lua_State *KL = s->h[k]->L;
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

/* ------------------------------------------------------------ the pump */

/* Scheduler 0's pump, after its own turn: every inbox, then a turn of
 * each other scheduler, in index order, on scheduler 0's clock. */
static void step(tend_host *h) {
  tend_scheds *s = h->scheds;
  if (s == NULL || h->sched_index != 0) return;
  arrive_all(h, 0);
  for (int k = 1; k < s->n; k++) {
    tend_host *o = s->h[k];
    if (o == NULL) continue;
    tend_clock_jump(&o->clock, h->clock.now);
    arrive_all(h, k);
    tend_host_turn(o);
  }
}

static int64_t next_due(tend_host *h, int *busy) {
  tend_scheds *s = h->scheds;
  int64_t next = -1;
  *busy = 0;
  if (s == NULL || h->sched_index != 0) return -1;
  for (int k = 0; k < s->n; k++) {
    if (s->head[k]) *busy = 1;
    tend_host *o = s->h[k];
    if (k == 0 || o == NULL) continue;
    if (o->runq_head) *busy = 1;
    tend_timer *t = tend_timer_heap_top(&o->timers);
    if (t && (next < 0 || t->due < next)) next = t->due;
  }
  return next;
}

/* Scheduler 0's tree starts stopping: so do the others'. */
static void stop_all(tend_host *h) {
  tend_scheds *s = h->scheds;
  if (s == NULL || h->sched_index != 0) return;
  for (int k = 1; k < s->n; k++)
    if (s->h[k]) tend_host_shutdown(s->h[k], 0);
}

static void close_all(tend_host *h) {
  tend_scheds *s = h->scheds;
  if (s == NULL) return;
  if (h->sched_index != 0) {
    h->scheds = NULL;
    return;
  }
  for (int k = 1; k < s->n; k++) {
    if (s->h[k] == NULL) continue;
    tend_host *o = s->h[k];
    s->h[k] = NULL;
    tend_clock_jump(&o->clock, h->clock.now);
    tend_host_close(o);
  }
  for (int k = 0; k < s->n; k++) {
    while (s->head[k]) {
      envelope *e = s->head[k];
      s->head[k] = e->next;
      free(e);
    }
  }
  free(s);
  h->scheds = NULL;
}

int tend_schedulers_open(tend_host *h, int n) {
  if (n <= 1) return 0;
  if (!h->clock.is_virtual) {
    fprintf(stderr,
            "tend: --schedulers: more than one needs --virtual-time in "
            "this build\n");
    return -1;
  }
  tend_scheds *s = calloc(1, sizeof *s);
  if (s == NULL) return -1;
  s->n = n;
  s->h[0] = h;
  h->scheds = s;
  h->sched_send = sched_send;
  h->sched_control = sched_control;
  for (int k = 1; k < n; k++) {
    tend_host_config cfg = {
        .virtual_time = 1,
        .has_seed = 1,
        .seed = h->seed + (uint64_t)k * 0x9E3779B97F4A7C15ull,
        .log_level = h->log_level,
        .copy_messages = h->copy_messages,
        .drivers = h->drivers,
        .open = h->open,
        .world = h,
        .no_signals = 1,
    };
    tend_host *o = tend_host_open(&cfg);
    if (o == NULL) return -1;
    o->scheds = s;
    o->sched_index = (uint32_t)k;
    o->seq = &h->next_seq; /* anonymous names are unique in the process */
    o->sched_send = sched_send;
    o->sched_control = sched_control;
    tend_clock_jump(&o->clock, h->clock.now);
    s->h[k] = o;
  }
  return 0;
}

const tend_driver tend_schedulers_driver = {
    .name = "schedulers",
    .death = death,
    .shutdown = stop_all,
    .close_all = close_all,
    .next_due = next_due,
    .step = step,
};
