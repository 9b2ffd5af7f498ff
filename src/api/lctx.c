/* lctx: the ctx a behavior receives (the actor's own record, tend.Ctx):
 * its metatable, its fields (self, parent, sender) and the methods that
 * are about the actor itself. Other files add their methods (spawn, after,
 * ask, watch, log, ...) with tend_ctx_add_methods. */
#include "api/api.h"

tend_actor *tend_check_ctx(lua_State *L, int idx) {
  tend_actor *a = lua_touserdata(L, idx);
  tend_actor *running = tend_host_current(tend_host_of(L));
  if (a != NULL && a == running) /* the hot path: the running actor's own */
    return a; /* record (Lua code cannot make a light userdata with it) */
  if (tend_actor_test(L, idx) == NULL)
    luaL_error(L, "expected a ctx (call it as ctx:method(...)), got %s",
               tend_typename(L, idx));
  return a;
}

tend_actor *tend_check_own_ctx(lua_State *L, int idx, const char *fn) {
  tend_host *h = tend_host_of(L);
  tend_actor *a = tend_check_ctx(L, idx);
  if (tend_host_current(h) == a) return a;
  idx = lua_absindex(L, idx);
  if (!tend_actor_push_cached_path(L, idx)) /* a dead one keeps it there */
    tend_actor_push_path(L, h, a);
  if (tend_host_current(h))
    tend_actor_push_path(L, h, tend_host_current(h));
  else
    lua_pushliteral(L, "no actor");
  luaL_error(L, "%s called outside its actor (%s); running: %s", fn,
             lua_tostring(L, -2), lua_tostring(L, -1));
  return NULL;
}

/* ------------------------------------------------------------ methods */

static int l_ctx_children(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_actor *a = tend_check_own_ctx(L, 1, "ctx:children");
  lua_newtable(L);
  int i = 0;
  for (tend_actor *c = tend_actor_first_child(a); c;
       c = tend_actor_next_sibling(c)) {
    tend_actor_push_ref(L, h, c);
    lua_rawseti(L, -2, ++i);
  }
  return 1;
}

static int l_ctx_reply(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_actor *a = tend_check_own_ctx(L, 1, "ctx:reply");
  if (lua_gettop(L) != 2) lua_settop(L, 2);
  uint32_t id = tend_actor_id(a), gen = tend_actor_gen(a);
  if (tend_actor_sender_id(a) == 0) { /* nobody to answer: a dead letter */
    tend_actor_dead_letter_msg(L, h, NULL, 2, id, gen,
                               "a reply, but the message had no sender");
    return 0;
  }
  tend_actor_send_in(L, h, tend_actor_sender_id(a), tend_actor_sender_gen(a), 2,
                     id, gen, lua_upvalueindex(1)); /* the fast store */
  return 0;
}

/* ctx:stop([ref]): stop self, or a child of this actor. */
static int l_ctx_stop(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_actor *a = tend_check_own_ctx(L, 1, "ctx:stop");
  if (lua_isnoneornil(L, 2)) {
    tend_actor_stop(L, h, a, TEND_STOP_NORMAL);
    return 0;
  }
  tend_ref *r = tend_check_ref(L, 2, "ctx:stop", "ref");
  tend_actor *c = tend_ref_actor(h, r);
  if (c == NULL) return 0; /* already dead */
  if (c != a && tend_actor_parent(c) != a)
    luaL_error(L, "ctx:stop: %s is not a child of this actor (use tend.stop)",
               luaL_tolstring(L, 2, NULL));
  tend_actor_stop(L, h, c, c == a ? TEND_STOP_NORMAL : TEND_STOP_BY_PARENT);
  return 0;
}

/* ctx:reset_backoff(): the child of a backoff supervisor (or a typed
 * actor) resets its backoff (manual reset). */
static int l_ctx_reset_backoff(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_actor *a = tend_check_own_ctx(L, 1, "ctx:reset_backoff");
  if (!tend_backoff_reset(L, h, a) && !tend_typed_reset(a))
    luaL_error(
        L, "ctx:reset_backoff: this actor is not under a backoff supervisor");
  return 0;
}

