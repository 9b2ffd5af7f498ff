/* ltyped: the typed-style builders (design §3.4) as C constructors, each
 * validated once: tend.restart, tend.resume, tend.stop_on_failure,
 * tend.restart_with_limit(n, within), tend.restart_with_backoff(min, max,
 * rf) with :with_reset_after(s), :with_max_restarts(n), :with_stash(n)
 * (userdata "tend.TypedAction", immutable: a method returns a copy); and
 * tend.supervise(factory):on_failure(kind, action) (userdata
 * "tend.SupervisedSpec": its actions in C, its factory and kinds in user
 * values). tend.spawn of a spec starts a typed actor (runtime/typed.h). */
#include <math.h>
#include <string.h>

#include "api/api.h"

#define ACTION_MT "tend.TypedAction"
#define SPEC_MT "tend.SupervisedSpec"

/* A spec: n actions; user value 1 the factory, 2 the list of kinds. */
typedef struct spec {
  uint32_t n;
  tend_typed_action actions[];
} spec;

/* ------------------------------------------------------------ actions */

static tend_typed_action *push_action(lua_State *L, tend_typed_kind what) {
  tend_typed_action *a = lua_newuserdatauv(L, sizeof *a, 0);
  memset(a, 0, sizeof *a);
  a->what = what;
  a->max_restarts = -1;
  luaL_setmetatable(L, ACTION_MT);
  return a;
}

/* Seconds > 0 at idx (math.huge allowed when huge). */
static int64_t positive(lua_State *L, int idx, const char *fn, const char *arg,
                        int huge) {
  double s = lua_type(L, idx) == LUA_TNUMBER ? lua_tonumber(L, idx) : -1;
  if (!(s > 0) || (isinf(s) && !huge) || (s > TEND_MAX_SECONDS && !isinf(s)))
    luaL_error(L, "%s: %s: expected a number of seconds in (0, 1e9]%s, got %s",
               fn, arg, huge ? " or math.huge" : "",
               luaL_tolstring(L, idx, NULL));
  return isinf(s) ? INT64_MAX : tend_clock_ns(s);
}

/* An integer >= least at idx. */
static int64_t integer(lua_State *L, int idx, const char *fn, const char *arg,
                       int64_t least) {
  if (!lua_isinteger(L, idx) || lua_tointeger(L, idx) < least)
    luaL_error(L, "%s: %s: expected an integer >= %I, got %s", fn, arg,
               (lua_Integer)least, luaL_tolstring(L, idx, NULL));
  return lua_tointeger(L, idx);
}

/* tend.restart_with_limit(n, within) */
static int l_restart_with_limit(lua_State *L) {
  const char *fn = "tend.restart_with_limit";
  int64_t n = integer(L, 1, fn, "n", -1);
  int64_t within = positive(L, 2, fn, "within", 1);
  tend_typed_action *a = push_action(L, TEND_TYPED_RESTART_WITH_LIMIT);
  a->limit = tend_limit_make(n, within, TEND_WINDOW_FIXED);
  return 1;
}

/* tend.restart_with_backoff(min, max [, random_factor]) */
static int l_restart_with_backoff(lua_State *L) {
  const char *fn = "tend.restart_with_backoff";
  int64_t min = positive(L, 1, fn, "min_backoff", 0);
  int64_t max = positive(L, 2, fn, "max_backoff", 0);
  if (max < min)
    luaL_error(L,
               "%s: max_backoff: expected a number >= min_backoff (%s), got %s",
               fn, lua_tostring(L, 1), lua_tostring(L, 2));
  double rf = 0;
  if (!lua_isnoneornil(L, 3)) {
    rf = lua_type(L, 3) == LUA_TNUMBER ? lua_tonumber(L, 3) : -1;
    if (!(rf >= 0 && rf <= 1))
      luaL_error(L, "%s: random_factor: expected a number in [0, 1], got %s",
                 fn, luaL_tolstring(L, 3, NULL));
  }
  tend_typed_action *a = push_action(L, TEND_TYPED_RESTART_WITH_BACKOFF);
  a->delays.algorithm = TEND_ALG_EXPONENTIAL;
  a->delays.jitter = TEND_JITTER_AKKA;
  a->delays.min_ns = min > 0 ? min : 1;
  a->delays.max_ns = max > 0 ? max : 1;
  a->delays.random_factor = rf;
  a->delays.ceiling = 10;
  return 1;
}

