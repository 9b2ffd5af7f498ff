/* request: a request H2O read, as the server actor gets it (see
 * server.h): its message and its req table, built in C (the query
 * decoded, the peer kept per connection). */
#include <lauxlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "runtime/core/send.h"
#include "runtime/io/http/server_int.h"

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Pushes s[0..n) with '+' as a space and %XX as its byte (a '%' not
 * followed by two hex digits stays). */
static void push_unescaped(lua_State *L, const char *s, size_t n) {
  if (memchr(s, '%', n) == NULL && memchr(s, '+', n) == NULL) {
    lua_pushlstring(L, s, n);
    return;
  }
  luaL_Buffer b;
  char *out = luaL_buffinitsize(L, &b, n);
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    int hi, lo;
    if (s[i] == '+') {
      out[k++] = ' ';
    } else if (s[i] == '%' && i + 2 < n && (hi = hexval(s[i + 1])) >= 0 &&
               (lo = hexval(s[i + 2])) >= 0) {
      out[k++] = (char)(hi * 16 + lo);
      i += 2;
    } else {
      out[k++] = s[i];
    }
  }
  luaL_pushresultsize(&b, k);
}

/* Pushes the query "a=1&b=x%20y" decoded: { a = "1", b = "x y" } (pairs
 * split at '&' and ';', empty ones skipped; a repeated key: its last
 * value; a key without '=': ""), as lua/tend/http_server.lua's
 * decode_query does for the simulated twin. */
static void push_query(lua_State *L, const char *q, size_t n) {
  lua_createtable(L, 0, 0);
  size_t i = 0;
  while (i < n) {
    size_t j = i;
    while (j < n && q[j] != '&' && q[j] != ';') j++;
    if (j > i) {
      const char *eq = memchr(q + i, '=', j - i);
      size_t klen = eq ? (size_t)(eq - (q + i)) : j - i;
      push_unescaped(L, q + i, klen);
      if (eq)
        push_unescaped(L, eq + 1, (size_t)(q + j - eq - 1));
      else
        lua_pushliteral(L, "");
      lua_rawset(L, -3);
    }
    i = j + 1;
  }
}

