/* actor: records, paths, refs, spawn and send (see actor.h). */
#include "runtime/core/actor.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/core/host.h"
#include "runtime/core/ref.h"
#include "runtime/core/value.h"

/* An idle actor costs its record: a field that adds padding adds 8 bytes
 * to each (docs/costs.md, "idle actor"). */
_Static_assert(sizeof(void *) != 8 || sizeof(tend_actor) == 176,
               "tend_actor grew: see docs/costs.md before letting it");

/* ------------------------------------------------------------ lookups */

void tend_actor_push_ctx(lua_State *L, const tend_host *h,
                         const tend_actor *a) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->anchors_ref);
  lua_rawgeti(L, -1, a->id);
  lua_replace(L, -2);
}

tend_actor *tend_actor_live(tend_host *h, uint32_t id, uint32_t gen) {
  tend_actor *a = id ? tend_slots_get(&h->ids, id, gen) : NULL;
  if (a == NULL || a->kind != TEND_ENTITY_ACTOR || a->state == TEND_ACTOR_DEAD)
    return NULL;
  return a;
}

/* Replaces the record at the top with its canonical ref (made and cached
 * in its user value on first use). */
static void to_canonical_ref(lua_State *L, const tend_actor *a) {
  if (lua_getiuservalue(L, -1, TEND_UV_REF) == LUA_TNIL) {
    lua_pop(L, 1);
    tend_ref_new(L, a->id, a->gen);
    lua_pushvalue(L, -1);
    lua_setiuservalue(L, -3, TEND_UV_REF);
  }
  lua_replace(L, -2);
}

void tend_actor_record_to_ref(lua_State *L, const tend_actor *a) {
  to_canonical_ref(L, a);
}

void tend_actor_set_path(lua_State *L, tend_actor *a, int ctx) {
  lua_pushvalue(L, ctx);
  to_canonical_ref(L, a);
  lua_insert(L, -2);
  tend_ref_set_path(L, -2);
  lua_pop(L, 1);
}

static void append_seq(lua_State *L, uint32_t seq);

/* The ref at idx holds its path in user value 1, pushed at the top: made
 * whole if it is a dead anonymous actor's, which holds its parent's path
 * and its seq until someone asks (its death makes no string). */
static void path_made(lua_State *L, int idx) {
  tend_ref *r = lua_touserdata(L, idx);
  if (r->seq == 0) return;
  append_seq(L, r->seq);
  r->seq = 0;
  lua_pushvalue(L, -1);
  lua_setiuservalue(L, idx, 1);
}

int tend_actor_push_cached_path(lua_State *L, int ctx) {
  int top = lua_gettop(L);
  ctx = lua_absindex(L, ctx);
  int ref = lua_getiuservalue(L, ctx, TEND_UV_REF);
  if (ref == LUA_TUSERDATA && lua_getiuservalue(L, -1, 1) == LUA_TSTRING) {
    path_made(L, lua_gettop(L) - 1);
    lua_remove(L, -2);
    return 1;
  }
  lua_settop(L, top); /* what was pushed, one value or two */
  const tend_actor *a = lua_touserdata(L, ctx);
  if (ref == LUA_TNIL && a->state == TEND_ACTOR_DEAD &&
      lua_getiuservalue(L, ctx, TEND_UV_FACTORY) == LUA_TSTRING) {
    append_seq(L, a->seq); /* died with no ref: tend_actor_push_dead_ref */
    return 1;
  }
  lua_settop(L, top);
  return 0;
}

/* Replaces the path at the top with path .. "/$" .. seq: one string made
 * from a buffer (a request's actor dies with its path made: printf and a
 * concatenation cost it about 2 k instructions). */
static void append_seq(lua_State *L, uint32_t seq) {
  size_t n;
  const char *parent = lua_tolstring(L, -1, &n);
  char buf[256], digits[10];
  int k = 0;
  for (uint32_t v = seq; k == 0 || v; v /= 10)
    digits[k++] = (char)('0' + v % 10);
  if (n + 2 + (size_t)k > sizeof buf) { /* a deep tree: the long way */
    lua_pushfstring(L, "/$%I", (lua_Integer)seq);
    lua_concat(L, 2);
    return;
  }
  memcpy(buf, parent, n);
  buf[n++] = '/';
  buf[n++] = '$';
  while (k) buf[n++] = digits[--k];
  lua_pushlstring(L, buf, n);
  lua_replace(L, -2);
}

