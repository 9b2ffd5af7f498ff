/* codec: Lua values as msgpack bytes (see codec.h). */
#include "runtime/nodes/codec.h"

#include <lauxlib.h>
#include <math.h>
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/core/ref.h"
#include "runtime/nodes/remote.h"
#include "runtime/nodes/schedulers.h"

/* ------------------------------------------------------------ encoding */

/* One step of the path to the value being encoded (for messages). */
typedef struct step {
  int is_index; /* 1: [n]; 0: .name or [key] */
  lua_Integer index;
  const char *name; /* a string key (alive: the table holds it) */
  size_t len;
} step;

/* The bytes written so far: in `small` while they fit (most messages and
 * every envelope header: no allocation), then on the heap. */
typedef struct outbuf {
  char *data;
  size_t size, alloc;
  char small[256];
} outbuf;

typedef struct encoder {
  lua_State *L;
  tend_host *h;
  outbuf buf;
  msgpack_packer pk;
  size_t limit;
  const void *open[TEND_CODEC_DEPTH + 1]; /* the tables being encoded, from
                                             the outermost (a cycle: one
                                             met again inside itself) */
  step path[TEND_CODEC_DEPTH + 1];
  int depth;
  tend_codec_status status;
  char msg[512];    /* why it was refused */
  const char *away; /* where the value would go, for msg: NULL "leave the
                       node" */
} encoder;

static int is_identifier(const char *s, size_t n) {
  if (n == 0 || (s[0] >= '0' && s[0] <= '9')) return 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (!(c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
          (c >= 'A' && c <= 'Z')))
      return 0;
  }
  return 1;
}

/* Refuses: e->msg says "<path>: <what>" ("msg.items[3]: ..."); returns 0
 * for the caller. The Lua stack is left alone (the caller unwinds). */
static int refuse(encoder *e, tend_codec_status why, const char *what) {
  if (e->status != TEND_CODEC_OK) return 0;
  e->status = why;
  size_t at = (size_t)snprintf(e->msg, sizeof e->msg, "msg");
  for (int i = 0; i < e->depth && at < sizeof e->msg; i++) {
    const step *s = &e->path[i];
    size_t room = sizeof e->msg - at;
    if (s->is_index)
      at += (size_t)snprintf(e->msg + at, room, "[%lld]", (long long)s->index);
    else if (s->name && is_identifier(s->name, s->len))
      at += (size_t)snprintf(e->msg + at, room, ".%.*s",
                             (int)(s->len > 40 ? 40 : s->len), s->name);
    else if (s->name)
      at += (size_t)snprintf(e->msg + at, room, "[\"%.*s\"]",
                             (int)(s->len > 40 ? 40 : s->len), s->name);
    else
      at += (size_t)snprintf(e->msg + at, room, "[?]");
  }
  if (at < sizeof e->msg && e->away && strstr(what, " cannot leave the node"))
    snprintf(e->msg + at, sizeof e->msg - at, ": %.*s cannot %s",
             (int)(strstr(what, " cannot leave the node") - what), what,
             e->away);
  else if (at < sizeof e->msg)
    snprintf(e->msg + at, sizeof e->msg - at, ": %s", what);
  return 0;
}

/* msgpack's writer: appends len bytes (0, or -1 without memory). */
static int buf_write(void *data, const char *bytes, size_t len) {
  outbuf *b = data;
  if (b->alloc - b->size < len) {
    size_t n = b->alloc * 2;
    while (n < b->size + len) n *= 2;
    char *d = b->data == b->small ? malloc(n) : realloc(b->data, n);
    if (d == NULL) return -1;
    if (b->data == b->small) memcpy(d, b->small, b->size);
    b->data = d;
    b->alloc = n;
  }
  memcpy(b->data + b->size, bytes, len);
  b->size += len;
  return 0;
}