/* Writes v in decimal at p; returns the end. */
static char *put_uint(char *p, unsigned v) {
  char tmp[12];
  int n = 0;
  do {
    tmp[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  while (n) *p++ = tmp[--n];
  return p;
}

/* Pushes the request's peer, "a.b.c.d:port" or "[v6]:port" (v4, the
 * common case, without printf); nothing when unknown -> 0. */
static int format_peer(lua_State *L, h2o_req_t *req) {
  struct sockaddr_storage sa;
  if (req->conn->callbacks->get_peername == NULL ||
      req->conn->callbacks->get_peername(req->conn, (struct sockaddr *)&sa) <=
          0)
    return 0;
  if (sa.ss_family == AF_INET6) {
    const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)&sa;
    char ip[64], peer[80];
    uv_ip6_name(a6, ip, sizeof ip);
    snprintf(peer, sizeof peer, "[%s]:%d", ip, ntohs(a6->sin6_port));
    lua_pushstring(L, peer);
    return 1;
  }
  const struct sockaddr_in *a4 = (const struct sockaddr_in *)&sa;
  const unsigned char *b = (const unsigned char *)&a4->sin_addr;
  char peer[24], *p = peer;
  for (int i = 0; i < 4; i++) {
    p = put_uint(p, b[i]);
    *p++ = i < 3 ? '.' : ':';
  }
  p = put_uint(p, ntohs(a4->sin_port));
  lua_pushlstring(L, peer, (size_t)(p - peer));
  return 1;
}

/* Pushes the request's peer, made once per connection (kept by H2O's
 * connection id in s's peers, the table at stack index peers) -> 1;
 * nothing when unknown -> 0. */
static int push_peer(lua_State *L, tend_httpd *s, h2o_req_t *req, int peers) {
  uint64_t conn = req->conn->id;
  if (conn == 0) return format_peer(L, req);
  int slot = (int)(conn % TEND_HTTPD_PEERS);
  if (s->peer_conn[slot] == conn) {
    lua_rawgeti(L, peers, slot + 1);
    return 1;
  }
  if (!format_peer(L, req)) return 0;
  lua_pushvalue(L, -1);
  lua_rawseti(L, peers, slot + 1);
  s->peer_conn[slot] = conn;
  return 1;
}

static void push_version(lua_State *L, int version) {
  int major = version >> 8, minor = version & 0xff;
  if (major >= 2)
    lua_pushfstring(L, "%d", major);
  else if (major == 1 && minor == 1)
    lua_pushliteral(L, "1.1");
  else if (major == 1 && minor == 0)
    lua_pushliteral(L, "1.0");
  else
    lua_pushfstring(L, "%d.%d", major, minor);
}

/* Fields the server adds to the message, which becomes its record of the
 * request (lua/tend/http_server.lua: child, t0, seq, deadline): the
 * table is made with room for them, not rehashed as they come. */
#define RECORD_FIELDS 10

/* request_p's upvalues: the field names, interned once (a raw set with
 * them skips the lookup of a C string that lua_setfield does), the value
 * "http", then the peers table. */
static const char *const KEYS[] = {
    "tend", "id",   "method",  "path",      "query",  "req", "headers",
    "body", "peer", "version", "websocket", "scheme", "http"};
enum {
  K_TEND = 1,
  K_ID,
  K_METHOD,
  K_PATH,
  K_QUERY,
  K_REQ,
  K_HEADERS,
  K_BODY,
  K_PEER,
  K_VERSION,
  K_WEBSOCKET,
  K_SCHEME,
  K_HTTP,
  K_PEERS
};
#define KEY(k) lua_pushvalue(L, lua_upvalueindex(k))

/* t[k] = the value at stack index v. */
static void set_to(lua_State *L, int t, int k, int v) {
  KEY(k);
  lua_pushvalue(L, v);
  lua_rawset(L, t);
}

/* Sends the owner { tend = "http", id, method, path, query = the raw query
 * or nil, req = the handler's req } for r (a protected call: uv callbacks
 * run outside any). */
static int request_p(lua_State *L) {
  tend_httpd *s = lua_touserdata(L, 1);
  httpd_req *r = lua_touserdata(L, 2);
  h2o_req_t *req = r->req;
  lua_createtable(L, 0, RECORD_FIELDS); /* 3: the message */
  set_to(L, 3, K_TEND, lua_upvalueindex(K_HTTP));
  KEY(K_ID);
  lua_pushinteger(L, (lua_Integer)tend_httpd_req_id(s, r));
  lua_rawset(L, 3);
  lua_createtable(L, 0, 10); /* 4: req */
  /* 5 and 6: the method and the path, the message's and req's */
  lua_pushlstring(L, req->method.base, req->method.len);
  set_to(L, 3, K_METHOD, 5);
  set_to(L, 4, K_METHOD, 5);
  size_t plen = req->path.len;
  KEY(K_QUERY);
  if (req->query_at != SIZE_MAX && req->query_at < plen) {
    plen = req->query_at;
    const char *q = req->path.base + plen + 1;
    size_t qn = req->path.len - plen - 1;
    KEY(K_QUERY);
    lua_pushlstring(L, q, qn);
    lua_rawset(L, 3); /* the message's: the raw string */
    push_query(L, q, qn);
  } else {
    lua_createtable(L, 0, 0);
  }
  lua_rawset(L, 4);
  lua_pushlstring(L, req->path.base, plen);
  set_to(L, 3, K_PATH, 6);
  set_to(L, 4, K_PATH, 6);
  lua_settop(L, 4);
  KEY(K_HEADERS);
  lua_createtable(L, 0, (int)req->headers.size);
  for (size_t i = 0; i < req->headers.size; i++) {
    const h2o_header_t *hd = &req->headers.entries[i];
    lua_pushlstring(L, hd->name->base, hd->name->len);
    lua_pushvalue(L, -1);
    if (lua_rawget(L, -3) == LUA_TSTRING) { /* a repeated one: joined */
      lua_pushliteral(L, ", ");
      lua_pushlstring(L, hd->value.base, hd->value.len);
      lua_concat(L, 3);
    } else {
      lua_pop(L, 1);
      lua_pushlstring(L, hd->value.base, hd->value.len);
    }
    lua_rawset(L, -3);
  }
  lua_rawset(L, 4);
  KEY(K_BODY);
  lua_pushlstring(L, req->entity.base ? req->entity.base : "",
                  req->entity.base ? req->entity.len : 0);
  lua_rawset(L, 4);
  KEY(K_PEER);
  if (push_peer(L, s, req, lua_upvalueindex(K_PEERS)))
    lua_rawset(L, 4);
  else
    lua_pop(L, 1);
  KEY(K_VERSION);
  push_version(L, req->version);
  lua_rawset(L, 4);
  if (tend_httpd_is_ws(req)) {
    KEY(K_WEBSOCKET);
    lua_pushboolean(L, 1);
    lua_rawset(L, 4);
  }
  if (req->scheme) {
    KEY(K_SCHEME);
    lua_pushlstring(L, req->scheme->name.base, req->scheme->name.len);
    lua_rawset(L, 4);
  }
  set_to(L, 3, K_REQ, 4);
  tend_actor_send(L, s->h, s->owner_id, s->owner_gen, 3, s->owner_id,
                  s->owner_gen);
  return 0;
}

void tend_httpd_push_request_fn(lua_State *L) {
  for (size_t i = 0; i < sizeof KEYS / sizeof KEYS[0]; i++)
    lua_pushstring(L, KEYS[i]);
  lua_createtable(L, TEND_HTTPD_PEERS, 0);
  lua_pushcclosure(L, request_p, K_PEERS);
}
