/* lref: the methods of tend.Ref (the refs themselves: runtime/ref.h) and
 * tend.send. */
#include <string.h>

#include "api/api.h"

/* ref:send(msg) and tend.send(ref_or_name, msg): the sender is the
 * running actor, if any. A registered name or a path that names no live
 * actor raises (as Erlang's Name ! Msg). Upvalue 1: the fast value store (the
 * hot path skips the registry). */
static int l_send(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_actor *me = tend_host_current(h);
  if (lua_gettop(L) != 2) lua_settop(L, 2);
  const tend_ref *r = tend_ref_test(L, 1);          /* the hot path: a ref */
  if (r == NULL && lua_type(L, 1) == LUA_TSTRING) { /* a name (lnames.c) */
    tend_actor *a = tend_check_target(L, 1, "send", "name", 1);
    tend_actor_send_in(L, h, tend_actor_id(a), tend_actor_gen(a), 2,
                       me ? tend_actor_id(me) : 0, me ? tend_actor_gen(me) : 0,
                       lua_upvalueindex(1));
    return 0;
  }
  if (r == NULL) r = tend_check_ref(L, 1, "send", "ref"); /* raises */
  tend_actor_send_ref(L, h, r, 1, 2, me ? tend_actor_id(me) : 0,
                      me ? tend_actor_gen(me) : 0, lua_upvalueindex(1));
  return 0;
}

static void push_send(lua_State *L, tend_host *h) {
  tend_value_push_store(L, h);
  lua_pushcclosure(L, l_send, 1);
}

/* ref:tell(msg, sender): explicit sender (nil for none). */
static int l_ref_tell(lua_State *L) {
  tend_host *h = tend_host_of(L);
  const tend_ref *r = tend_check_ref(L, 1, "tell", "self");
  uint32_t sid = 0, sgen = 0;
  if (!lua_isnoneornil(L, 3)) {
    tend_ref *s = tend_check_ref(L, 3, "tell", "sender");
    sid = s->id;
    sgen = s->gen;
  }
  tend_actor_send_ref(L, h, r, 1, 2, sid, sgen, 0);
  return 0;
}

static int l_ref_path(lua_State *L) {
  tend_check_ref(L, 1, "path", "self");
  tend_ref_push_path(L, tend_host_of(L), 1);
  return 1;
}

static int l_ref_name(lua_State *L) {
  tend_check_ref(L, 1, "name", "self");
  tend_ref_push_path(L, tend_host_of(L), 1);
  const char *p = lua_tostring(L, -1);
  const char *slash = strrchr(p, '/');
  lua_pushstring(L, slash ? slash + 1 : p);
  return 1;
}

static int l_ref_tostring(lua_State *L) {
  tend_check_ref(L, 1, "tostring", "self");
  tend_ref_push_path(L, tend_host_of(L), 1);
  lua_pushfstring(L, "Ref(%s)", lua_tostring(L, -1));
  return 1;
}

static int l_ref_eq(lua_State *L) {
  tend_ref *a = tend_ref_test(L, 1), *b = tend_ref_test(L, 2);
  lua_pushboolean(L, a && b && a->id == b->id && a->gen == b->gen);
  return 1;
}

void tend_open_ref(lua_State *L) {
  static const luaL_Reg methods[] = {{"tell", l_ref_tell},
                                     {"path", l_ref_path},
                                     {"name", l_ref_name},
                                     {NULL, NULL}};
  tend_host *h = tend_host_of(L);
  push_send(L, h); /* tend.send */
  lua_setfield(L, -2, "send");
  luaL_newmetatable(L, TEND_REF_MT);
  lua_pushvalue(L, -1);
  tend_host_set_metatable(
      h, TEND_MT_REF, luaL_ref(L, LUA_REGISTRYINDEX)); /* for tend_ref_new */
  luaL_newlib(L, methods);
  push_send(L, h);
  lua_setfield(L, -2, "send");
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, l_ref_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pushcfunction(L, l_ref_eq);
  lua_setfield(L, -2, "__eq");
  lua_pop(L, 1);
}