/* Is the message over the limit once `more` bytes are added? Refuses. */
static int over(encoder *e, size_t more) {
  if (e->buf.size + more <= e->limit) return 0;
  char what[96];
  snprintf(what, sizeof what, "the message is over the size limit (%zu bytes)",
           e->limit);
  e->depth = 0;
  refuse(e, TEND_CODEC_TOO_LARGE, what);
  return 1;
}

static int encode(encoder *e, int idx);

/* Is the table at idx a list 1..n with nothing else? */
static int is_list(lua_State *L, int idx, lua_Integer *n) {
  lua_Integer len = (lua_Integer)lua_rawlen(L, idx), count = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    if (!lua_isinteger(L, -1)) {
      lua_pop(L, 1);
      return 0;
    }
    lua_Integer k = lua_tointeger(L, -1);
    if (k < 1 || k > len) {
      lua_pop(L, 1);
      return 0;
    }
    count++;
  }
  *n = len;
  return count == len && len > 0;
}

static int encode_table(encoder *e, int idx) {
  lua_State *L = e->L;
  if (e->depth >= TEND_CODEC_DEPTH)
    return refuse(e, TEND_CODEC_NOT_SERIALIZABLE,
                  "tables nested deeper than 32 cannot leave the node");
  const void *t = lua_topointer(L, idx);
  for (int i = 0; i < e->depth; i++)
    if (e->open[i] == t)
      return refuse(e, TEND_CODEC_NOT_SERIALIZABLE,
                    "a table inside itself (a cycle) cannot leave the node");
  int at = e->depth; /* (a refusal below sets e->depth to 0) */
  e->open[at] = t;
  if (!lua_checkstack(L, 8))
    return refuse(e, TEND_CODEC_NOT_SERIALIZABLE, "no stack left");
  lua_Integer n;
  step *s = &e->path[e->depth];
  int ok = 1;
  if (is_list(L, idx, &n)) {
    msgpack_pack_array(&e->pk, (size_t)n);
    for (lua_Integer i = 1; ok && i <= n; i++) {
      *s = (step){.is_index = 1, .index = i};
      e->depth++;
      lua_rawgeti(L, idx, i);
      ok = encode(e, lua_gettop(L));
      lua_pop(L, 1);
      e->depth--;
    }
  } else {
    size_t count = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
      count++;
      lua_pop(L, 1);
    }
    msgpack_pack_map(&e->pk, count);
    lua_pushnil(L);
    while (ok && lua_next(L, idx)) {
      int key = lua_gettop(L) - 1;
      if (lua_type(L, key) == LUA_TSTRING) {
        *s = (step){0};
        s->name = lua_tolstring(L, key, &s->len);
      } else if (lua_isinteger(L, key)) {
        *s = (step){.is_index = 1, .index = lua_tointeger(L, key)};
      } else {
        *s = (step){0};
      }
      e->depth++;
      ok = encode(e, key) && encode(e, key + 1);
      e->depth--;
      lua_pop(L, 1);
    }
    if (!ok) lua_pop(L, 1); /* the key left by the loop */
  }
  e->open[at] = NULL;
  return ok;
}

static void pack_string(msgpack_packer *pk, const char *s, size_t n) {
  msgpack_pack_str(pk, n);
  msgpack_pack_str_body(pk, s, n);
}

/* Packs the ref at idx as ext TEND_CODEC_EXT_REF:
 * [node, inc, id, gen, path, kind]: a proxy's own coordinates, else this
 * node's name and incarnation with the ref's id, generation and path
 * (kind 1 for a pending ask). */
