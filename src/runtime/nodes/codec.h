/* codec: Lua values as msgpack bytes (msgpack-c), for messages that leave
 * the process (nodes, design §4.10). What travels: nil, booleans, integers,
 * floats, strings (binary-safe), tables (a list 1..n as a msgpack array,
 * anything else as a map; nested; a table reached twice is encoded twice;
 * metatables stay behind) and refs (msgpack extension type
 * TEND_CODEC_EXT_REF: [node, incarnation, id, gen, path, kind]). A
 * function, a coroutine, a userdata that is no ref, a table inside itself
 * (a cycle), nesting deeper than TEND_CODEC_DEPTH, or more bytes than the
 * limit are refused, with a message naming what and where ("msg.items[3]:
 * a function cannot leave the node"). Decoding never trusts its input:
 * truncated or malformed bytes, trailing bytes, too deep nesting, a map key
 * that is nil or NaN are refused with a message, never a crash. */
#ifndef TEND_CODEC_H
#define TEND_CODEC_H

#include <lua.h>
#include <stddef.h>

#include "runtime/core/host.h"
#include "runtime/tend.h" /* the limit, tend_codec_status */

#define TEND_CODEC_DEPTH 32 /* tables within tables (msgpack-c decodes 32) */
/* Encodes the value at idx; pushes the bytes (a string) and returns
 * TEND_CODEC_OK, or pushes a message and returns why not. */
tend_codec_status tend_codec_encode(lua_State *L, tend_host *h, int idx,
                                    size_t limit);
/* The same, a refusal saying "cannot <away>" ("move to another
 * scheduler") rather than "cannot leave the node". */
tend_codec_status tend_codec_encode_to(lua_State *L, tend_host *h, int idx,
                                       size_t limit, const char *away);
/* Decodes n bytes; pushes the value and returns TEND_CODEC_OK, or pushes a
 * message and returns TEND_CODEC_BAD_MESSAGE. */
tend_codec_status tend_codec_decode(lua_State *L, tend_host *h,
                                    const char *data, size_t n);

#endif
