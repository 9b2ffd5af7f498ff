/* lstrategy: the Lua builders of supervisor strategies and deciders
 * (design §3.3). They validate and produce data; supervise.c acts on it.
 * A strategy is a userdata "tend.Strategy" (a tend_strategy) whose user
 * value is its decider: nil (the default), a decider table or a function.
 * A decider table is what tend.decider{...} returns: kind -> directive. */
#include <math.h>
#include <string.h>

#include "api/api.h"

#define TEND_DECIDER_MT "tend.Decider"

static int is_decider_table(lua_State *L, int idx) {
  if (!lua_istable(L, idx) || !lua_getmetatable(L, idx)) return 0;
  luaL_getmetatable(L, TEND_DECIDER_MT);
  int same = lua_rawequal(L, -1, -2);
  lua_pop(L, 2);
  return same;
}

/* Checks a decider table's clauses at idx for fn; raises on a bad one. */
static void check_clauses(lua_State *L, int idx, const char *fn) {
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -2) != LUA_TSTRING)
      luaL_error(L, "%s: error kinds must be strings, got %s", fn,
                 tend_typename(L, -2));
    if (lua_type(L, -1) != LUA_TSTRING ||
        tend_directive_parse(lua_tostring(L, -1)) < 0) {
      const char *kind = lua_tostring(L, -2);
      const char *got = luaL_tolstring(L, -1, NULL);
      luaL_error(L,
                 "%s: directive for '%s': expected \"resume\", \"restart\", "
                 "\"stop\" or \"escalate\", got %s",
                 fn, kind, got);
    }
    lua_pop(L, 1);
  }
}

/* tend.decider{kind = directive, ["*"] = directive} -> decider */
static int l_decider(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  check_clauses(L, 1, "tend.decider");
  lua_newtable(L); /* a copy: later changes to the argument do not count */
  lua_pushnil(L);
  while (lua_next(L, 1)) {
    lua_pushvalue(L, -2);
    lua_insert(L, -2);
    lua_rawset(L, -4);
  }
  luaL_setmetatable(L, TEND_DECIDER_MT);
  return 1;
}

static const char *const strategy_keys[] = {
    "max_retries", "within", "window", "on_limit", "decider", "log", NULL};

/* Pushes a new strategy userdata holding s (no decider). */
static void push_strategy(lua_State *L, tend_strategy s) {
  tend_strategy *u = lua_newuserdatauv(L, sizeof *u, 1);
  *u = s;
  luaL_setmetatable(L, TEND_STRATEGY_MT);
}

/* Builds a strategy of kind from the options table at 1 (may be absent). */
static int build(lua_State *L, tend_strategy_kind kind, const char *fn) {
  tend_strategy s = tend_strategy_default();
  s.kind = kind;
  int64_t max_retries = -1, within = INT64_MAX;
  int decider = 0;
  if (!lua_isnoneornil(L, 1)) {
    if (!lua_istable(L, 1))
      luaL_error(L, "%s: options: expected a table, got %s", fn,
                 tend_typename(L, 1));
    tend_check_keys(L, 1, strategy_keys, fn, "");
    if (lua_getfield(L, 1, "max_retries") != LUA_TNIL) {
      if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < -1)
        tend_bad_option(L, fn, "max_retries", "an integer >= -1", -1);
      max_retries = lua_tointeger(L, -1);
    }
    if (lua_getfield(L, 1, "within") != LUA_TNIL) {
      double w = lua_type(L, -1) == LUA_TNUMBER ? lua_tonumber(L, -1) : -1;
      if (!(w > 0))
        tend_bad_option(L, fn, "within",
                        "a number of seconds > 0 (math.huge: no window)", -1);
      if (w > TEND_MAX_SECONDS && !isinf(w))
        tend_bad_option(L, fn, "within",
                        "a number of seconds <= 1e9 (math.huge: no window)",
                        -1);
      within = isinf(w) ? INT64_MAX : tend_clock_ns(w);
      if (within == 0) within = 1;
    }
    if (lua_getfield(L, 1, "window") != LUA_TNIL) {
      const char *w = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
      if (strcmp(w, "sliding") == 0)
        s.limit.window = TEND_WINDOW_SLIDING;
      else if (strcmp(w, "fixed") == 0)
        s.limit.window = TEND_WINDOW_FIXED;
      else
        tend_bad_option(L, fn, "window", "\"sliding\" or \"fixed\"", -1);
    }
    if (lua_getfield(L, 1, "on_limit") != LUA_TNIL) {
      const char *o = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
      if (strcmp(o, "stop_child") == 0)
        s.on_limit = TEND_ON_LIMIT_STOP_CHILD;
      else if (strcmp(o, "escalate") == 0)
        s.on_limit = TEND_ON_LIMIT_ESCALATE;
      else
        tend_bad_option(L, fn, "on_limit", "\"stop_child\" or \"escalate\"",
                        -1);
    }
    if (lua_getfield(L, 1, "log") != LUA_TNIL) {
      if (!lua_isboolean(L, -1)) tend_bad_option(L, fn, "log", "a boolean", -1);
      s.log = lua_toboolean(L, -1);
    }
    if (lua_getfield(L, 1, "decider") != LUA_TNIL) {
      decider = lua_gettop(L);
      if (!lua_isfunction(L, decider)) {
        if (!lua_istable(L, decider))
          tend_bad_option(L, fn, "decider",
                          "a function(err, child) or tend.decider{...}",
                          decider);
        if (!is_decider_table(L, decider)) { /* a plain table: make it one */
          lua_pushcfunction(L, l_decider);
          lua_pushvalue(L, decider);
          lua_call(L, 1, 1);
          lua_replace(L, decider);
        }
      }
    }
  }
  s.limit = tend_limit_make(max_retries, within, s.limit.window);
  push_strategy(L, s);
  if (decider) {
    lua_pushvalue(L, decider);
    lua_setiuservalue(L, -2, 1);
  }
  return 1;
}

