/* lref: tend.Ref, the address of an actor (or of a pending ask).
 * A ref holds (id, gen); it reaches the actor only while that generation
 * lives. A live actor has one canonical ref (so refs work as table keys);
 * a dead actor's ref keeps its path in its user value. */
#include <lauxlib.h>
#include <string.h>

#include "lbind.h"

void tend_ref_new(lua_State *L, uint32_t id, uint32_t gen) {
  tend_ref *r = lua_newuserdatauv(L, sizeof *r, 1);
  r->magic = TEND_REF_MAGIC;
  r->id = id;
  r->gen = gen;
  luaL_setmetatable(L, TEND_REF_MT);
}

tend_ref *tend_ref_test(lua_State *L, int idx) {
  tend_ref *r = lua_touserdata(L, idx);
  if (r == NULL || lua_islightuserdata(L, idx) ||
      lua_rawlen(L, idx) != sizeof *r || r->magic != TEND_REF_MAGIC)
    return NULL;
  return r;
}

tend_ref *tend_ref_check(lua_State *L, int idx, const char *fn,
                         const char *arg) {
  tend_ref *r = tend_ref_test(L, idx);
  if (r == NULL)
    luaL_error(L, "%s: %s: expected an actor ref, got %s", fn, arg,
               tend_typename(L, idx));
  return r;
}

tend_actor *tend_ref_actor(tend_host *h, const tend_ref *r) {
  tend_actor *a = tend_slots_get(&h->ids, r->id, r->gen);
  if (a == NULL || a->kind != TEND_ENTITY_ACTOR || a->state == TEND_ACTOR_DEAD)
    return NULL;
  return a;
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

void tend_ref_set_path(lua_State *L, int idx) {
  lua_setiuservalue(L, idx, 1);
}

/* Pushes the ref's path: live actors compute it, others remember it. */
static void push_path(lua_State *L, tend_host *h, int idx) {
  tend_ref *r = tend_ref_test(L, idx);
  void *e = tend_slots_get(&h->ids, r->id, r->gen);
  if (e && ((tend_actor *)e)->kind == TEND_ENTITY_ACTOR) {
    tend_actor_push_path(L, h, e);
  } else if (e) {
    lua_pushfstring(L, "/temp/$%I", (lua_Integer)r->id);
  } else if (lua_getiuservalue(L, idx, 1) == LUA_TNIL) {
    lua_pop(L, 1);
    lua_pushliteral(L, "/deadLetters");
  }
}

/* ref:send(msg) and tend.send(ref, msg): the sender is the running actor,
 * if any. Upvalue 1: the value store (the hot path skips the registry). */
static int l_send(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_ref *r = tend_ref_check(L, 1, "send", "ref");
  tend_actor *me = h->current;
  lua_settop(L, 2);
  tend_actor_send_in(L, h, r->id, r->gen, 2, me ? me->id : 0, me ? me->gen : 0,
                     lua_upvalueindex(1));
  return 0;
}

void tend_push_send(lua_State *L, tend_host *h) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->values_ref);
  lua_pushcclosure(L, l_send, 1);
}

/* ref:tell(msg, sender): explicit sender (nil for none). */
static int l_ref_tell(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_ref *r = tend_ref_check(L, 1, "tell", "self");
  uint32_t sid = 0, sgen = 0;
  if (!lua_isnoneornil(L, 3)) {
    tend_ref *s = tend_ref_check(L, 3, "tell", "sender");
    sid = s->id;
    sgen = s->gen;
  }
  tend_actor_send(L, h, r->id, r->gen, 2, sid, sgen);
  return 0;
}

static int l_ref_path(lua_State *L) {
  tend_ref_check(L, 1, "path", "self");
  push_path(L, tend_host_of(L), 1);
  return 1;
}

static int l_ref_name(lua_State *L) {
  tend_ref_check(L, 1, "name", "self");
  push_path(L, tend_host_of(L), 1);
  const char *p = lua_tostring(L, -1);
  const char *slash = strrchr(p, '/');
  lua_pushstring(L, slash ? slash + 1 : p);
  return 1;
}

static int l_ref_tostring(lua_State *L) {
  tend_ref_check(L, 1, "tostring", "self");
  push_path(L, tend_host_of(L), 1);
  lua_pushfstring(L, "Ref(%s)", lua_tostring(L, -1));
  return 1;
}

static int l_ref_eq(lua_State *L) {
  tend_ref *a = tend_ref_test(L, 1), *b = tend_ref_test(L, 2);
  lua_pushboolean(L, a && b && a->id == b->id && a->gen == b->gen);
  return 1;
}

void tend_ref_open(lua_State *L) {
  static const luaL_Reg methods[] = {{"tell", l_ref_tell},
                                     {"path", l_ref_path},
                                     {"name", l_ref_name},
                                     {NULL, NULL}};
  luaL_newmetatable(L, TEND_REF_MT);
  luaL_newlib(L, methods);
  tend_push_send(L, tend_host_of(L));
  lua_setfield(L, -2, "send");
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, l_ref_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pushcfunction(L, l_ref_eq);
  lua_setfield(L, -2, "__eq");
  lua_pushliteral(L, "tend.Ref");
  lua_setfield(L, -2, "__name");
  lua_pop(L, 1);
}
