/* lctx: the ctx a behavior receives (the actor's own record, tend.Ctx):
 * its metatable, its fields (self, parent, sender) and the methods that
 * are about the actor itself. Other files add their methods (spawn, after,
 * ask, watch, log, ...) with tend_ctx_add_methods. */
#include "api/api.h"
#include "runtime/supervision/backoff_sup.h"
#include "runtime/core/error.h"
#include "runtime/core/lifecycle.h"
#include "runtime/supervision/typed.h"
#include "runtime/core/value.h"
#include "runtime/core/host.h"
#include "runtime/core/ref.h"
#include "runtime/core/send.h"

tend_actor *tend_check_ctx(lua_State *L, int idx) {
  tend_actor *a = lua_touserdata(L, idx);
  tend_actor *running = tend_host_of(L)->current;
  if (a != NULL && a == running) /* the hot path: the running actor's own */
    return a; /* record (Lua code cannot make a light userdata with it) */
  if (a == NULL || lua_islightuserdata(L, idx) ||
      lua_rawlen(L, idx) != sizeof *a || a->magic != TEND_ACTOR_MAGIC)
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
  for (tend_actor *c = a->first_child; c; c = c->next_sibling) {
    tend_actor_push_ref(L, h, c);
    lua_rawseti(L, -2, ++i);
  }
  return 1;
}

static int l_ctx_reply(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_actor *a = tend_check_own_ctx(L, 1, "ctx:reply");
  if (lua_gettop(L) != 2) lua_settop(L, 2);
  if (a->sender_id == 0) { /* nobody to answer: a dead letter, as Akka */
    tend_actor_dead_letter_msg(L, h, NULL, 2, a->id, a->gen,
                               "a reply, but the message had no sender");
    return 0;
  }
  tend_actor_send_in(L, h, a->sender_id, a->sender_gen, 2, a->id, a->gen,
                     lua_upvalueindex(1)); /* the fast value store */
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
  if (c != a && c->parent != a)
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
  if (lua_getiuservalue(L, ctx, TEND_UV_REF) == LUA_TNIL) {
    lua_pop(L, 1);
    tend_actor_push_ref(L, h, a);
  }
}

/* ctx.sender / ctx.self / ctx.parent, else a method. Upvalues: 1 methods,
 * 2 "sender", 3 "self", 4 "parent" (interned, so compared by address:
 * h->ctx_keys), 5 the anchor table (actor id -> record), so the hot path
 * skips the registry. */
static int l_ctx_index(lua_State *L) {
  tend_host *h = tend_host_of(L);
  /* NULL for a key that is neither a string nor a number; a number is
   * made a string in this call's own slot, which no method is named */
  const char *k = lua_tostring(L, 2);
  tend_actor *a;
  if (k != h->ctx_keys[0] && k != h->ctx_keys[1] && k != h->ctx_keys[2]) {
    lua_rawget(L, lua_upvalueindex(1)); /* a method (it checks its self) */
    return 1;
  }
  a = tend_check_ctx(L, 1);
  if (k == h->ctx_keys[0]) {
    tend_actor *s = tend_actor_live(h, a->sender_id, a->sender_gen);
    if (s == NULL) {
      tend_ref_push(L, h, a->sender_id, a->sender_gen);
    } else {
      lua_rawgeti(L, lua_upvalueindex(5), s->id);
      push_cached_ref(L, h, s, -1);
    }
  } else if (k == h->ctx_keys[1]) {
    if (tend_actor_state_of(a) == TEND_ACTOR_DEAD)
      tend_actor_push_ref(L, h, a);
    else
      push_cached_ref(L, h, a, 1);
  } else {
    if (a->parent)
      tend_actor_push_ref(L, h, a->parent);
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
  h->ctx_keys[0] = lua_pushliteral(L, "sender"); /* kept by the closure */
  h->ctx_keys[1] = lua_pushliteral(L, "self");
  h->ctx_keys[2] = lua_pushliteral(L, "parent");
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->anchors_ref);
  lua_pushcclosure(L, l_ctx_index, 5);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, l_ctx_newindex);
  lua_setfield(L, -2, "__newindex");
  lua_pushcfunction(L, l_ctx_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pop(L, 1);
}