static int l_one_for_one(lua_State *L) {
  return build(L, TEND_ONE_FOR_ONE, "tend.one_for_one");
}
static int l_all_for_one(lua_State *L) {
  return build(L, TEND_ALL_FOR_ONE, "tend.all_for_one");
}
static int l_rest_for_one(lua_State *L) {
  return build(L, TEND_REST_FOR_ONE, "tend.rest_for_one");
}

/* ------------------------------------------------------------ describe */

/* Pushes the kinds a decider table (at idx; else nothing) names, sorted,
 * "*" left out, so the words are stable; returns their number. */
static int push_sorted_kinds(lua_State *L, int idx) {
  lua_newtable(L);
  int keys = lua_gettop(L), n = 0;
  if (!lua_istable(L, idx)) return 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    if (strcmp(lua_tostring(L, -1), "*") != 0) {
      lua_pushvalue(L, -1);
      lua_rawseti(L, keys, ++n);
    }
  }
  lua_getglobal(L, "table");
  lua_getfield(L, -1, "sort");
  lua_pushvalue(L, keys);
  lua_call(L, 1, 0);
  lua_pop(L, 1);
  return n;
}

/* Adds the default decider's words to b, from errkind.h's directives:
 * "InitError, Killed, DeathPact -> stop, anything else -> restart". */
static void add_default_decider(luaL_Buffer *b) {
  int n = 0;
#define STOPS(id, name, directive, brief) \
  if (TEND_##directive == TEND_STOP) {    \
    if (n++) luaL_addstring(b, ", ");     \
    luaL_addstring(b, name);              \
  }
  TEND_ERROR_KIND_MAP(STOPS)
#undef STOPS
  luaL_addstring(b, " -> stop, anything else -> restart");
}

