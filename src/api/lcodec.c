/* lcodec: core.codec_encode and core.codec_decode, the codec of messages
 * that leave the process (runtime/codec.h), for the nodes to come and for
 * the specs. Not part of the tend module (lua/tend.lua leaves codec_*
 * out). */
#include <lauxlib.h>

#include "api/api.h"

static int raise_named(lua_State *L, const char *kind, const char *fn) {
  lua_pushfstring(L, "%s: %s", fn, lua_tostring(L, -1));
  tend_error_new(L, kind, lua_tostring(L, -1));
  return lua_error(L);
}

/* core.codec_encode(v [, limit]) -> bytes; raises NotSerializable or
 * MessageTooLarge. */
static int l_encode(lua_State *L) {
  tend_host *h = tend_host_of(L);
  lua_Integer limit = luaL_optinteger(L, 2, TEND_CODEC_LIMIT);
  if (limit < 1) luaL_argerror(L, 2, "expected a positive number of bytes");
  lua_settop(L, 1);
  switch (tend_codec_encode(L, h, 1, (size_t)limit)) {
    case TEND_CODEC_OK: return 1;
    case TEND_CODEC_TOO_LARGE:
      return raise_named(L, "MessageTooLarge", "encode");
    default: return raise_named(L, "NotSerializable", "encode");
  }
}

/* core.codec_decode(bytes) -> value; raises BadMessage. */
static int l_decode(lua_State *L) {
  tend_host *h = tend_host_of(L);
  size_t n;
  const char *s = luaL_checklstring(L, 1, &n);
  if (tend_codec_decode(L, h, s, n) != TEND_CODEC_OK)
    return raise_named(L, "BadMessage", "decode");
  return 1;
}

void tend_open_codec(lua_State *L) {
  static const luaL_Reg fns[] = {
      {"codec_encode", l_encode}, {"codec_decode", l_decode}, {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
}
