/* lcodec: core.codec_encode and core.codec_decode, the codec of messages
 * that leave the process (runtime/nodes/codec.h), and core.wire_*, the
 * envelopes and batches the nodes exchange (runtime/nodes/wire.h), for
 * lua/tend/node.lua, its transports and the specs. Not part of the tend
 * module. */
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
      return raise_named(L, TEND_ERR_NAME(MESSAGE_TOO_LARGE), "encode");
    default: return raise_named(L, TEND_ERR_NAME(NOT_SERIALIZABLE), "encode");
  }
}

/* core.codec_decode(bytes) -> value; raises BadMessage. */
static int l_decode(lua_State *L) {
  tend_host *h = tend_host_of(L);
  size_t n;
  const char *s = luaL_checklstring(L, 1, &n);
  if (tend_codec_decode(L, h, s, n) != TEND_CODEC_OK)
    return raise_named(L, TEND_ERR_NAME(BAD_MESSAGE), "decode");
  return 1;
}

/* core.wire_envelope(header [, body [, limit]]) -> bytes: the header (a
 * list whose first item is a kind of core.wire_kind), encoded, then the
 * body's bytes; raises NotSerializable or MessageTooLarge. */
static int l_envelope(lua_State *L) {
  tend_host *h = tend_host_of(L);
  size_t hn, bn = 0;
  const char *body = luaL_optlstring(L, 2, "", &bn);
  lua_Integer limit = luaL_optinteger(L, 3, TEND_CODEC_LIMIT);
  if (limit < 1) luaL_argerror(L, 3, "expected a positive number of bytes");
  switch (tend_codec_encode(L, h, 1, (size_t)limit)) { /* +1: the header */
    case TEND_CODEC_OK: break;
    case TEND_CODEC_TOO_LARGE:
      return raise_named(L, TEND_ERR_NAME(MESSAGE_TOO_LARGE), "encode");
    default: return raise_named(L, TEND_ERR_NAME(NOT_SERIALIZABLE), "encode");
  }
  const char *header = lua_tolstring(L, -1, &hn);
  size_t size = tend_wire_envelope_size(hn, bn);
  if (size == 0) {
    lua_pushfstring(L, "a header of %I bytes (at most %I)", (lua_Integer)hn,
                    (lua_Integer)TEND_WIRE_HEADER_MAX);
    return raise_named(L, TEND_ERR_NAME(MESSAGE_TOO_LARGE), "encode");
  }
  luaL_Buffer b;
  tend_wire_envelope_put(luaL_buffinitsize(L, &b, size), header, hn, body, bn);
  luaL_pushresultsize(&b, size);
  return 1;
}

/* core.wire_open(envelope) -> header, body (bytes); raises BadMessage. */
static int l_open(lua_State *L) {
  tend_host *h = tend_host_of(L);
  size_t n, hn, bn;
  const char *env = luaL_checklstring(L, 1, &n), *header, *body;
  if (tend_wire_split(env, n, &header, &hn, &body, &bn) != 0) {
    lua_pushliteral(L, "a malformed envelope (a header's length past its end)");
    return raise_named(L, TEND_ERR_NAME(BAD_MESSAGE), "decode");
  }
  if (tend_codec_decode(L, h, header, hn) != TEND_CODEC_OK)
    return raise_named(L, TEND_ERR_NAME(BAD_MESSAGE), "decode");
  lua_pushlstring(L, body, bn);
  return 2;
}

/* core.wire_batch(envelope, ...) -> bytes: a batch of them, in order. */
static int l_batch(lua_State *L) {
  int n = lua_gettop(L);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int i = 1; i <= n; i++) {
    size_t len;
    const char *env = luaL_checklstring(L, i, &len);
    if (len > TEND_WIRE_ENVELOPE_MAX) luaL_argerror(L, i, "too long");
    unsigned char prefix[TEND_WIRE_LENGTH_PREFIX];
    tend_wire_put_length(prefix, len);
    luaL_addlstring(&b, (const char *)prefix, sizeof prefix);
    luaL_addlstring(&b, env, len);
  }
  luaL_pushresult(&b);
  return 1;
}

/* core.wire_unbatch(batch) -> {envelope, ...}, complete: the envelopes
 * in order, up to the bytes that are none (then complete is false). */
static int l_unbatch(lua_State *L) {
  size_t n, pos = 0, len;
  const char *batch = luaL_checklstring(L, 1, &n), *env;
  lua_newtable(L);
  int got, i = 0;
  while ((got = tend_wire_next(batch, n, &pos, &env, &len)) == 1) {
    lua_pushlstring(L, env, len);
    lua_rawseti(L, -2, ++i);
  }
  lua_pushboolean(L, got == 0);
  return 2;
}

void tend_open_codec(lua_State *L) {
  static const luaL_Reg fns[] = {{"codec_encode", l_encode},
                                 {"codec_decode", l_decode},
                                 {"wire_envelope", l_envelope},
                                 {"wire_open", l_open},
                                 {"wire_batch", l_batch},
                                 {"wire_unbatch", l_unbatch},
                                 {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
  /* core.wire_kind: MSG = 1, WATCH = 2, ... (the numbers that travel) */
  lua_newtable(L);
#define KIND_FIELD(name, n, header) \
  lua_pushinteger(L, n);            \
  lua_setfield(L, -2, #name);
  TEND_WIRE_KINDS(KIND_FIELD)
#undef KIND_FIELD
  lua_setfield(L, -2, "wire_kind");
  /* core.wire_subject: to_node (a node's name follows), heartbeats */
  lua_createtable(L, 0, 2);
  lua_pushliteral(L, TEND_WIRE_TO_NODE);
  lua_setfield(L, -2, "to_node");
  lua_pushliteral(L, TEND_WIRE_HEARTBEATS);
  lua_setfield(L, -2, "heartbeats");
  lua_setfield(L, -2, "wire_subject");
}
