/* lspawn: tend.spawn and ctx:spawn: options validated before anything is
 * created (design §3.1, §7), then an actor, a backoff supervisor
 * (lbackoff.c) or a typed actor (ltyped.c). */
#include <string.h>

#include "api/api.h"

/* The factory named by the string at idx ("module.field") replaces it. */
static void resolve_factory(lua_State *L, int idx, const char *fn) {
  tend_factory_push(L, lua_tostring(L, idx), fn);
  lua_replace(L, idx);
}

#define SPAWN_TIMEOUT 5.0 /* seconds another scheduler has to answer */

/* Continues a spawn on another scheduler once answered: stack [1] k. */
static int spawn_k(lua_State *L, int status, lua_KContext ctx) {
  (void)status;
  (void)ctx;
  tend_host *h = tend_host_of(L);
  int wake = tend_sched_woken(L, h); /* raises if interrupted */
  if (wake == TEND_WAKE_OK) {
    tend_sched_take_reply(L, h);
    if (lua_getfield(L, -1, "ref") != LUA_TNIL) return 1;
    lua_getfield(L, -2, "error");
    return luaL_error(L, "tend.spawn: on scheduler %d: %s",
                      (int)lua_tointeger(L, 1), lua_tostring(L, -1));
  }
  return luaL_error(L, "tend.spawn: scheduler %d did not answer within %d s",
                    (int)lua_tointeger(L, 1), (int)SPAWN_TIMEOUT);
}

/* A child of parent (not /user) on another scheduler k: a stand-in here,
 * parent's child with o's options, for the actor there (lua/tend/away.lua:
 * the factory is the stand-in's, its args k, the factory's name and
 * args). */
static int spawn_standin(lua_State *L, tend_host *h, tend_actor *parent,
                         int off, int k, tend_spawn_opts *o, const char *fn) {
  if (k >= tend_schedulers_count(h))
    luaL_error(L, "%s: scheduler: expected 0..%d, got %d", fn,
               tend_schedulers_count(h) - 1, k);
  lua_getglobal(L, "require");
  lua_pushliteral(L, "tend.away");
  lua_call(L, 1, 1);
  lua_getfield(L, -1, "standin");
  int factory = lua_gettop(L);
  lua_createtable(L, 3, 0);
  lua_pushinteger(L, k);
  lua_rawseti(L, -2, 1);
  lua_pushvalue(L, 1 + off);
  lua_rawseti(L, -2, 2);
  if (o->args) {
    lua_pushvalue(L, o->args);
    lua_rawseti(L, -2, 3);
  }
  o->args = lua_gettop(L);
  o->scheduler = TEND_SCHED_HERE;
  tend_actor_check_spawn(L, h, parent, o->name, fn);
  tend_actor_spawn(L, h, parent, factory, o);
  return 1;
}

/* Spawned on another scheduler k: under /user there, with the options
 * that travel (name, args), or as a child of parent through a stand-in. */
static int spawn_elsewhere(lua_State *L, tend_actor *parent, int off, int k,
                           tend_spawn_opts *o, const char *fn) {
  tend_host *h = tend_host_of(L);
  if (lua_type(L, 1 + off) != LUA_TSTRING)
    luaL_error(L,
               "%s: factory: an actor for another scheduler is named as "
               "\"module.factory\" (its module is loaded there; %s cannot "
               "move between Lua states), got %s",
               fn, lua_isfunction(L, 1 + off) ? "a closure" : "a value",
               tend_typename(L, 1 + off));
  int child = parent != tend_host_user(h);
  static const char *const local_only[] = {
      "children", "supervisor", "max_message_time", "stash", "mailbox",
      "shutdown", NULL};
  for (int i = 0; local_only[i] && (!child || i < 4); i++) {
    int t = lua_getfield(L, 2 + off, local_only[i]);
    lua_pop(L, 1);
    if (t != LUA_TNIL)
      luaL_error(L,
                 "%s: %s: not supported yet for an actor on another "
                 "scheduler (name, args and restart are%s)",
                 fn, local_only[i],
                 child ? "; mailbox and shutdown are its stand-in's" : "");
  }
  if (child) return spawn_standin(L, h, parent, off, k, o, fn);
  if (!tend_schedulers_threaded(h)) { /* one thread: made at once */
    tend_schedulers_spawn(L, h, k, 1 + off, o, fn);
    return 1;
  }
  /* scheduler k makes it on its thread; this actor waits for the answer,
   * as for an ask */
  tend_actor *a = tend_sched_check_wait(L, h, fn);
  tend_promise *p =
      tend_promise_new(L, h, a, tend_clock_ns(SPAWN_TIMEOUT), "spawn");
  tend_schedulers_spawn_request(L, h, k, 1 + off, o, tend_promise_id(p),
                                tend_promise_gen(p), fn);
  lua_settop(L, 0);
  lua_pushinteger(L, k);
  return tend_sched_wait(
      L, h, tend_actor_has_promise(a) ? TEND_WAIT_ASK : TEND_WAIT_WOKEN,
      spawn_k);
}