static void encode_ref(encoder *e, int idx, const tend_ref *r) {
  lua_State *L = e->L;
  tend_host *h = e->h;
  msgpack_sbuffer body;
  msgpack_packer pk;
  msgpack_sbuffer_init(&body);
  msgpack_packer_init(&pk, &body, msgpack_sbuffer_write);
  msgpack_pack_array(&pk, 6);
  tend_actor *a = tend_slots_get(&h->ids, r->id, r->gen);
  size_t n;
  if (a && a->kind == TEND_ENTITY_ACTOR && a->role == TEND_ROLE_REMOTE) {
    tend_remote_push_coords(L, h, a);
    for (int i = 1; i <= 6; i++) {
      lua_rawgeti(L, -1, i);
      if (lua_type(L, -1) == LUA_TSTRING) {
        const char *s = lua_tolstring(L, -1, &n);
        pack_string(&pk, s, n);
      } else {
        msgpack_pack_uint64(&pk, (uint64_t)lua_tointeger(L, -1));
      }
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  } else {
    const char *node = h->node_name ? h->node_name : "";
    pack_string(&pk, node, strlen(node));
    msgpack_pack_uint64(&pk, h->node_inc);
    msgpack_pack_uint32(&pk, r->id);
    msgpack_pack_uint32(&pk, r->gen);
    tend_ref_push_path(L, h, idx);
    const char *path = lua_tolstring(L, -1, &n);
    pack_string(&pk, path, n);
    lua_pop(L, 1);
    /* kind: 1 for a pending ask, and the scheduler it is on (above bit 0) */
    msgpack_pack_uint32(
        &pk, (a && a->kind == TEND_ENTITY_PROMISE) | (h->sched_index << 1));
  }
  msgpack_pack_ext(&e->pk, body.size, TEND_CODEC_EXT_REF);
  msgpack_pack_ext_body(&e->pk, body.data, body.size);
  msgpack_sbuffer_destroy(&body);
}

static int encode(encoder *e, int idx) {
  lua_State *L = e->L;
  if (over(e, 0)) return 0;
  switch (lua_type(L, idx)) {
    case LUA_TNIL: msgpack_pack_nil(&e->pk); return 1;
    case LUA_TBOOLEAN:
      if (lua_toboolean(L, idx))
        msgpack_pack_true(&e->pk);
      else
        msgpack_pack_false(&e->pk);
      return 1;
    case LUA_TNUMBER:
      if (lua_isinteger(L, idx))
        msgpack_pack_int64(&e->pk, (int64_t)lua_tointeger(L, idx));
      else
        msgpack_pack_double(&e->pk, (double)lua_tonumber(L, idx));
      return 1;
    case LUA_TSTRING: {
      size_t n;
      const char *s = lua_tolstring(L, idx, &n);
      if (over(e, n)) return 0;
      msgpack_pack_str(&e->pk, n);
      msgpack_pack_str_body(&e->pk, s, n);
      return 1;
    }
    case LUA_TTABLE: return encode_table(e, idx);
    case LUA_TUSERDATA: {
      const tend_ref *r = tend_ref_test(L, idx);
      if (r) {
        encode_ref(e, idx, r);
        return 1;
      }
      return refuse(e, TEND_CODEC_NOT_SERIALIZABLE,
                    "a userdata (not a ref) cannot leave the node");
    }
    case LUA_TFUNCTION:
      return refuse(e, TEND_CODEC_NOT_SERIALIZABLE,
                    "a function cannot leave the node");
    case LUA_TTHREAD:
      return refuse(e, TEND_CODEC_NOT_SERIALIZABLE,
                    "a coroutine cannot leave the node");
    default:
      return refuse(e, TEND_CODEC_NOT_SERIALIZABLE,
                    "a light userdata cannot leave the node");
  }
}

tend_codec_status tend_codec_encode(lua_State *L, tend_host *h, int idx,
                                    size_t limit) {
  return tend_codec_encode_to(L, h, idx, limit, NULL);
}

tend_codec_status tend_codec_encode_to(lua_State *L, tend_host *h, int idx,
                                       size_t limit, const char *away) {
  idx = lua_absindex(L, idx);
  encoder e = {.L = L, .h = h, .limit = limit, .away = away};
  e.buf.data = e.buf.small;
  e.buf.alloc = sizeof e.buf.small;
  msgpack_packer_init(&e.pk, &e.buf, buf_write);
  int top = lua_gettop(L);
  int ok = encode(&e, idx) && !over(&e, 0);
  lua_settop(L, top);
  if (ok)
    lua_pushlstring(L, e.buf.data, e.buf.size);
  else
    lua_pushstring(L, e.msg);
  if (e.buf.data != e.buf.small) free(e.buf.data);
  return e.status;
}

/* ------------------------------------------------------------ decoding */

static int bad(lua_State *L, const char *what) {
  lua_pushfstring(L, "not a tend message: %s", what);
  return 0;
}

static int is_uint(const msgpack_object *o, uint64_t max) {
  return o->type == MSGPACK_OBJECT_POSITIVE_INTEGER && o->via.u64 <= max;
}

/* Pushes the ref [node, inc, id, gen, path, kind] of o and returns 1, or
 * returns 0 (nothing pushed) when o is no such array. A ref of this node
 * (same name and incarnation) is the local ref; another node's is what the
 * node layer makes of it (a proxy); with no node layer, a ref that reaches
 * nothing, remembering where it pointed. */
/* A msgpack string (its pointer may be NULL when it is empty). */
static void push_str(lua_State *L, const msgpack_object *o) {
  if (o->via.str.size == 0)
    lua_pushliteral(L, "");
  else
    lua_pushlstring(L, o->via.str.ptr, o->via.str.size);
}

static int push_ref(lua_State *L, tend_host *h, const msgpack_object *o) {
  if (o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size != 6) return 0;
  const msgpack_object *f = o->via.array.ptr;
  if (f[0].type != MSGPACK_OBJECT_STR || !is_uint(&f[1], UINT64_MAX) ||
      !is_uint(&f[2], UINT32_MAX) || !is_uint(&f[3], UINT32_MAX) ||
      f[4].type != MSGPACK_OBJECT_STR ||
      !is_uint(&f[5], 2 * TEND_SCHEDULERS_MAX - 1))
    return 0;
  const char *me = h->node_name ? h->node_name : "";
  uint32_t id = (uint32_t)f[2].via.u64, gen = (uint32_t)f[3].via.u64;
  if (f[0].via.str.size == strlen(me) &&
      (f[0].via.str.size == 0 ||
       memcmp(f[0].via.str.ptr, me, f[0].via.str.size) == 0)) {
    int k = (int)(f[5].via.u64 >> 1);
    if (f[1].via.u64 == h->node_inc && k != (int)h->sched_index &&
        k < tend_schedulers_count(h)) { /* another scheduler's */
      push_str(L, &f[4]);
      tend_schedulers_push_proxy(L, h, k, id, gen, -1, (int)(f[5].via.u64 & 1));
      lua_remove(L, -2);
      return 1;
    }
    if (f[1].via.u64 == h->node_inc && k == (int)h->sched_index) {
      tend_ref_push(L, h, id, gen);
      if (!lua_isnil(L, -1)) return 1;
      lua_pop(L, 1);
    }
    tend_ref_new(L, 0, 0); /* an earlier incarnation's actor: dead */
    push_str(L, &f[4]);
    tend_ref_set_path(L, -2);
    return 1;
  }
  if (h->remote_decode_ref != LUA_NOREF) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, h->remote_decode_ref);
    push_str(L, &f[0]);
    lua_pushinteger(L, (lua_Integer)f[1].via.u64);
    lua_pushinteger(L, id);
    lua_pushinteger(L, gen);
    push_str(L, &f[4]);
    lua_pushinteger(L, (lua_Integer)f[5].via.u64);
    if (lua_pcall(L, 6, 1, 0) == LUA_OK && tend_ref_test(L, -1)) return 1;
    lua_pop(L, 1);
  }
  tend_ref_new(L, 0, 0); /* no node layer: it reaches nothing */
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  if (f[4].via.str.size)
    luaL_addlstring(&b, f[4].via.str.ptr, f[4].via.str.size);
  luaL_addchar(&b, '@');
  if (f[0].via.str.size)
    luaL_addlstring(&b, f[0].via.str.ptr, f[0].via.str.size);
  luaL_pushresult(&b);
  tend_ref_set_path(L, -2);
  return 1;
}

