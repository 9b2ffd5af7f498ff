/* lspawn: tend.spawn and ctx:spawn: options validated before anything is
 * created (design §3.1, §7), then an actor, a backoff supervisor
 * (lbackoff.c) or a typed actor (ltyped.c). */
#include "api/api.h"

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
  tend_actor *a = tend_actor_spawn(L, h, parent, 1 + off, &o);
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