int tend_typed_describe(lua_State *L, int idx) {
  const tend_typed_action *a = luaL_testudata(L, idx, ACTION_MT);
  if (a == NULL) return 0;
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  switch (a->what) {
    case TEND_TYPED_RESTART: luaL_addstring(&b, "restart"); break;
    case TEND_TYPED_RESUME: luaL_addstring(&b, "resume"); break;
    case TEND_TYPED_STOP: luaL_addstring(&b, "stop"); break;
    case TEND_TYPED_RESTART_WITH_LIMIT:
      if (a->limit.max < 0) {
        luaL_addstring(&b, "restart without limit");
        break;
      }
      lua_pushfstring(L, "restart at most %I times", (lua_Integer)a->limit.max);
      luaL_addvalue(&b);
      if (a->limit.within != INT64_MAX) {
        luaL_addstring(&b, " within ");
        tend_add_seconds(&b, L, a->limit.within);
        luaL_addstring(&b, " s");
      }
      luaL_addstring(&b, ", then stop");
      break;
    case TEND_TYPED_RESTART_WITH_BACKOFF:
      luaL_addstring(&b, "restart with backoff");
      tend_backoff_add_delays(&b, L, &a->delays);
      if (a->max_restarts >= 0) {
        lua_pushfstring(L, "; at most %I restarts, then stop",
                        (lua_Integer)a->max_restarts);
        luaL_addvalue(&b);
      }
      tend_backoff_add_reset(
          &b, L, a->reset_after_ns ? a->reset_after_ns : a->delays.min_ns);
      break;
  }
  luaL_pushresult(&b);
  return 1;
}

/* The restart_with_backoff action at 1, copied (pushed), for method fn. */
static tend_typed_action *copy_backoff(lua_State *L, const char *fn) {
  const tend_typed_action *a = luaL_checkudata(L, 1, ACTION_MT);
  if (a->what != TEND_TYPED_RESTART_WITH_BACKOFF)
    luaL_error(L, "%s: only for tend.restart_with_backoff(...)", fn);
  tend_typed_action *c = push_action(L, a->what);
  *c = *a;
  return c;
}

static int l_with_reset_after(lua_State *L) {
  int64_t s = positive(L, 2, "with_reset_after", "seconds", 0);
  copy_backoff(L, "with_reset_after")->reset_after_ns = s;
  return 1;
}

static int l_with_max_restarts(lua_State *L) {
  int64_t n = integer(L, 2, "with_max_restarts", "n", -1);
  copy_backoff(L, "with_max_restarts")->max_restarts = n;
  return 1;
}

static int l_with_stash(lua_State *L) {
  int64_t n = integer(L, 2, "with_stash", "n", 1);
  if (n > UINT32_MAX) n = UINT32_MAX;
  copy_backoff(L, "with_stash")->stash = (uint32_t)n;
  return 1;
}

static int l_action_tostring(lua_State *L) {
  const tend_typed_action *a = luaL_checkudata(L, 1, ACTION_MT);
  lua_pushfstring(L, "tend.%s", tend_typed_name(a->what));
  return 1;
}

/* ------------------------------------------------------------ specs */

/* Pushes a spec with room for n actions; factory at index f, kinds list
 * at index kinds. */
static spec *push_spec(lua_State *L, uint32_t n, int f, int kinds) {
  f = lua_absindex(L, f);
  kinds = lua_absindex(L, kinds);
  spec *s = lua_newuserdatauv(L, sizeof *s + n * sizeof s->actions[0], 2);
  s->n = n;
  lua_pushvalue(L, f);
  lua_setiuservalue(L, -2, 1);
  lua_pushvalue(L, kinds);
  lua_setiuservalue(L, -2, 2);
  luaL_setmetatable(L, SPEC_MT);
  return s;
}

/* tend.supervise(factory) -> a spec with no clause yet */
static int l_supervise(lua_State *L) {
  if (!lua_isfunction(L, 1))
    luaL_error(L, "tend.supervise: factory: expected a function, got %s",
               tend_typename(L, 1));
  lua_newtable(L);
  push_spec(L, 0, 1, -1);
  return 1;
}

