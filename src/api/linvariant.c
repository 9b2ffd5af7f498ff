/* linvariant: the C side of tend.invariant (lua/tend/invariant.lua keeps
 * the checks). core.pass_hook(fn) installs the host's pass hook, which
 * calls fn(stalled) after each turn in which the clock moved (stalled
 * false) and once nothing can happen any more (stalled true). fn runs
 * protected, outside any actor, and cannot wait. */
#include "api/api.h"

static const char hook_key = 'p'; /* the registry key of fn */

static void pass(tend_host *h, int stalled) {
  lua_State *L = tend_host_state(h);
  int top = lua_gettop(L);
  tend_host_set_pass_hook(h, pass); /* (notes the clock: once per time) */
  lua_rawgetp(L, LUA_REGISTRYINDEX, &hook_key);
  lua_pushboolean(L, stalled);
  if (lua_pcall(L, 1, 0, 0) != LUA_OK)
    tend_host_log(h, TEND_LOG_WARN, NULL, "invariant hook failed: %s",
                  lua_tostring(L, -1));
  lua_settop(L, top);
}

/* core.pass_hook(fn | nil) */
static int l_pass_hook(lua_State *L) {
  tend_host *h = tend_host_of(L);
  int on = lua_isfunction(L, 1);
  lua_settop(L, 1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &hook_key);
  tend_host_set_pass_hook(h, on ? pass : NULL);
  return 0;
}

void tend_open_invariant(lua_State *L) {
  static const luaL_Reg fns[] = {{"pass_hook", l_pass_hook}, {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
}
