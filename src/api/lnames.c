/* lnames: registered names and lookups (OTP's register, unregister,
 * whereis, registered): tend.register, tend.unregister, tend.whereis,
 * tend.registered. tend.send to a name is lref.c's (through
 * tend_check_target below). */
#include <string.h>

#include "api/api.h"

/* A name at idx: a non-empty string of at most 255 bytes that does not
 * start with '/' (that is a path). */
static void check_name(lua_State *L, int idx, const char *fn) {
  size_t len = 0;
  const char *s =
      lua_type(L, idx) == LUA_TSTRING ? lua_tolstring(L, idx, &len) : NULL;
  if (s == NULL || len == 0 || len > 255 || s[0] == '/')
    luaL_error(L,
               "%s: name: expected a non-empty string not starting with '/' "
               "(at most 255 bytes), got %s",
               fn,
               s ? (len ? "a path or a too long string" : "\"\"")
                 : tend_typename(L, idx));
}

tend_actor *tend_check_target(lua_State *L, int idx, const char *fn,
                              const char *arg, int must_live) {
  tend_host *h = tend_host_of(L);
  tend_actor *a;
  if (lua_type(L, idx) == LUA_TSTRING) {
    a = tend_names_lookup(L, h, idx);
    if (a == NULL && must_live)
      luaL_error(L, "%s: %s: %s '%s'", fn, arg,
                 lua_tostring(L, idx)[0] == '/'
                     ? "no live actor at the path"
                     : "no live actor is registered as",
                 lua_tostring(L, idx));
    return a;
  }
  if (tend_ref_test(L, idx) == NULL)
    luaL_error(
        L, "%s: %s: expected an actor ref, a registered name or a path, got %s",
        fn, arg, tend_typename(L, idx));
  a = tend_ref_actor(h, tend_ref_test(L, idx));
  if (a == NULL && must_live) {
    tend_ref_push_path(L, h, idx);
    luaL_error(L, "%s: %s: Ref(%s) is not alive", fn, arg, lua_tostring(L, -1));
  }
  return a;
}

/* tend.register(name, ref) -> ref */
static int l_register(lua_State *L) {
  tend_host *h = tend_host_of(L);
  check_name(L, 1, "tend.register");
  tend_actor *a = tend_check_target(L, 2, "tend.register", "ref", 1);
  if (tend_actor_is_guardian(a))
    luaL_error(L, "tend.register: ref: a guardian cannot take a name");
  tend_names_register(L, h, a, 1, "tend.register");
  tend_actor_push_ref(L, h, a);
  return 1;
}

/* tend.unregister(name) -> true when the name named a live actor, else
 * false */
static int l_unregister(lua_State *L) {
  check_name(L, 1, "tend.unregister");
  lua_pushboolean(L, tend_names_unregister(L, tend_host_of(L), 1));
  return 1;
}

/* tend.whereis(name_or_path) -> live ref or nil */
static int l_whereis(lua_State *L) {
  tend_host *h = tend_host_of(L);
  if (lua_type(L, 1) != LUA_TSTRING)
    luaL_error(L, "tend.whereis: expected a registered name or a path, got %s",
               tend_typename(L, 1));
  tend_actor *a = tend_names_lookup(L, h, 1);
  if (a)
    tend_actor_push_ref(L, h, a);
  else
    lua_pushnil(L);
  return 1;
}

/* tend.registered() -> the registered names, sorted */
static int l_registered(lua_State *L) {
  tend_names_push_all(L, tend_host_of(L));
  return 1;
}

void tend_open_names(lua_State *L) {
  static const luaL_Reg fns[] = {{"register", l_register},
                                 {"unregister", l_unregister},
                                 {"whereis", l_whereis},
                                 {"registered", l_registered},
                                 {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
}
