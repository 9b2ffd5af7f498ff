/* lctx: the ctx a behavior receives (the actor's own record, tend.Ctx),
 * its methods, and spawn with validated options. */
#include <lauxlib.h>
#include <math.h>
#include <string.h>

#include "backoff_sup.h"
#include "lbind.h"
#include "sched.h"
#include "value.h"

tend_actor *tend_ctx_check(lua_State *L, int idx) {
  tend_actor *a = lua_touserdata(L, idx);
  if (a == NULL || lua_islightuserdata(L, idx) ||
      lua_rawlen(L, idx) != sizeof *a || a->magic != TEND_ACTOR_MAGIC)
    luaL_error(L, "expected a ctx (call it as ctx:method(...)), got %s",
               tend_typename(L, idx));
  return a;
}

/* ------------------------------------------------------------ options */

static const char *const spawn_keys[] = {
    "name",       "args",    "mailbox",          "shutdown",
    "supervisor", "restart", "max_message_time", NULL};
static const char *const mailbox_keys[] = {"capacity", "overflow", NULL};
static const char *const overflow_names[] = {"drop_new", "drop_old", "fail",
                                             NULL};
static const char *const restart_names[] = {"permanent", "transient",
                                            "temporary", NULL};

/* Raises unless every key of the table at t is in keys. */
static void check_keys(lua_State *L, int t, const char *const *keys,
                       const char *fn, const char *prefix) {
  lua_pushnil(L);
  while (lua_next(L, t)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TSTRING ||
        tend_find_name(keys, lua_tostring(L, -1)) < 0) {
      const char *key = luaL_tolstring(L, -1, NULL);
      luaL_Buffer b;
      luaL_buffinit(L, &b);
      for (int i = 0; keys[i]; i++) {
        if (i) luaL_addstring(&b, ", ");
        luaL_addstring(&b, keys[i]);
      }
      luaL_pushresult(&b);
      luaL_error(L, "%s: unknown option '%s%s' (expected one of: %s)", fn,
                 prefix, key, lua_tostring(L, -1));
    }
  }
}

static int64_t check_duration(lua_State *L, int idx, const char *fn,
                              const char *opt, int allow_huge) {
  if (lua_type(L, idx) != LUA_TNUMBER)
    tend_bad_option(L, fn, opt, "a number of seconds >= 0", idx);
  double s = lua_tonumber(L, idx);
  if (!(s >= 0) || (isinf(s) && !allow_huge))
    tend_bad_option(L, fn, opt, "a number of seconds >= 0", idx);
  return isinf(s) ? INT64_MAX : tend_clock_ns(s);
}

