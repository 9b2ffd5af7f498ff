/* lerror: tend.error, tend.raise, the methods of error values (the
 * values themselves: runtime/core/error.h) and the module tend.kinds (the
 * names of errkind.h's kinds, for tend's Lua code). */
#include <lauxlib.h>
#include <string.h>

#include "api/api.h"

/* Builds an error value from (kind, message, data) at 1..3 for fn. */
static void build(lua_State *L, const char *fn) {
  size_t klen, mlen;
  const char *kind = luaL_checklstring(L, 1, &klen);
  if (*kind == '\0') luaL_argerror(L, 1, "kind must not be empty");
  if (strlen(kind) != klen)
    luaL_argerror(L, 1, "kind must not hold a NUL byte (it is a name)");
  const char *message = luaL_optlstring(L, 2, kind, &mlen);
  if (!lua_isnoneornil(L, 3) && !lua_istable(L, 3))
    luaL_error(L, "%s: data: expected a table, got %s", fn,
               luaL_typename(L, 3));
  tend_error_new(L, kind, message);
  if (strlen(message) != mlen) { /* the message keeps every byte */
    lua_pushlstring(L, message, mlen);
    lua_setfield(L, -2, "message");
  }
  if (lua_istable(L, 3)) {
    lua_pushvalue(L, 3);
    lua_setfield(L, -2, "data");
  }
}

/* tend.error(kind [, message [, data]]) -> error value */
static int l_error_new(lua_State *L) {
  build(L, "tend.error");
  return 1;
}

/* Pushes luaL_where(L, level)'s words, made without printf. */
static void push_where(lua_State *L, int level) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  tend_error_add_where(&b, L, level);
  luaL_pushresult(&b);
}

/* tend.raise(kind [, message [, data]]): raises an error value whose
 * `where` is the caller's position. */
static int l_error_raise(lua_State *L) {
  build(L, "tend.raise");
  push_where(L, 1);
  lua_setfield(L, -2, "where");
  return lua_error(L);
}

/* The global error(message [, level]), as Lua's own (the same words and
 * levels), its position and the message made one string at once: Lua's
 * made it with printf and two interned strings, which was a tenth of a
 * restart, and a luaL_Buffer about 900 instructions. */
static int l_global_error(lua_State *L) {
  int level = (int)luaL_optinteger(L, 2, 1);
  lua_settop(L, 1);
  if (lua_type(L, 1) == LUA_TSTRING && level > 0)
    tend_error_push_where_msg(L, level, 1);
  return lua_error(L);
}

/* tend.kinds[name] for a name with no row in errkind.h: a misspelt kind
 * in tend's own Lua code fails where it is read, not by never matching. */
static int l_kinds_unknown(lua_State *L) {
  return luaL_error(L, "tend.kinds: no error kind '%s' (errkind.h)",
                    luaL_tolstring(L, 2, NULL));
}

/* Pushes the module tend.kinds: each kind's name under itself
 * (K.Timeout == "Timeout"), from errkind.h's list. */
static void push_kinds(lua_State *L) {
  lua_createtable(L, 0, TEND_ERR_KINDS);
  for (int i = 0; i < TEND_ERR_KINDS; i++) {
    lua_pushstring(L, tend_error_kind_names[i]);
    lua_pushvalue(L, -1);
    lua_rawset(L, -3);
  }
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, l_kinds_unknown);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
}

static int l_error_tostring(lua_State *L) {
  tend_error_describe(L, 1);
  return 1;
}

void tend_open_error(lua_State *L) {
  static const luaL_Reg fns[] = {
      {"error", l_error_new}, {"raise", l_error_raise}, {NULL, NULL}};
  luaL_newmetatable(L, TEND_ERROR_MT);
  lua_pushvalue(L, -1);
  tend_host_set_metatable(tend_host_of(L), TEND_MT_ERROR,
                          luaL_ref(L, LUA_REGISTRYINDEX));
  lua_pushcfunction(L, l_error_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pushliteral(L, "tend.Error");
  lua_setfield(L, -2, "__name");
  lua_pushliteral(L, "tend.Error"); /* getmetatable: not the table itself */
  lua_setfield(L, -2, "__metatable");
  lua_pop(L, 1);
  luaL_setfuncs(L, fns, 0);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  push_kinds(L);
  lua_setfield(L, -2, "tend.kinds"); /* require "tend.kinds" */
  lua_pop(L, 1);
  lua_pushcfunction(L, l_global_error);
  lua_setglobal(L, "error");
}
