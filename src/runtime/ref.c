/* ref: actor addresses (see ref.h). */
#include "runtime/ref.h"

#include <lauxlib.h>

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

void tend_ref_set_path(lua_State *L, int idx) {
  lua_setiuservalue(L, idx, 1);
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
  }
}