void tend_spawn_parse(lua_State *L, int idx, const char *fn,
                      tend_spawn_opts *o) {
  memset(o, 0, sizeof *o);
  o->shutdown_ns = tend_clock_ns(5.0);
  if (lua_isnoneornil(L, idx)) return;
  if (!lua_istable(L, idx))
    luaL_error(L, "%s: options: expected a table, got %s", fn,
               tend_typename(L, idx));
  idx = lua_absindex(L, idx);
  check_keys(L, idx, spawn_keys, fn, "");
  if (lua_getfield(L, idx, "name") != LUA_TNIL) {
    size_t len = 0;
    const char *name =
        lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &len) : NULL;
    if (name == NULL || len == 0 || len > 255 || strchr(name, '/') ||
        name[0] == '$' || strlen(name) != len)
      tend_bad_option(L, fn, "name",
                      "a non-empty string without '/', not starting with '$'",
                      -1);
    o->name = lua_gettop(L); /* stays on the stack for the caller */
  } else {
    lua_pop(L, 1);
  }
  if (lua_getfield(L, idx, "args") != LUA_TNIL) {
    if (!lua_istable(L, -1))
      tend_bad_option(L, fn, "args", "a table (list)", -1);
    o->args = lua_gettop(L);
  } else {
    lua_pop(L, 1);
  }
  if (lua_getfield(L, idx, "mailbox") != LUA_TNIL) {
    int mb = lua_gettop(L);
    if (!lua_istable(L, mb))
      tend_bad_option(L, fn, "mailbox", "a table {capacity=N, overflow=...}",
                      mb);
    check_keys(L, mb, mailbox_keys, fn, "mailbox.");
    if (lua_getfield(L, mb, "capacity") != LUA_TNIL) {
      if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1 ||
          lua_tointeger(L, -1) > UINT32_MAX)
        tend_bad_option(L, fn, "mailbox.capacity", "an integer >= 1", -1);
      o->capacity = (uint32_t)lua_tointeger(L, -1);
    }
    if (lua_getfield(L, mb, "overflow") != LUA_TNIL) {
      int i = lua_type(L, -1) == LUA_TSTRING
                  ? tend_find_name(overflow_names, lua_tostring(L, -1))
                  : -1;
      if (i < 0)
        tend_bad_option(L, fn, "mailbox.overflow",
                        "\"drop_new\", \"drop_old\" or \"fail\"", -1);
      o->overflow = (tend_overflow)i;
    }
    lua_settop(L, mb - 1);
  } else {
    lua_pop(L, 1);
  }
  if (lua_getfield(L, idx, "shutdown") != LUA_TNIL)
    o->shutdown_ns = check_duration(L, -1, fn, "shutdown", 1);
  lua_pop(L, 1);
  if (lua_getfield(L, idx, "restart") != LUA_TNIL) {
    int i = lua_type(L, -1) == LUA_TSTRING
                ? tend_find_name(restart_names, lua_tostring(L, -1))
                : -1;
    if (i < 0)
      tend_bad_option(L, fn, "restart",
                      "\"permanent\", \"transient\" or \"temporary\"", -1);
    o->restart = i == 0   ? TEND_PERMANENT
                 : i == 1 ? TEND_TRANSIENT
                          : TEND_TEMPORARY;
  }
  lua_pop(L, 1);
  if (lua_getfield(L, idx, "max_message_time") != LUA_TNIL) {
    if (lua_type(L, -1) != LUA_TNUMBER || !(lua_tonumber(L, -1) > 0))
      tend_bad_option(L, fn, "max_message_time", "a number of seconds > 0", -1);
    o->max_message_ns = tend_clock_ns(lua_tonumber(L, -1));
    if (o->max_message_ns == 0) o->max_message_ns = 1;
  }
  lua_pop(L, 1);
  if (lua_getfield(L, idx, "supervisor") != LUA_TNIL) {
    if (!tend_strategy_test(L, -1))
      tend_bad_option(L, fn, "supervisor",
                      "a strategy (tend.one_for_one{...}, tend.stopping, ...)",
                      -1);
    o->supervisor = lua_gettop(L); /* stays on the stack for the caller */
  } else {
    lua_pop(L, 1);
  }
}

int tend_spawn_under(lua_State *L, tend_actor *parent, int off,
                     const char *fn) {
  tend_host *h = tend_host_of(L);
  if (tend_backoff_is_spec(L, 1 + off))
    return tend_backoff_spawn(L, parent, off, fn);
  if (lua_istable(L, 1 + off) && lua_getmetatable(L, 1 + off)) {
    luaL_getmetatable(L, TEND_SUPERVISED_SPEC_MT);
    int typed = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
    if (typed) return tend_typed_spawn(L, parent, off, fn);
  }
  if (!lua_isfunction(L, 1 + off))
    luaL_error(L,
               "%s: factory: expected a function or a backoff/supervise spec, "
               "got %s",
               fn, tend_typename(L, 1 + off));
  lua_settop(L, 2 + off);
  tend_spawn_opts o;
  tend_spawn_parse(L, 2 + off, fn, &o);
  if (h->shutting_down)
    luaL_error(L, "%s: the host is shutting down; nothing can be spawned", fn);
  if (parent->state >= TEND_ACTOR_STOPPING)
    luaL_error(L, "%s: the parent is stopping; it cannot take new children",
               fn);
  tend_actor_spawn(L, h, parent, 1 + off, &o);
  return 1;
}

/* ------------------------------------------------------------ methods */

static int l_ctx_spawn(lua_State *L) {
  tend_actor *a = tend_ctx_check(L, 1);
  return tend_spawn_under(L, a, 1, "ctx:spawn");
}

static int l_ctx_children(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_actor *a = tend_ctx_check(L, 1);
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
  tend_actor *a = tend_ctx_check(L, 1);
  lua_settop(L, 2);
  if (a->sender_id == 0) { /* nobody to answer: a dead letter, as Akka */
    tend_actor_dead_letter(L, h, NULL, NULL);
    return 0;
  }
  tend_actor_send(L, h, a->sender_id, a->sender_gen, 2, a->id, a->gen);
  return 0;
}

/* ctx:stop([ref]): stop self, or a child of this actor. */
static int l_ctx_stop(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_actor *a = tend_ctx_check(L, 1);
  if (lua_isnoneornil(L, 2)) {
    tend_actor_stop(L, h, a, TEND_STOP_NORMAL);
    return 0;
  }
  tend_ref *r = tend_ref_check(L, 2, "ctx:stop", "ref");
  tend_actor *c = tend_ref_actor(h, r);
  if (c == NULL) return 0; /* already dead */
  if (c != a && c->parent != a)
    luaL_error(L, "ctx:stop: %s is not a child of this actor (use tend.stop)",
               luaL_tolstring(L, 2, NULL));
  tend_actor_stop(L, h, c, c == a ? TEND_STOP_NORMAL : TEND_STOP_BY_PARENT);
  return 0;
}