static const char *check_shape(const unsigned char *p, size_t n);

/* Pushes the Lua value of o; 0 with a message pushed when it cannot. */
static int push_object(lua_State *L, tend_host *h, const msgpack_object *o,
                       int depth) {
  if (depth > TEND_CODEC_DEPTH) return bad(L, "nested deeper than 32");
  if (!lua_checkstack(L, 4)) return bad(L, "no stack left");
  switch (o->type) {
    case MSGPACK_OBJECT_NIL: lua_pushnil(L); return 1;
    case MSGPACK_OBJECT_BOOLEAN: lua_pushboolean(L, o->via.boolean); return 1;
    case MSGPACK_OBJECT_POSITIVE_INTEGER:
      if (o->via.u64 > (uint64_t)INT64_MAX)
        lua_pushnumber(L, (lua_Number)o->via.u64);
      else
        lua_pushinteger(L, (lua_Integer)o->via.u64);
      return 1;
    case MSGPACK_OBJECT_NEGATIVE_INTEGER:
      lua_pushinteger(L, (lua_Integer)o->via.i64);
      return 1;
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64: lua_pushnumber(L, o->via.f64); return 1;
    case MSGPACK_OBJECT_STR:
      lua_pushlstring(L, o->via.str.ptr, o->via.str.size);
      return 1;
    case MSGPACK_OBJECT_BIN:
      lua_pushlstring(L, o->via.bin.ptr, o->via.bin.size);
      return 1;
    case MSGPACK_OBJECT_ARRAY: {
      const msgpack_object_array *a = &o->via.array;
      lua_createtable(L, (int)(a->size > 1024 ? 1024 : a->size), 0);
      for (uint32_t i = 0; i < a->size; i++) {
        if (!push_object(L, h, &a->ptr[i], depth + 1)) {
          lua_remove(L, -2);
          return 0;
        }
        lua_rawseti(L, -2, (lua_Integer)i + 1);
      }
      return 1;
    }
    case MSGPACK_OBJECT_MAP: {
      const msgpack_object_map *m = &o->via.map;
      lua_createtable(L, 0, (int)(m->size > 1024 ? 1024 : m->size));
      for (uint32_t i = 0; i < m->size; i++) {
        if (!push_object(L, h, &m->ptr[i].key, depth + 1)) {
          lua_remove(L, -2);
          return 0;
        }
        if (lua_isnil(L, -1) || (lua_type(L, -1) == LUA_TNUMBER &&
                                 lua_tonumber(L, -1) != lua_tonumber(L, -1))) {
          lua_pop(L, 2);
          return bad(L, "a map key that is nil or NaN");
        }
        if (!push_object(L, h, &m->ptr[i].val, depth + 1)) {
          lua_remove(L, -2);
          lua_remove(L, -2);
          return 0;
        }
        lua_rawset(L, -3);
      }
      return 1;
    }
    case MSGPACK_OBJECT_EXT: {
      if (o->via.ext.type != TEND_CODEC_EXT_REF)
        return bad(L, "an unknown extension type");
      /* its payload is untrusted bytes too: the same shape check first */
      const char *why =
          check_shape((const unsigned char *)o->via.ext.ptr, o->via.ext.size);
      if (why) {
        lua_pushfstring(L, "not a tend message: a malformed ref (%s)", why);
        return 0;
      }
      msgpack_unpacked r;
      msgpack_unpacked_init(&r);
      size_t off = 0;
      int ok = msgpack_unpack_next(&r, o->via.ext.ptr, o->via.ext.size, &off) ==
                   MSGPACK_UNPACK_SUCCESS &&
               off == o->via.ext.size && push_ref(L, h, &r.data);
      msgpack_unpacked_destroy(&r);
      return ok ? 1 : bad(L, "a malformed ref");
    }
  }
  return bad(L, "an unknown type");
}

