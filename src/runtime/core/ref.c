/* ref: actor addresses (see ref.h). */
#include "runtime/core/ref.h"

#include <lauxlib.h>

#include "runtime/core/host.h"

void tend_ref_new(lua_State *L, uint32_t id, uint32_t gen) {
  tend_ref *r = lua_newuserdatauv(L, sizeof *r, 1);
  r->magic = TEND_REF_MAGIC;
  r->id = id;
  r->gen = gen;
  r->seq = 0;
  int mt = tend_host_of(L)->ref_mt_ref; /* an integer key: no hashing */
  if (mt)
    lua_rawgeti(L, LUA_REGISTRYINDEX, mt);
  else
    luaL_getmetatable(L, TEND_REF_MT);
  lua_setmetatable(L, -2);
}

tend_ref *tend_ref_test(lua_State *L, int idx) {
  tend_ref *r = lua_touserdata(L, idx);
  /* lua_rawlen is 0 for a light userdata */
  if (r == NULL || lua_rawlen(L, idx) != sizeof *r ||
      r->magic != TEND_REF_MAGIC)
    return NULL;
  return r;
}

void tend_ref_set_path(lua_State *L, int idx) {
  lua_setiuservalue(L, idx, 1);
}
