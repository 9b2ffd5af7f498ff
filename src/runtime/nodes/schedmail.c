/* schedmail: the envelopes between schedulers, the proxies they reach,
 * spawning on another scheduler, deaths watched from another (see
 * schedulers.h; the records: schedrec.h). */
#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/core/lifecycle.h"
#include "runtime/core/send.h"
#include "runtime/core/value.h"
#include "runtime/nodes/codec.h"
#include "runtime/nodes/remote.h"
#include "runtime/nodes/schedrec.h"

/* ------------------------------------------------------------ envelopes */

/* Queues an envelope for scheduler `to` (data: len bytes, may be NULL)
 * and wakes it. Returns -1 when out of memory or `to` is closed. */
int tend_sched_post(tend_host *h, int to, env_kind kind, uint32_t to_id,
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
  /* a scheduler looking at its inbox needs no wake-up: either it sees
     this push after it stops looking, or this sees it stopped (on_look) */
  atomic_thread_fence(memory_order_seq_cst);
  if (!atomic_load_explicit(&s->spinning[to], memory_order_relaxed))
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
  if (kind == 0 &&
      tend_sched_post(h, k, ENV_WATCH, id, gen, p->id, p->gen, NULL, 0) != 0) {
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
void tend_sched_send(lua_State *L, tend_host *h, tend_actor *p, tend_value *v,
                     uint32_t sid, uint32_t sgen) {
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
  tend_sched_post(h, k, ENV_MSG, id, gen, split, 0, bytes,
                  len); /* (gone: dropped) */
  lua_settop(L, top);
  if (kind == 1) { /* an ask's reply: one is all it takes */
    lua_pushliteral(L, "normal");
    end_proxy(L, h, p, -1);
    lua_pop(L, 1);
  }
}

/* The proxy p's actor is stopped (what < 0), killed or poisoned. */
void tend_sched_control(tend_host *h, tend_actor *p, int what) {
  int k, kind;
  uint32_t id, gen;
  coords_of(h->L, h, p, &k, &id, &gen, &kind);
  if (tend_sched_post(h, k, ENV_CONTROL, id, gen, what < 0 ? 0 : (uint32_t)what,
                      0, NULL, 0) != 0) {
    lua_pushliteral(h->L, "noproc"); /* its scheduler is gone */
    end_proxy(h->L, h, p, -1);
    lua_pop(h->L, 1);
  }
}

void tend_schedulers_adopt(lua_State *L, tend_host *h, int idx,
                           const char *fn) {
  tend_ref *r = tend_ref_test(L, idx);
  tend_actor *p = r ? tend_ref_actor(h, r) : NULL;
  tend_actor *me = h->current;
  if (p == NULL || !(p->flags & TEND_AF_SCHED) || p->parent != NULL ||
      me == NULL)
    luaL_error(L, "%s: expected a live actor of another scheduler", fn);
  tend_actor_adopt(me, p);
}

/* ------------------------------------------------------------ spawning */

typedef struct spawn_req {
  const char *factory;      /* "module.field" */
  const char *name;         /* or NULL */
  const char *path, *cpath; /* the spawner's package.path and cpath */
  const char *restart;      /* "permanent", "temporary", NULL: transient */
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
  /* the modules are found where the spawner finds them */
  lua_getglobal(L, "package");
  if (lua_istable(L, -1)) {
    if (r->path) lua_pushstring(L, r->path), lua_setfield(L, -2, "path");
    if (r->cpath) lua_pushstring(L, r->cpath), lua_setfield(L, -2, "cpath");
  }
  lua_pop(L, 1);
  tend_factory_push(L, r->factory, NULL);
  int factory = lua_gettop(L);
  tend_spawn_opts o;
  tend_spawn_opts_init(&o);
  if (r->restart)
    o.restart = r->restart[0] == 'p' ? TEND_PERMANENT : TEND_TEMPORARY;
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
  if (o.name) tend_schedulers_bind_name(L, h, a);
  r->id = a->id;
  r->gen = a->gen;
  tend_actor_push_path(L, h, a);
  r->path_out = strdup(lua_tostring(L, -1));
  return 0;
}

/* The request's strings packed into one buffer (ENV_SPAWN's data), and
 * back: five NUL-ended strings (empty: none), then the args' bytes. */
static void pack_req(luaL_Buffer *b, const spawn_req *r) {
  const char *f[5] = {r->factory, r->name, r->path, r->cpath, r->restart};
  for (int i = 0; i < 5; i++) {
    if (f[i]) luaL_addstring(b, f[i]);
    luaL_addchar(b, '\0');
  }
  if (r->args) luaL_addlstring(b, r->args, r->args_len);
}

static void unpack_req(spawn_req *r, const char *data, size_t len) {
  const char **f[5] = {&r->factory, &r->name, &r->path, &r->cpath, &r->restart};
  const char *p = data;
  for (int i = 0; i < 5; i++) {
    *f[i] = *p ? p : NULL;
    p += strlen(p) + 1;
  }
  r->args = p < data + len ? p : NULL;
  r->args_len = (size_t)(data + len - p);
}

/* The request's fields from the caller's stack (factory, o's args and
 * name) and o's restart; pushes what must stay alive while r is used
 * (args' bytes, package). */
static void fill_req(lua_State *L, tend_host *h, spawn_req *r, int factory,
                     const tend_spawn_opts *o, const char *fn) {
  r->factory = lua_tostring(L, factory);
  if (o->name) r->name = lua_tostring(L, o->name);
  if (o->restart != TEND_TRANSIENT)
    r->restart = o->restart == TEND_PERMANENT ? "permanent" : "temporary";
  int args = o->args;
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
                           const tend_spawn_opts *o, const char *fn) {
  check_target(L, h, k, factory, fn);
  tend_scheds *s = h->scheds;
  int top = lua_gettop(L);
  spawn_req r = {0};
  fill_req(L, h, &r, factory, o, fn);
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
                                   int factory, const tend_spawn_opts *o,
                                   uint32_t ask_id, uint32_t ask_gen,
                                   const char *fn) {
  check_target(L, h, k, factory, fn);
  int top = lua_gettop(L);
  spawn_req r = {0};
  fill_req(L, h, &r, factory, o, fn);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  pack_req(&b, &r);
  luaL_pushresult(&b);
  size_t len;
  const char *data = lua_tolstring(L, -1, &len);
  if (tend_sched_post(h, k, ENV_SPAWN, 0, 0, ask_id, ask_gen, data, len) != 0)
    luaL_error(L, "%s: scheduler %d is stopping", fn, k);
  lua_settop(L, top);
}

/* ------------------------------------------------------------ arrivals */

void tend_sched_answer(lua_State *L, tend_host *h, int to, uint32_t id,
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
    tend_sched_post(h, to, ENV_MSG, id, gen, split, 0, bytes, len);
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
        tend_sched_post(h, e->from, ENV_DOWN, e->a, e->b, 0, 0, b, len);
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
      tend_sched_answer(L, h, e->from, e->a, e->b, -1);
      return 0;
    }
    case ENV_QUERY: return tend_sched_answer_query(L, h, e);
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
void tend_sched_arrive_all(tend_host *h) {
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
    if (s->threaded && k != 0) tend_sched_note_busy(h);
    /* taken after it made its target busy: see post */
    if (atomic_fetch_sub(&s->pending, 1) == 1 && k != 0) tend_sched_wake0(s);
  }
}

/* ------------------------------------------------------------ deaths */

/* a dies: the proxies of it on other schedulers end with its reason, and
 * its name under /user is free again. */
void tend_sched_death(lua_State *L, tend_host *h, tend_actor *a) {
  if (h->scheds == NULL) return;
  if ((a->flags & TEND_AF_NAMED) && a->parent == h->user && h->user)
    tend_sched_release_name(L, h, a);
  tend_sched_reg_forget(h, a);
  tend_sched_pg_forget(h, a);
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
    /* an error value that cannot travel as it is (its data a function, or
     * itself): its kind, message and traceback do, else its name */
    lua_pop(L, 1);
    lua_rawgeti(L, -1, 1);
    lua_createtable(L, 0, 3);
    static const char *const keep[] = {"kind", "message", "traceback"};
    for (int i = 0; i < 3; i++) {
      if (lua_istable(L, -2) && lua_getfield(L, -2, keep[i]) == LUA_TSTRING)
        lua_setfield(L, -2, keep[i]);
      else
        lua_pop(L, 1);
    }
    lua_getfield(L, -1, "kind");
    int has_kind = lua_isstring(L, -1);
    lua_pop(L, 1);
    if (!has_kind) {
      lua_pop(L, 1);
      lua_pushstring(L, tend_actor_reason_name(L, a));
    }
    lua_rawseti(L, -3, 1);
    lua_pop(L, 1);
    if (tend_codec_encode(L, h, -1, NO_LIMIT) != TEND_CODEC_OK) {
      lua_pop(L, 1);
      lua_pushstring(L, tend_actor_reason_name(L, a));
      lua_rawseti(L, -2, 1);
      tend_codec_encode(L, h, -1, NO_LIMIT);
    }
  }
  size_t len;
  const char *b = lua_tolstring(L, -1, &len);
  lua_Integer n = (lua_Integer)lua_rawlen(L, list);
  for (lua_Integer i = 1; i + 2 <= n; i += 3) {
    lua_rawgeti(L, list, i);
    lua_rawgeti(L, list, i + 1);
    lua_rawgeti(L, list, i + 2);
    tend_sched_post(h, (int)lua_tointeger(L, -3), ENV_DOWN,
                    (uint32_t)lua_tointeger(L, -2),
                    (uint32_t)lua_tointeger(L, -1), 0, 0, b, len);
    lua_pop(L, 3);
  }
  lua_pushnil(L);
  lua_rawseti(L, list - 1, a->id);
  lua_settop(L, top);
}