/* Big-endian unsigned of k bytes at p. */
static uint64_t be(const unsigned char *p, int k) {
  uint64_t v = 0;
  for (int i = 0; i < k; i++) v = v << 8 | p[i];
  return v;
}

/* Walks the headers of n bytes without building anything: NULL when they
 * hold exactly one value whose every container declares no more elements
 * than there are bytes left (each takes one at least), else why not. So
 * msgpack-c, which allocates a container's elements up front, is never
 * asked for more than a few times the input's size (a 5-byte array32
 * header could ask for 2^32 elements). */
static const char *check_shape(const unsigned char *p, size_t n) {
  size_t at = 0;
  uint64_t pending = 1;
  while (pending > 0) {
    if (at >= n) return "the bytes end inside a value (truncated)";
    unsigned b = p[at];
    uint64_t skip = 0, count = 0;
    int head = 1, k = 0;
    pending--;
    if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3) {
    } else if (b >= 0x80 && b <= 0x8f) {
      count = 2 * (uint64_t)(b & 0x0f);
    } else if (b >= 0x90 && b <= 0x9f) {
      count = b & 0x0f;
    } else if (b >= 0xa0 && b <= 0xbf) {
      skip = b & 0x1f;
    } else {
      switch (b) {
        case 0xc4:
        case 0xd9: k = 1; break; /* bin8, str8 */
        case 0xc5:
        case 0xda: k = 2; break;
        case 0xc6:
        case 0xdb: k = 4; break;
        case 0xc7:
          k = 1;
          head = 2;
          break; /* ext8: length, then type */
        case 0xc8:
          k = 2;
          head = 2;
          break;
        case 0xc9:
          k = 4;
          head = 2;
          break;
        case 0xca: skip = 4; break;
        case 0xcb: skip = 8; break;
        case 0xcc:
        case 0xd0: skip = 1; break;
        case 0xcd:
        case 0xd1: skip = 2; break;
        case 0xce:
        case 0xd2: skip = 4; break;
        case 0xcf:
        case 0xd3: skip = 8; break;
        case 0xd4: skip = 2; break; /* fixext: type and data */
        case 0xd5: skip = 3; break;
        case 0xd6: skip = 5; break;
        case 0xd7: skip = 9; break;
        case 0xd8: skip = 17; break;
        case 0xdc:
        case 0xde: k = 2; break; /* array16, map16 */
        case 0xdd:
        case 0xdf: k = 4; break;
        default: return "malformed bytes"; /* 0xc1 */
      }
      if (k) {
        if (n - at < 1 + (size_t)k)
          return "the bytes end inside a value (truncated)";
        uint64_t len = be(p + at + 1, k);
        if (b == 0xdc || b == 0xdd)
          count = len;
        else if (b == 0xde || b == 0xdf)
          count = 2 * len;
        else
          skip = len + (uint64_t)(head - 1); /* ext: its type byte */
        at += (size_t)k;
      }
    }
    at += 1;
    if (skip > n - at) return "the bytes end inside a value (truncated)";
    at += (size_t)skip;
    if (count > n - at) return "a container longer than the bytes left";
    pending += count;
  }
  return at == n ? NULL : "bytes after the value";
}

tend_codec_status tend_codec_decode(lua_State *L, tend_host *h,
                                    const char *data, size_t n) {
  const char *why = check_shape((const unsigned char *)data, n);
  if (why) return bad(L, why), TEND_CODEC_BAD_MESSAGE;
  msgpack_unpacked r;
  msgpack_unpacked_init(&r);
  size_t off = 0;
  msgpack_unpack_return ret = msgpack_unpack_next(&r, data, n, &off);
  int ok;
  if (ret == MSGPACK_UNPACK_CONTINUE)
    ok = bad(L, "the bytes end inside a value (truncated)");
  else if (ret != MSGPACK_UNPACK_SUCCESS)
    ok = bad(L, "malformed bytes");
  else if (off != n)
    ok = bad(L, "bytes after the value");
  else
    ok = push_object(L, h, &r.data, 0);
  msgpack_unpacked_destroy(&r);
  return ok ? TEND_CODEC_OK : TEND_CODEC_BAD_MESSAGE;
}
