/* lschedpg: the plumbing of tend.pg across schedulers (lua/tend/pg.lua):
 * core.sched_pg_join(key, ref), core.sched_pg_leave(key, ref) and
 * core.sched_pg_members(key) -> {{scheduler, ref}, ...} of the others. */
#include "api/api.h"

/* The actor of this scheduler that the ref at idx names, or NULL. */
static tend_actor *local_actor(lua_State *L, tend_host *h, int idx,
                               const char *fn) {
  tend_ref *r = tend_check_ref(L, idx, fn, "ref");
  tend_actor *a = tend_ref_actor(h, r);
  if (a == NULL || tend_actor_is_remote(a)) return NULL;
  return a;
}

static int l_join(lua_State *L) {
  tend_host *h = tend_host_of(L);
  const char *key = luaL_checkstring(L, 1);
  tend_actor *a = local_actor(L, h, 2, "sched_pg_join");
  if (a) tend_schedulers_pg_join(L, h, key, a);
  return 0;
}

static int l_leave(lua_State *L) {
  tend_host *h = tend_host_of(L);
  const char *key = luaL_checkstring(L, 1);
  tend_actor *a = local_actor(L, h, 2, "sched_pg_leave");
  if (a) tend_schedulers_pg_leave(h, key, a);
  return 0;
}

static int l_members(lua_State *L) {
  tend_schedulers_pg_push(L, tend_host_of(L), luaL_checkstring(L, 1));
  return 1;
}

void tend_open_schedpg(lua_State *L) {
  static const luaL_Reg fns[] = {{"sched_pg_join", l_join},
                                 {"sched_pg_leave", l_leave},
                                 {"sched_pg_members", l_members},
                                 {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
}