void tend_actor_push_path(lua_State *L, const tend_host *h, tend_actor *a) {
  tend_actor_push_ctx(L, h, a);
  if (lua_isnil(L, -1)) { /* dead and no longer anchored: rebuilt */
    lua_pop(L, 1);
    if (a->parent)
      tend_actor_push_path(L, h, a->parent);
    else
      lua_pushliteral(L, "");
    append_seq(L, a->seq);
    return;
  }
  to_canonical_ref(L, a); /* the path lives in the actor's canonical ref */
  if (lua_getiuservalue(L, -1, 1) == LUA_TNIL) {
    lua_pop(L, 1); /* anonymous, first use: parent path + "/$seq" */
    tend_actor_push_path(L, h, a->parent);
    append_seq(L, a->seq);
    lua_pushvalue(L, -1);
    tend_ref_set_path(L, -3);
  } else {
    path_made(L, lua_gettop(L) - 1); /* dying: asked after push_dead_ref */
  }
  lua_replace(L, -2); /* leave the path */
}

void tend_actor_push_path_ref(lua_State *L, const tend_host *h, tend_actor *a,
                              int ctx) {
  if (lua_type(L, ctx) != LUA_TUSERDATA) { /* not anchored: made anew */
    tend_actor_push_path(L, h, a);
    tend_ref_new(L, a->id, a->gen);
    lua_pushvalue(L, -2);
    tend_ref_set_path(L, -2);
    return;
  }
  lua_pushvalue(L, ctx);
  to_canonical_ref(L, a);
  if (lua_getiuservalue(L, -1, 1) == LUA_TNIL) { /* anonymous, first use */
    lua_pop(L, 1);
    tend_actor_push_path(L, h, a); /* made, and kept in the ref */
  } else {
    path_made(L, lua_gettop(L) - 1);
  }
  lua_insert(L, -2); /* path ref */
}

void tend_actor_push_dead_ref(lua_State *L, const tend_host *h, tend_actor *a,
                              int ctx) {
  if (lua_type(L, ctx) != LUA_TUSERDATA || a->parent == NULL) {
    tend_actor_push_path_ref(L, h, a, ctx);
    lua_remove(L, -2);
    return;
  }
  if (lua_getiuservalue(L, ctx, TEND_UV_REF) == LUA_TNIL &&
      (a->ext == NULL || a->ext->watchers == NULL)) {
    /* nil: no ref was made, so none will ask its path; a saved ctx may
     * (its parent may be gone by then): the record keeps its parent's
     * path in the factory's slot, never called again */
    tend_actor_push_path(L, h, a->parent);
    lua_setiuservalue(L, ctx, TEND_UV_FACTORY);
    return;
  }
  lua_pop(L, 1);
  lua_pushvalue(L, ctx);
  to_canonical_ref(L, a);
  if (lua_getiuservalue(L, -1, 1) != LUA_TNIL) { /* named, or asked */
    lua_pop(L, 1);
    return;
  }
  lua_pop(L, 1);
  tend_actor_push_path(L, h, a->parent); /* kept in the parent's ref */
  tend_ref_set_path(L, -2);
  ((tend_ref *)lua_touserdata(L, -1))->seq = a->seq; /* "/$seq" when asked */
}

void tend_actor_push_ref(lua_State *L, tend_host *h, tend_actor *a) {
  if (a->state == TEND_ACTOR_DEAD) { /* no anchor any more */
    tend_ref_new(L, a->id, a->gen);
    return;
  }
  tend_actor_push_ctx(L, h, a);
  to_canonical_ref(L, a);
}

int tend_actor_push_hook(lua_State *L, const tend_host *h, tend_actor *a,
                         const char *name) {
  if ((a->flags & (TEND_AF_HOOKS | TEND_AF_SPENT)) != TEND_AF_HOOKS) return 0;
  tend_actor_push_ctx(L, h, a);
  lua_getiuservalue(L, -1, TEND_UV_BEHAVIOR); /* ctx hooks */
  if (tend_value_hook(L, -1, name) != LUA_TFUNCTION) {
    lua_pop(L, 3);
    return 0;
  }
  lua_insert(L, -3); /* fn ctx hooks */
  lua_remove(L, -2); /* fn hooks */
  return 1;
}

/* ------------------------------------------------------------ ext */

static const size_t ext_refs[] = {
    TEND_EXT(decider_ref),    TEND_EXT(args_ref),  TEND_EXT(error_ref),
    TEND_EXT(failed_msg_ref), TEND_EXT(cause_ref), TEND_EXT(on_wait_ref)};

static int *ref_field(tend_actor_ext *x, size_t field) {
  return (int *)(void *)((char *)x + field);
}