int tend_spawn_under(lua_State *L, tend_actor *parent, int off,
                     const char *fn) {
  tend_host *h = tend_host_of(L);
  if (tend_backoff_is_spec(L, 1 + off))
    return tend_backoff_spawn_spec(L, parent, off, fn);
  if (tend_typed_is_spec(L, 1 + off))
    return tend_typed_spawn_spec(L, parent, off, fn);
  if (!lua_isfunction(L, 1 + off) && lua_type(L, 1 + off) != LUA_TSTRING)
    luaL_error(L,
               "%s: factory: expected a function, \"module.factory\" or a "
               "backoff/supervise spec, got %s",
               fn, tend_typename(L, 1 + off));
  lua_settop(L, 2 + off);
  tend_spawn_opts o;
  tend_spawn_parse(L, 2 + off, fn, &o);
  int k = o.scheduler == TEND_SCHED_SPREAD ? tend_schedulers_least_loaded(h)
                                           : o.scheduler;
  if (k >= 0 && k != tend_schedulers_index(h))
    return spawn_elsewhere(L, parent, off, k, &o, fn);
  if (lua_type(L, 1 + off) == LUA_TSTRING) resolve_factory(L, 1 + off, fn);
  tend_actor_check_spawn(L, h, parent, o.name, fn);
  if (o.name && parent == tend_host_user(h))
    tend_schedulers_claim_name(L, h, o.name, fn);
  tend_actor *a = tend_actor_spawn(L, h, parent, 1 + off, &o);
  if (o.name && parent == tend_host_user(h)) tend_schedulers_bind_name(L, h, a);
  if (o.stash) tend_stash_enable(L, a, o.stash); /* before it starts */
  return 1;
}

/* tend.spawn(factory [, opts]) -> ref, under /user */
static int l_spawn(lua_State *L) {
  tend_host *h = tend_host_of(L);
  if (tend_host_user(h) == NULL)
    luaL_error(L, "tend.spawn: the host is shutting down");
  return tend_spawn_under(L, tend_host_user(h), 0, "tend.spawn");
}

/* ctx:spawn(factory [, opts]) -> ref, a child of this actor */
static int l_ctx_spawn(lua_State *L) {
  tend_actor *a = tend_check_own_ctx(L, 1, "ctx:spawn");
  return tend_spawn_under(L, a, 1, "ctx:spawn");
}

int tend_api_start_main(lua_State *L) {
  tend_host *h = tend_host_of(L);
  lua_pushliteral(L, "main");
  lua_insert(L, 1); /* [1] name [2] chunk [3] args */
  tend_spawn_opts so;
  tend_spawn_opts_init(&so);
  so.name = 1;
  so.args = 3;
  so.task = 1;
  tend_host_set_main(h, tend_actor_spawn(L, h, tend_host_user(h), 2, &so));
  return 0;
}

void tend_open_spawn(lua_State *L) {
  static const luaL_Reg fns[] = {{"spawn", l_spawn}, {NULL, NULL}};
  static const luaL_Reg ctx[] = {{"spawn", l_ctx_spawn}, {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
  tend_ctx_add_methods(L, ctx);
}