/* ctx:log(level, fmt, ...) */
static int l_ctx_log(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_actor *a = tend_ctx_check(L, 1);
  int level = tend_log_parse(luaL_checkstring(L, 2));
  if (level < 0)
    luaL_error(L, "ctx:log: level: expected error, warn, info or debug, got %s",
               lua_tostring(L, 2));
  if ((tend_log_level)level > h->log_level) return 0;
  int n = lua_gettop(L);
  lua_getglobal(L, "string");
  lua_getfield(L, -1, "format");
  for (int i = 3; i <= n; i++) lua_pushvalue(L, i);
  lua_call(L, n - 2, 1);
  tend_actor_push_path(L, h, a);
  tend_host_log(h, (tend_log_level)level, lua_tostring(L, -1), "%s",
                lua_tostring(L, -2));
  return 0;
}

/* ctx:reset_backoff(): the child of a backoff supervisor (or a typed
 * actor) resets its backoff (manual reset). */
static int l_ctx_reset_backoff(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_actor *a = tend_ctx_check(L, 1);
  tend_backoff_reset(L, h, a);
  return 0;
}

static int l_ctx_sleep(lua_State *L) {
  tend_ctx_check(L, 1);
  lua_remove(L, 1);
  return tend_l_sleep(L);
}

static int l_ctx_ask(lua_State *L) {
  tend_ctx_check(L, 1);
  lua_remove(L, 1);
  return tend_l_ask(L);
}

static int l_ctx_tostring(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_actor *a = tend_ctx_check(L, 1);
  if (a->state == TEND_ACTOR_DEAD) {
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
 * 2 "sender", 3 "self", 4 "parent" (interned: compared by identity), 5 the
 * anchor table (actor id -> record), so the hot path skips the registry. */
static int l_ctx_index(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_actor *a = tend_ctx_check(L, 1);
  if (lua_rawequal(L, 2, lua_upvalueindex(2))) {
    tend_actor *s = tend_actor_live(h, a->sender_id, a->sender_gen);
    if (s == NULL) {
      tend_ref_push(L, h, a->sender_id, a->sender_gen);
    } else {
      lua_rawgeti(L, lua_upvalueindex(5), s->id);
      push_cached_ref(L, h, s, lua_gettop(L));
    }
  } else if (lua_rawequal(L, 2, lua_upvalueindex(3))) {
    if (a->state == TEND_ACTOR_DEAD)
      tend_actor_push_ref(L, h, a);
    else
      push_cached_ref(L, h, a, 1);
  } else if (lua_rawequal(L, 2, lua_upvalueindex(4))) {
    if (a->parent)
      tend_actor_push_ref(L, h, a->parent);
    else
      lua_pushnil(L);
  } else {
    lua_pushvalue(L, 2);
    lua_rawget(L, lua_upvalueindex(1));
  }
  return 1;
}

static int l_ctx_newindex(lua_State *L) {
  return luaL_error(L, "ctx is read-only (cannot set '%s')",
                    luaL_tolstring(L, 2, NULL));
}

void tend_ctx_open(lua_State *L) {
  static const luaL_Reg methods[] = {{"spawn", l_ctx_spawn},
                                     {"children", l_ctx_children},
                                     {"reply", l_ctx_reply},
                                     {"stop", l_ctx_stop},
                                     {"after", tend_l_ctx_after},
                                     {"every", tend_l_ctx_every},
                                     {"sleep", l_ctx_sleep},
                                     {"ask", l_ctx_ask},
                                     {"log", l_ctx_log},
                                     {"watch", tend_l_ctx_watch},
                                     {"unwatch", tend_l_ctx_unwatch},
                                     {"reset_backoff", l_ctx_reset_backoff},
                                     {NULL, NULL}};
  luaL_newmetatable(L, TEND_CTX_MT);
  luaL_newlib(L, methods);
  lua_pushliteral(L, "sender");
  lua_pushliteral(L, "self");
  lua_pushliteral(L, "parent");
  lua_rawgeti(L, LUA_REGISTRYINDEX, tend_host_of(L)->anchors_ref);
  lua_pushcclosure(L, l_ctx_index, 5);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, l_ctx_newindex);
  lua_setfield(L, -2, "__newindex");
  lua_pushcfunction(L, l_ctx_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pushliteral(L, "tend.Ctx");
  lua_setfield(L, -2, "__name");
  lua_pop(L, 1);
}