/* Freed ext records wait in a host's pool (at most EXT_POOL): each
 * restart under a backoff supervisor makes a new actor, whose ext holds
 * its error; the next one takes the last one's record, no calloc. */
enum { EXT_POOL = 64 };

static void ext_init(tend_actor_ext *x) {
  for (size_t i = 0; i < sizeof ext_refs / sizeof ext_refs[0]; i++)
    *ref_field(x, ext_refs[i]) = LUA_NOREF;
  x->shutdown_ns = TEND_SHUTDOWN_NS; /* 0 is brutal_kill, not unset */
}

static tend_actor_ext *ext_new(tend_host *h, tend_actor *a) {
  if (a->ext || h->ext_pool == NULL) return tend_actor_ext_get(a);
  tend_actor_ext *x = h->ext_pool;
  memcpy(&h->ext_pool, x, sizeof h->ext_pool); /* its link */
  h->n_ext_pool--;
  memset(x, 0, sizeof *x);
  ext_init(x);
  return a->ext = x;
}

static void ext_release(tend_host *h, tend_actor_ext *x) {
  if (h->n_ext_pool >= EXT_POOL) {
    free(x);
    return;
  }
  memcpy(x, &h->ext_pool, sizeof h->ext_pool);
  h->ext_pool = x;
  h->n_ext_pool++;
}

void tend_actor_ext_pool_free(tend_host *h) {
  while (h->ext_pool) {
    tend_actor_ext *x = h->ext_pool;
    memcpy(&h->ext_pool, x, sizeof h->ext_pool);
    free(x);
  }
  h->n_ext_pool = 0;
}

tend_actor_ext *tend_actor_ext_get(tend_actor *a) {
  if (a->ext) return a->ext;
  a->ext = calloc(1, sizeof *a->ext);
  if (a->ext) ext_init(a->ext);
  return a->ext;
}

/* The ext values live in registry slots. A slot an actor leaves holds
 * false (the border luaL_ref reads stays where it was) and goes on the
 * host's list, taken by the next value before luaL_ref: a restart under a
 * backoff supervisor makes a new actor, whose error and failed message
 * then cost a store each instead of luaL_ref's four table operations and
 * luaL_unref's three. */
static int take_slot(lua_State *L, tend_host *h) {
  if (h->n_ext_slots == 0) return luaL_ref(L, LUA_REGISTRYINDEX);
  int r = h->ext_slots[--h->n_ext_slots];
  lua_rawseti(L, LUA_REGISTRYINDEX, r);
  return r;
}

static void give_slot(lua_State *L, tend_host *h, int *r) {
  if (*r <= 0) return; /* LUA_NOREF, LUA_REFNIL */
  if (h->n_ext_slots == h->cap_ext_slots) {
    uint32_t cap = h->cap_ext_slots ? h->cap_ext_slots * 2 : 64;
    int *v = realloc(h->ext_slots, cap * sizeof *v);
    if (v == NULL) { /* Lua's own list takes it */
      luaL_unref(L, LUA_REGISTRYINDEX, *r);
      *r = LUA_NOREF;
      return;
    }
    h->ext_slots = v;
    h->cap_ext_slots = cap;
  }
  lua_pushboolean(L, 0);
  lua_rawseti(L, LUA_REGISTRYINDEX, *r);
  h->ext_slots[h->n_ext_slots++] = *r;
  *r = LUA_NOREF;
}

void tend_actor_ext_free(lua_State *L, tend_host *h, tend_actor *a) {
  tend_actor_ext *x = a->ext;
  if (x == NULL) return;
  for (size_t i = 0; i < sizeof ext_refs / sizeof ext_refs[0]; i++)
    give_slot(L, h, ref_field(x, ext_refs[i]));
  tend_window_free(&x->child_window);
  tend_window_free(&x->group_window);
  ext_release(h, x);
  a->ext = NULL;
}

void tend_actor_push_ext(lua_State *L, const tend_actor *a, size_t field) {
  if (a->ext == NULL)
    lua_pushnil(L);
  else
    lua_rawgeti(L, LUA_REGISTRYINDEX, *ref_field(a->ext, field));
}

int64_t tend_actor_shutdown_ns(const tend_actor *a) {
  return a->ext ? a->ext->shutdown_ns : TEND_SHUTDOWN_NS;
}

int tend_actor_set_shutdown_ns(tend_actor *a, int64_t ns) {
  if (ns == tend_actor_shutdown_ns(a)) return 1;
  tend_actor_ext *x = tend_actor_ext_get(a);
  if (x == NULL) return 0;
  x->shutdown_ns = ns;
  return 1;
}

