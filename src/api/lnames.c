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
    if (a == NULL && tend_schedulers_reg_push(L, h, lua_tostring(L, idx))) {
      a = tend_ref_actor(h, tend_ref_test(L, -1)); /* another scheduler's */
      lua_pop(L, 1); /* (the proxy stays: the proxies table holds it) */
    }
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

/* tend_names_register, protected: [1] name, [2] the actor. */
static int register_p(lua_State *L) {
  tend_names_register(L, tend_host_of(L), lua_touserdata(L, 2), 1,
                      "tend.register");
  return 0;
}

/* tend.register(name, ref) -> ref */
static int l_register(lua_State *L) {
  tend_host *h = tend_host_of(L);
  check_name(L, 1, "tend.register");
  tend_actor *a = tend_check_target(L, 2, "tend.register", "ref", 1);
  if (tend_actor_is_guardian(a))
    luaL_error(L, "tend.register: ref: a guardian cannot take a name");
  if (tend_actor_is_remote(a) && tend_schedulers_count(h) > 1)
    luaL_error(L,
               "tend.register: ref: an actor of another scheduler is "
               "registered there (this version)");
  if (tend_schedulers_count(h) > 1 &&
      tend_names_lookup(L, h, 1) == NULL) { /* one name in the process */
    int k = tend_schedulers_reg_claim(L, h, a, lua_tostring(L, 1));
    if (k >= 0)
      luaL_error(L, "tend.register: name '%s' is already taken on scheduler %d",
                 lua_tostring(L, 1), k);
    lua_pushcfunction(L, register_p);
    lua_pushvalue(L, 1);
    lua_pushlightuserdata(L, a);
    if (lua_pcall(L, 2, 0, 0) != LUA_OK) { /* a has a name already */
      tend_schedulers_reg_release(h, lua_tostring(L, 1));
      return lua_error(L);
    }
  } else {
    tend_names_register(L, h, a, 1, "tend.register");
  }
  tend_actor_push_ref(L, h, a);
  return 1;
}

/* tend.unregister(name) -> true when the name named a live actor, else
 * false */
static int l_unregister(lua_State *L) {
  check_name(L, 1, "tend.unregister");
  tend_host *h = tend_host_of(L);
  int had = tend_names_unregister(L, h, 1);
  if (had) tend_schedulers_reg_release(h, lua_tostring(L, 1));
  lua_pushboolean(L, had);
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
  else if (!tend_schedulers_reg_push(L, h, lua_tostring(L, 1)))
    lua_pushnil(L); /* (else: another scheduler's, a proxy) */
  return 1;
}

/* tend.registered() -> the registered names, sorted */
static int l_registered(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_names_push_all(L, h);
  if (tend_schedulers_count(h) > 1) { /* and the other schedulers', sorted */
    tend_schedulers_reg_names(L, h);
    lua_getglobal(L, "table");
    lua_getfield(L, -1, "sort");
    lua_pushvalue(L, -3);
    lua_call(L, 1, 0);
    lua_pop(L, 1);
  }
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