/* spec:on_failure(kind, action) -> a new spec with one more clause */
static int l_on_failure(lua_State *L) {
  const spec *s = luaL_checkudata(L, 1, SPEC_MT);
  if (lua_type(L, 2) != LUA_TSTRING)
    luaL_error(L, "on_failure: kind: expected an error kind or \"*\", got %s",
               tend_typename(L, 2));
  const tend_typed_action *a = luaL_testudata(L, 3, ACTION_MT);
  if (a == NULL)
    luaL_error(L,
               "on_failure: strategy: expected tend.restart, tend.resume, "
               "tend.stop_on_failure, tend.restart_with_limit(...) or "
               "tend.restart_with_backoff(...), got %s",
               tend_typename(L, 3));
  lua_getiuservalue(L, 1, 1);           /* 4: factory */
  lua_getiuservalue(L, 1, 2);           /* 5: kinds */
  lua_createtable(L, (int)s->n + 1, 0); /* 6: the new list */
  for (uint32_t i = 1; i <= s->n; i++) {
    lua_rawgeti(L, 5, i);
    lua_rawseti(L, 6, i);
  }
  lua_pushvalue(L, 2);
  lua_rawseti(L, 6, s->n + 1);
  spec *c = push_spec(L, s->n + 1, 4, 6);
  memcpy(c->actions, s->actions, s->n * sizeof s->actions[0]);
  c->actions[s->n] = *a;
  return 1;
}

int tend_typed_is_spec(lua_State *L, int idx) {
  return luaL_testudata(L, idx, SPEC_MT) != NULL;
}

int tend_typed_spawn_spec(lua_State *L, tend_actor *parent, int off,
                          const char *fn) {
  tend_host *h = tend_host_of(L);
  lua_settop(L, 2 + off);
  const spec *s = lua_touserdata(L, 1 + off);
  tend_spawn_opts o;
  tend_spawn_parse(L, 2 + off, fn, &o);
  tend_actor_check_spawn(L, h, parent, o.name, fn);
  lua_getiuservalue(L, 1 + off, 1);
  int factory = lua_gettop(L);
  lua_getiuservalue(L, 1 + off, 2);
  int kinds = lua_gettop(L);
  tend_typed_clause *c = lua_newuserdatauv(L, (s->n + 1) * sizeof *c, 0);
  for (uint32_t i = 0; i < s->n; i++) { /* kinds live on the stack */
    lua_rawgeti(L, kinds, i + 1);
    c[i].kind = (char *)lua_tostring(L, -1);
    lua_pop(L, 1);
    c[i].action = s->actions[i];
  }
  tend_actor *a = tend_typed_spawn(L, h, parent, factory, c, s->n, &o);
  if (o.stash) tend_stash_enable(L, a, o.stash); /* before it starts */
  return 1;
}

void tend_open_typed(lua_State *L) {
  static const luaL_Reg fns[] = {
      {"supervise", l_supervise},
      {"restart_with_limit", l_restart_with_limit},
      {"restart_with_backoff", l_restart_with_backoff},
      {NULL, NULL}};
  static const luaL_Reg action_methods[] = {
      {"with_reset_after", l_with_reset_after},
      {"with_max_restarts", l_with_max_restarts},
      {"with_stash", l_with_stash},
      {NULL, NULL}};
  static const luaL_Reg spec_methods[] = {{"on_failure", l_on_failure},
                                          {NULL, NULL}};
  luaL_newmetatable(L, ACTION_MT);
  luaL_newlib(L, action_methods);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, l_action_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pop(L, 1);
  luaL_newmetatable(L, SPEC_MT);
  luaL_newlib(L, spec_methods);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
  luaL_setfuncs(L, fns, 0);
  push_action(L, TEND_TYPED_RESTART);
  lua_setfield(L, -2, "restart");
  push_action(L, TEND_TYPED_RESUME);
  lua_setfield(L, -2, "resume");
  push_action(L, TEND_TYPED_STOP);
  lua_setfield(L, -2, "stop_on_failure");
}