void tend_actor_set_ext(lua_State *L, tend_actor *a, size_t field) {
  tend_host *h = tend_host_of(L);
  tend_actor_ext *x = ext_new(h, a);
  if (x == NULL) {
    lua_pop(L, 1);
    return;
  }
  int *r = ref_field(x, field);
  if (*r > 0 && !lua_isnil(L, -1)) { /* its slot, overwritten: a restart */
    lua_rawseti(L, LUA_REGISTRYINDEX, *r); /* pays no unref and ref */
    return;
  }
  give_slot(L, h, r);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    *r = LUA_REFNIL;
  } else {
    *r = take_slot(L, h);
  }
}

void tend_actor_set_on_wait(lua_State *L, tend_actor *a) {
  tend_actor_set_ext(L, a, TEND_EXT(on_wait_ref));
}

void tend_actor_set_strategy(lua_State *L, tend_actor *a,
                             const tend_strategy *s, int decider) {
  if (decider) decider = lua_absindex(L, decider);
  tend_actor_ext *x = tend_actor_ext_get(a);
  if (x == NULL) luaL_error(L, "out of memory");
  x->strategy = *s;
  x->has_strategy = 1;
  if (decider)
    lua_pushvalue(L, decider);
  else
    lua_pushnil(L);
  tend_actor_set_ext(L, a, TEND_EXT(decider_ref));
}

/* ------------------------------------------------------------ spawn */

/* Gives a its id and anchors its userdata (at the top of the stack). */
static int register_record(lua_State *L, tend_host *h, tend_actor *a) {
  a->id = tend_slots_alloc(&h->ids, a, &a->gen);
  if (a->id == 0) return -1;
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->anchors_ref);
  lua_pushvalue(L, -2);
  lua_rawseti(L, -2, a->id); /* anchors[id] = udata */
  lua_pop(L, 1);
  return 0;
}

tend_actor *tend_actor_new(lua_State *L, tend_host *h, tend_actor *parent) {
  tend_actor *a = lua_newuserdatauv(L, sizeof *a, TEND_UV_COUNT);
  memset(a, 0, sizeof *a);
  a->magic = TEND_ACTOR_MAGIC;
  a->kind = TEND_ENTITY_ACTOR;
  a->parent = parent;
  a->seq = h->seq_shared
               ? __atomic_add_fetch(h->seq_shared, 1, __ATOMIC_RELAXED)
               : ++*h->seq;
  if (h->ctx_mt_ref) /* by its integer key (a name is hashed) */
    lua_rawgeti(L, LUA_REGISTRYINDEX, h->ctx_mt_ref);
  else
    luaL_getmetatable(L, TEND_CTX_MT);
  lua_setmetatable(L, -2);
  if (register_record(L, h, a) != 0) luaL_error(L, "too many actors");
  return a;
}

tend_actor *tend_actor_guardian(lua_State *L, tend_host *h, const char *name) {
  tend_actor *a = tend_actor_new(L, h, NULL);
  a->state = TEND_ACTOR_RUNNING;
  a->role = TEND_ROLE_GUARDIAN;
  a->flags |= TEND_AF_NAMED;
  lua_pushfstring(L, "/%s", name);
  tend_actor_set_path(L, a, -2);
  lua_pop(L, 1);
  return a;
}

/* ------------------------------------------------------------ refs */

tend_actor *tend_ref_actor(tend_host *h, const tend_ref *r) {
  return tend_actor_live(h, r->id, r->gen);
}

void tend_ref_push(lua_State *L, tend_host *h, uint32_t id, uint32_t gen) {
  if (id == 0) {
    lua_pushnil(L);
    return;
  }
  tend_actor *a = tend_slots_get(&h->ids, id, gen);
  if (a && a->kind == TEND_ENTITY_ACTOR)
    tend_actor_push_ref(L, h, a);
  else
    tend_ref_new(L, id, gen);
}

void tend_ref_push_path(lua_State *L, tend_host *h, int idx) {
  tend_ref *r = tend_ref_test(L, idx);
  void *e = tend_slots_get(&h->ids, r->id, r->gen);
  if (e && ((tend_actor *)e)->kind == TEND_ENTITY_ACTOR) {
    tend_actor_push_path(L, h, e);
  } else if (e) {
    lua_pushfstring(L, "/temp/$%I", (lua_Integer)r->id);
  } else if (lua_getiuservalue(L, idx, 1) == LUA_TNIL) {
    lua_pop(L, 1);
    lua_pushliteral(L, "/deadLetters");
  } else {
    path_made(L, lua_absindex(L, idx));
  }
}