/* Pushes the words for strategy s (decider at uservalue). */
static void describe_strategy(lua_State *L, int idx) {
  const tend_strategy *s = tend_strategy_test(L, idx);
  luaL_Buffer b;
  lua_getiuservalue(L, idx, 1);
  int decider = lua_gettop(L);
  int n = push_sorted_kinds(L, decider); /* below the buffer, as it must */
  int keys = lua_gettop(L);
  luaL_buffinit(L, &b);
  if (s->stopping) {
    luaL_addstring(&b, "stopping: every failure stops the child");
    luaL_pushresult(&b);
    lua_replace(L, decider);
    lua_settop(L, decider);
    return;
  }
  static const char *const kinds[] = {"one_for_one", "all_for_one",
                                      "rest_for_one"};
  luaL_addstring(&b, kinds[s->kind]);
  luaL_addstring(&b, ": ");
  const char *group = s->kind == TEND_ONE_FOR_ONE ? "the child"
                      : s->kind == TEND_ALL_FOR_ONE
                          ? "all children"
                          : "the child and those started after it";
  if (s->limit.max < 0) {
    luaL_addstring(&b, "restarts without limit");
  } else {
    lua_pushfstring(L, "at most %I restart%s", (lua_Integer)s->limit.max,
                    s->limit.max == 1 ? "" : "s");
    luaL_addvalue(&b);
    if (s->limit.within == INT64_MAX) {
      luaL_addstring(&b, " in total");
    } else {
      luaL_addstring(&b, " per ");
      tend_add_seconds(&b, L, s->limit.within);
      luaL_addstring(&b, s->limit.window == TEND_WINDOW_SLIDING
                             ? " s (sliding window)"
                             : " s (fixed window)");
    }
    luaL_addstring(
        &b, s->kind == TEND_ONE_FOR_ONE ? " per child" : " for the group");
    luaL_addstring(&b, s->on_limit == TEND_ON_LIMIT_ESCALATE ? ", then escalate"
                                                             : ", then stop ");
    if (s->on_limit != TEND_ON_LIMIT_ESCALATE) luaL_addstring(&b, group);
  }
  luaL_addstring(&b, "; directives apply to ");
  luaL_addstring(&b, group);
  luaL_addstring(&b, "; decider: ");
  if (lua_isfunction(L, decider)) {
    luaL_addstring(&b, "a function");
  } else if (lua_istable(L, decider)) {
    for (int i = 1; i <= n; i++) {
      lua_rawgeti(L, keys, i);
      lua_pushvalue(L, -1);
      lua_rawget(L, decider);
      lua_pushfstring(L, "%s%s -> %s", i > 1 ? ", " : "", lua_tostring(L, -2),
                      lua_tostring(L, -1));
      lua_replace(L, -3);
      lua_pop(L, 1);
      luaL_addvalue(&b);
    }
    lua_getfield(L, decider, "*");
    lua_pushfstring(L, "%sanything else -> %s", n ? ", " : "",
                    lua_isstring(L, -1) ? lua_tostring(L, -1) : "escalate");
    lua_remove(L, -2);
    luaL_addvalue(&b);
  } else {
    add_default_decider(&b);
  }
  luaL_pushresult(&b);
  lua_replace(L, decider);
  lua_settop(L, decider);
}

/* tend.describe(x) -> words for what x (a strategy, a backoff spec or a
 * typed action) allows */
static int l_describe(lua_State *L) {
  if (tend_strategy_test(L, 1)) {
    describe_strategy(L, 1);
    return 1;
  }
  if (tend_backoff_is_spec(L, 1)) {
    tend_backoff_describe(L, 1);
    return 1;
  }
  if (tend_typed_describe(L, 1)) return 1;
  return luaL_error(L,
                    "tend.describe: expected a strategy, a backoff spec or a "
                    "typed action (tend.restart_with_backoff, ...), got %s",
                    tend_typename(L, 1));
}

/* tend.guardian_strategy(strategy): the strategy of /user (default:
 * tend.default_strategy); a failure it escalates ends the host with 1. */
static int l_guardian_strategy(lua_State *L) {
  tend_host *h = tend_host_of(L);
  if (!tend_strategy_test(L, 1))
    luaL_error(L, "tend.guardian_strategy: expected a strategy, got %s",
               tend_typename(L, 1));
  if (tend_host_user(h) == NULL)
    luaL_error(L, "tend.guardian_strategy: the host is shutting down");
  tend_actor_set_strategy(L, tend_host_user(h), tend_strategy_test(L, 1),
                          tend_strategy_push_decider(L, 1));
  return 0;
}

void tend_open_strategy(lua_State *L) {
  static const luaL_Reg fns[] = {{"one_for_one", l_one_for_one},
                                 {"all_for_one", l_all_for_one},
                                 {"rest_for_one", l_rest_for_one},
                                 {"decider", l_decider},
                                 {"describe", l_describe},
                                 {"guardian_strategy", l_guardian_strategy},
                                 {NULL, NULL}};
  luaL_newmetatable(L, TEND_STRATEGY_MT);
  lua_pushcfunction(L, l_describe);
  lua_setfield(L, -2, "__tostring");
  lua_pop(L, 1);
  luaL_newmetatable(L, TEND_DECIDER_MT);
  lua_pop(L, 1);
  luaL_setfuncs(L, fns, 0);
  push_strategy(L, tend_strategy_default());
  lua_setfield(L, -2, "default_strategy");
  push_strategy(L, tend_strategy_stopping());
  lua_setfield(L, -2, "stopping");
}