static int l_ctx_tostring(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_actor *a = tend_check_ctx(L, 1);
  if (tend_actor_state_of(a) == TEND_ACTOR_DEAD) {
    lua_pushliteral(L, "Ctx(dead)");
    return 1;
  }
  tend_actor_push_path(L, h, a);
  lua_pushfstring(L, "Ctx(%s)", lua_tostring(L, -1));
  return 1;
}

/* Pushes the canonical ref of the live actor a, whose record is at stack
 * index ctx, or falls back to tend_actor_push_ref. */
static void push_cached_ref(lua_State *L, tend_host *h, tend_actor *a,
                            int ctx) {
  if (!tend_actor_push_cached_ref(L, ctx)) tend_actor_push_ref(L, h, a);
}

/* ctx.sender / ctx.self / ctx.parent, else a method. Upvalues: 1 methods,
 * 2 "sender", 3 "self", 4 "parent" (interned, so compared by address:
 * tend_host_ctx_keys), 5 the anchor table (actor id -> record), so the hot path
 * skips the registry. */
static int l_ctx_index(lua_State *L) {
  tend_host *h = tend_host_of(L);
  /* NULL for a key that is neither a string nor a number; a number is
   * made a string in this call's own slot, which no method is named */
  const char *k = lua_tostring(L, 2);
  const char *const *keys = tend_host_ctx_keys(h);
  tend_actor *a;
  if (k != keys[0] && k != keys[1] && k != keys[2]) {
    lua_rawget(L, lua_upvalueindex(1)); /* a method (it checks its self) */
    return 1;
  }
  a = tend_check_ctx(L, 1);
  if (k == keys[0]) {
    uint32_t sid = tend_actor_sender_id(a), sgen = tend_actor_sender_gen(a);
    tend_actor *s = tend_actor_live(h, sid, sgen);
    if (s == NULL) {
      tend_ref_push(L, h, sid, sgen);
    } else {
      lua_rawgeti(L, lua_upvalueindex(5), sid);
      push_cached_ref(L, h, s, -1);
    }
  } else if (k == keys[1]) {
    if (tend_actor_state_of(a) == TEND_ACTOR_DEAD)
      tend_actor_push_ref(L, h, a);
    else
      push_cached_ref(L, h, a, 1);
  } else {
    if (tend_actor_parent(a))
      tend_actor_push_ref(L, h, tend_actor_parent(a));
    else
      lua_pushnil(L);
  }
  return 1;
}

static int l_ctx_newindex(lua_State *L) {
  return luaL_error(L, "ctx is read-only (cannot set '%s')",
                    luaL_tolstring(L, 2, NULL));
}

void tend_ctx_add_methods(lua_State *L, const luaL_Reg *fns) {
  luaL_getmetatable(L, TEND_CTX_MT);
  lua_getfield(L, -1, "methods");
  luaL_setfuncs(L, fns, 0);
  lua_pop(L, 2);
}

void tend_open_ctx(lua_State *L) {
  static const luaL_Reg methods[] = {{"children", l_ctx_children},
                                     {"reply", l_ctx_reply},
                                     {"stop", l_ctx_stop},
                                     {"reset_backoff", l_ctx_reset_backoff},
                                     {NULL, NULL}};
  luaL_newmetatable(L, TEND_CTX_MT);
  lua_pushvalue(L, -1);
  tend_host_set_metatable(tend_host_of(L), TEND_MT_CTX,
                          luaL_ref(L, LUA_REGISTRYINDEX)); /* actor.c */
  luaL_newlibtable(L, methods);
  tend_value_push_store(L, tend_host_of(L));
  luaL_setfuncs(L, methods, 1); /* upvalue 1: the fast value store */
  lua_pushvalue(L, -1);
  lua_setfield(L, -3, "methods"); /* tend_ctx_add_methods adds here */
  tend_host *h = tend_host_of(L);
  const char **keys = tend_host_ctx_keys(h);
  keys[0] = lua_pushliteral(L, "sender"); /* kept by the closure */
  keys[1] = lua_pushliteral(L, "self");
  keys[2] = lua_pushliteral(L, "parent");
  tend_host_push_anchors(L, h);
  lua_pushcclosure(L, l_ctx_index, 5);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, l_ctx_newindex);
  lua_setfield(L, -2, "__newindex");
  lua_pushcfunction(L, l_ctx_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pop(L, 1);
}
