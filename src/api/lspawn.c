/* lspawn: tend.spawn and ctx:spawn: options validated before anything is
 * created (DESIGN §3.1, §7), then an actor, a backoff supervisor
 * (lbackoff.c) or a typed actor (ltyped.c). */
#include <math.h>
#include <string.h>

#include "api/api.h"
#include "runtime/error.h"

static const char *const spawn_keys[] = {
    "name",       "args",    "mailbox",          "shutdown",
    "supervisor", "restart", "max_message_time", NULL};
static const char *const mailbox_keys[] = {"capacity", "overflow", NULL};
static const char *const overflow_names[] = {"drop_new", "drop_old", "fail",
                                             NULL};
static const char *const restart_names[] = {"permanent", "transient",
                                            "temporary", NULL};

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
  tend_spawn_opts_init(o);
  if (lua_isnoneornil(L, idx)) return;
  if (!lua_istable(L, idx))
    luaL_error(L, "%s: options: expected a table, got %s", fn,
               tend_typename(L, idx));
  idx = lua_absindex(L, idx);
  tend_check_keys(L, idx, spawn_keys, fn, "");
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
    tend_check_keys(L, mb, mailbox_keys, fn, "mailbox.");
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
    o->strategy = tend_strategy_test(L, -1);
    if (o->strategy == NULL)
      tend_bad_option(L, fn, "supervisor",
                      "a strategy (tend.one_for_one{...}, tend.stopping, ...)",
                      -1);
    o->decider = tend_strategy_push_decider(L, -1); /* both stay */
  } else {
    lua_pop(L, 1);
  }
}

int tend_spawn_under(lua_State *L, tend_actor *parent, int off,
                     const char *fn) {
  tend_host *h = tend_host_of(L);
  if (tend_backoff_is_spec(L, 1 + off))
    return tend_backoff_spawn_spec(L, parent, off, fn);
  if (tend_typed_is_spec(L, 1 + off))
    return tend_typed_spawn_spec(L, parent, off, fn);
  if (!lua_isfunction(L, 1 + off))
    luaL_error(L,
               "%s: factory: expected a function or a backoff/supervise spec, "
               "got %s",
               fn, tend_typename(L, 1 + off));
  lua_settop(L, 2 + off);
  tend_spawn_opts o;
  tend_spawn_parse(L, 2 + off, fn, &o);
  tend_actor_check_spawn(L, h, parent, o.name, fn);
  tend_actor_spawn(L, h, parent, 1 + off, &o);
  return 1;
}

/* tend.spawn(factory [, opts]) -> ref, under /user */
static int l_spawn(lua_State *L) {
  tend_host *h = tend_host_of(L);
  if (h->user == NULL) luaL_error(L, "tend.spawn: the host is shutting down");
  return tend_spawn_under(L, h->user, 0, "tend.spawn");
}

/* ctx:spawn(factory [, opts]) -> ref, a child of this actor */
static int l_ctx_spawn(lua_State *L) {
  tend_actor *a = tend_check_ctx(L, 1);
  return tend_spawn_under(L, a, 1, "ctx:spawn");
}

void tend_open_spawn(lua_State *L) {
  static const luaL_Reg fns[] = {{"spawn", l_spawn}, {NULL, NULL}};
  static const luaL_Reg ctx[] = {{"spawn", l_ctx_spawn}, {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
  tend_ctx_add_methods(L, ctx);
}
