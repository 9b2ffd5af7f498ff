/* lcore: the tend.core module, put together from the open function of
 * each file of the API layer. */
#include <lualib.h>

#include "api/api.h"

int luaopen_tend_core(lua_State *L) {
  lua_newtable(L);
  tend_open_ref(L); /* ref and ctx first: the others add methods */
  tend_open_ctx(L);
  tend_open_error(L);
  tend_open_spawn(L);
  tend_open_timer(L);
  tend_open_ask(L);
  tend_open_strategy(L);
  tend_open_backoff(L);
  tend_open_typed(L);
  tend_open_inspect(L);
  tend_open_survey(L);
  tend_open_schedpg(L);
  tend_open_chaos(L);
  tend_open_invariant(L);
  tend_open_hostlib(L);
  tend_open_receive(L);
  tend_open_code(L);
  tend_open_names(L);
  tend_open_children(L);
  tend_open_stash(L);
  tend_open_backoff_query(L);
  tend_open_process(L);
  tend_open_tcp(L);
  tend_open_codec(L);
  tend_open_http(L);
  tend_open_http_server(L);
  tend_open_stream(L);
  tend_open_remote(L);
  tend_open_nats(L);
  tend_open_simnodes(L);
  tend_open_fiber(L);
  return 1;
}

int tend_api_open(lua_State *L) {
  luaL_requiref(L, "tend.core", luaopen_tend_core, 0);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, luaopen_tend_internal);
  lua_setfield(L, -2, "tend.internal");
  lua_pop(L, 2);
  return 0;
}
