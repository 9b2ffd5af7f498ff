/* lstash: what an actor does with its own mailbox beyond receiving:
 * ctx:stash, ctx:unstash_all, ctx:stashed (Akka's Stash; runtime/stash.h)
 * and ctx:set_receive_timeout, ctx:receive_timeout (Akka's
 * ReceiveTimeout, OTP's `after`; runtime/rtimeout.h). */
#include "api/api.h"

/* ctx:stash(): keeps the message being received (and its sender) */
static int l_ctx_stash(lua_State *L) {
  tend_actor *a = tend_check_own_ctx(L, 1, "ctx:stash");
  tend_stash_push(L, tend_host_of(L), a, "ctx:stash");
  return 0;
}

/* ctx:unstash_all() -> n: the kept messages go back in front of the
 * mailbox, oldest first */
static int l_ctx_unstash_all(lua_State *L) {
  tend_actor *a = tend_check_own_ctx(L, 1, "ctx:unstash_all");
  lua_pushinteger(L, tend_stash_unstash_all(tend_host_of(L), a));
  return 1;
}

/* ctx:stashed() -> how many messages the stash keeps */
static int l_ctx_stashed(lua_State *L) {
  tend_actor *a = tend_check_own_ctx(L, 1, "ctx:stashed");
  lua_pushinteger(L, tend_stash_size(a));
  return 1;
}

/* ctx:set_receive_timeout(seconds [, msg]): msg (default the string
 * "receive_timeout") comes after that long without a message; nil clears */
static int l_ctx_set_receive_timeout(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_actor *a = tend_check_own_ctx(L, 1, "ctx:set_receive_timeout");
  if (tend_actor_is_task(a))
    luaL_error(L,
               "ctx:set_receive_timeout: a task reads its mailbox with "
               "tend.receive(timeout)");
  if (lua_isnoneornil(L, 2)) {
    tend_rtimeout_clear(L, h, a);
    return 0;
  }
  double s = tend_check_seconds(L, 2, "ctx:set_receive_timeout", "seconds", 1);
  if (s > TEND_MAX_SECONDS)
    luaL_error(L,
               "ctx:set_receive_timeout: seconds: expected a number of "
               "seconds <= 1e9 (nil clears the timeout), got inf");
  if (lua_isnoneornil(L, 3)) {
    lua_settop(L, 2);
    lua_pushliteral(L, "receive_timeout");
  }
  if (tend_rtimeout_set(L, h, a, tend_clock_ns(s), 3) != 0)
    luaL_error(L, "ctx:set_receive_timeout: out of memory");
  return 0;
}

/* ctx:receive_timeout() -> seconds, or nil when none is set */
static int l_ctx_receive_timeout(lua_State *L) {
  tend_actor *a = tend_check_own_ctx(L, 1, "ctx:receive_timeout");
  int64_t ns = tend_rtimeout_get(a);
  if (ns == 0)
    lua_pushnil(L);
  else
    lua_pushnumber(L, (double)ns / 1e9);
  return 1;
}

void tend_open_stash(lua_State *L) {
  static const luaL_Reg ctx[] = {
      {"stash", l_ctx_stash},
      {"unstash_all", l_ctx_unstash_all},
      {"stashed", l_ctx_stashed},
      {"set_receive_timeout", l_ctx_set_receive_timeout},
      {"receive_timeout", l_ctx_receive_timeout},
      {NULL, NULL}};
  tend_ctx_add_methods(L, ctx);
}
