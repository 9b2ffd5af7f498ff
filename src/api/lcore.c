/* lcore: the tend.core module, put together from the open function of
 * each file of the API layer, and the checks those files share. */
#include <lualib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "runtime/error.h"

/* ------------------------------------------------------------ checks */

tend_ref *tend_check_ref(lua_State *L, int idx, const char *fn,
                         const char *arg) {
  tend_ref *r = tend_ref_test(L, idx);
  if (r == NULL)
    luaL_error(L, "%s: %s: expected an actor ref, got %s", fn, arg,
               tend_typename(L, idx));
  return r;
}

double tend_check_seconds(lua_State *L, int idx, const char *fn,
                          const char *arg, int positive) {
  if (lua_type(L, idx) != LUA_TNUMBER)
    luaL_error(L, "%s: %s: expected a number of seconds, got %s", fn, arg,
               tend_typename(L, idx));
  double s = lua_tonumber(L, idx);
  if (isnan(s) || s < 0 || (positive && s == 0))
    luaL_error(L, "%s: %s: expected a number of seconds %s, got %s", fn, arg,
               positive ? "> 0" : ">= 0", lua_tostring(L, idx));
  return s;
}

int tend_bad_option(lua_State *L, const char *fn, const char *opt,
                    const char *expected, int idx) {
  if (lua_type(L, idx) == LUA_TNUMBER || lua_type(L, idx) == LUA_TSTRING)
    return luaL_error(L, "%s: option '%s': expected %s, got %s (%s)", fn, opt,
                      expected, lua_tostring(L, idx), luaL_typename(L, idx));
  return luaL_error(L, "%s: option '%s': expected %s, got %s", fn, opt,
                    expected, tend_typename(L, idx));
}

int tend_find_name(const char *const *list, const char *s) {
  for (int i = 0; list[i]; i++)
    if (strcmp(list[i], s) == 0) return i;
  return -1;
}

void tend_check_keys(lua_State *L, int t, const char *const *keys,
                     const char *fn, const char *prefix) {
  t = lua_absindex(L, t);
  lua_pushnil(L);
  while (lua_next(L, t)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) == LUA_TSTRING &&
        tend_find_name(keys, lua_tostring(L, -1)) >= 0)
      continue;
    const char *key = luaL_tolstring(L, -1, NULL);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 0; keys[i]; i++) {
      if (i) luaL_addstring(&b, ", ");
      luaL_addstring(&b, keys[i]);
    }
    luaL_pushresult(&b);
    luaL_error(L, "%s: unknown option '%s%s' (expected one of: %s)", fn, prefix,
               key, lua_tostring(L, -1));
  }
}

void tend_add_seconds(luaL_Buffer *b, lua_State *L, int64_t ns) {
  (void)L;
  char num[64]; /* Lua's number format: "60", "1.5" */
  snprintf(num, sizeof num, "%.14g", (double)ns / 1e9);
  luaL_addstring(b, num);
}

/* ------------------------------------------------------------ open */

int luaopen_tend_core(lua_State *L) {
  lua_newtable(L);
  tend_open_ref(L); /* ref and ctx first: the others add methods */
  tend_open_ctx(L);
  tend_open_error(L);
  tend_open_spawn(L);
  tend_open_timer(L);
  tend_open_ask(L);
  tend_open_strategy(L);
  tend_open_backoff(L);
  tend_open_typed(L);
  tend_open_inspect(L);
  tend_open_chaos(L);
  tend_open_hostlib(L);
  return 1;
}

int tend_api_open(lua_State *L) {
  luaL_requiref(L, "tend.core", luaopen_tend_core, 0);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, luaopen_tend_internal);
  lua_setfield(L, -2, "tend.internal");
  lua_pop(L, 2);
  return 0;
}
