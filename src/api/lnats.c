/* lnats: core.nats_connect and the tend.Nats connection (runtime/nats.h),
 * the transport of lua/tend/nats.lua. Not part of the tend module
 * (lua/tend.lua leaves nats_* out). */
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "base/privdir.h"

#define NATS_MT "tend.Nats"

static int raise_nats(lua_State *L, const char *text, const char *reason) {
  tend_error_new(L, TEND_ERR_NAME(NATS_ERROR), text);
  lua_pushstring(L, reason);
  lua_setfield(L, -2, "reason");
  return lua_error(L);
}

static tend_nats *check_conn(lua_State *L, const char *fn) {
  tend_nats **c = luaL_testudata(L, 1, NATS_MT);
  tend_nats *conn = c ? *c : NULL;
  if (conn) return conn;
  luaL_error(L, "%s: self: expected a NATS connection, got %s", fn,
             tend_typename(L, 1));
  return NULL;
}

static const char *opt_string(lua_State *L, const char *k, const char *def,
                              const char *expected) {
  lua_getfield(L, 1, k);
  const char *v = def;
  if (!lua_isnil(L, -1)) {
    if (lua_type(L, -1) != LUA_TSTRING)
      tend_bad_option(L, "nats_connect", k, expected, -1);
    v = lua_tostring(L, -1);
  }
  lua_pop(L, 1); /* the string stays in the options table */
  return v;
}

/* core.nats_connect{url, name, timeout, reconnect, on_status} -> conn;
 * raises NatsError when the server cannot be reached. */
static int l_connect(lua_State *L) {
  static const char *const keys[] = {"url",       "name",      "timeout",
                                     "reconnect", "on_status", NULL};
  tend_host *h = tend_host_of(L);
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  tend_check_keys(L, 1, keys, "nats_connect", "");
  tend_nats_opts o = {.timeout_ms = 2000, .reconnect = 1};
  o.url = opt_string(L, "url", NULL, "a nats:// URL");
  if (o.url == NULL) {
    lua_pushnil(L);
    tend_bad_option(L, "nats_connect", "url", "a nats:// URL", -1);
  }
  o.name = opt_string(L, "name", NULL, "a string");
  lua_getfield(L, 1, "timeout");
  if (!lua_isnil(L, -1))
    o.timeout_ms =
        (int64_t)(tend_check_seconds(L, -1, "nats_connect", "timeout", 1) *
                  1000);
  lua_getfield(L, 1, "reconnect");
  if (!lua_isnil(L, -1)) o.reconnect = lua_toboolean(L, -1);
  lua_getfield(L, 1, "on_status"); /* at 4 */
  int on_status = 0;
  if (!lua_isnil(L, 4)) {
    if (!lua_isfunction(L, 4))
      tend_bad_option(L, "nats_connect", "on_status", "a function", 4);
    on_status = 4;
  }
  tend_nats **ud = lua_newuserdatauv(L, sizeof *ud, 0);
  *ud = NULL;
  luaL_setmetatable(L, NATS_MT);
  tend_nats *c = tend_nats_connect(L, h, &o, on_status);
  if (c == NULL) {
    lua_pushfstring(L, "cannot connect to %s: %s", o.url, lua_tostring(L, -1));
    return raise_nats(L, lua_tostring(L, -1), lua_tostring(L, -2));
  }
  *ud = c;
  return 1;
}

/* conn:publish(subject, data [, reply]) -> true | false, "closed" */
static int l_publish(lua_State *L) {
  tend_nats *c = check_conn(L, "publish");
  const char *subject = luaL_checkstring(L, 2);
  size_t n;
  const char *data = luaL_checklstring(L, 3, &n);
  const char *reply = luaL_optstring(L, 4, NULL);
  if (tend_nats_publish(c, subject, data, n, reply) != 0) {
    lua_pushboolean(L, 0);
    lua_pushliteral(L, "closed");
    return 2;
  }
  lua_pushboolean(L, 1);
  return 1;
}

/* conn:send(subject, data) -> true | false, "closed": an envelope in the next
 * batch on subject (runtime/nats.h). */
static int l_send(lua_State *L) {
  tend_nats *c = check_conn(L, "send");
  const char *subject = luaL_checkstring(L, 2);
  size_t n;
  const char *data = luaL_checklstring(L, 3, &n);
  if (tend_nats_publish_batched(c, subject, data, n) != 0) {
    lua_pushboolean(L, 0);
    lua_pushliteral(L, "closed");
    return 2;
  }
  lua_pushboolean(L, 1);
  return 1;
}

/* conn:subscribe(subject, fn) -> id */
static int l_subscribe(lua_State *L) {
  tend_nats *c = check_conn(L, "subscribe");
  const char *subject = luaL_checkstring(L, 2);
  luaL_checktype(L, 3, LUA_TFUNCTION);
  int id = tend_nats_subscribe(L, c, subject, 3);
  if (id == 0) return raise_nats(L, "subscribe failed", lua_tostring(L, -1));
  lua_pushinteger(L, id);
  return 1;
}

static int l_unsubscribe(lua_State *L) {
  tend_nats_unsubscribe(check_conn(L, "unsubscribe"),
                        (int)luaL_checkinteger(L, 2));
  return 0;
}

static int l_status(lua_State *L) {
  lua_pushstring(L, tend_nats_status(check_conn(L, "status")));
  return 1;
}

static int l_close(lua_State *L) {
  tend_nats_close(check_conn(L, "close"));
  return 0;
}

static int l_gc(lua_State *L) {
  tend_nats **c = lua_touserdata(L, 1);
  if (*c) tend_nats_close(*c);
  return 0;
}

/* After the wait: the result table is the wake value. */
static int kv_k(lua_State *L, int status, lua_KContext k) {
  (void)status;
  (void)k;
  tend_host *h = tend_host_of(L);
  if (tend_sched_woken(L, h) != TEND_WAKE_OK)
    return raise_nats(L, "kv: the wait ended", "interrupted");
  tend_sched_take_reply(L, h);
  lua_getfield(L, -1, "ok");
  int ok = lua_toboolean(L, -1);
  lua_pop(L, 1);
  if (!ok) {
    lua_getfield(L, -1, "reason");
    lua_pushfstring(L, "kv: %s", lua_tostring(L, -1));
    return raise_nats(L, lua_tostring(L, -1), lua_tostring(L, -2));
  }
  return 1;
}

static const char *const kv_ops[] = {"bucket", "get",    "create", "put",
                                     "update", "delete", "keys",   NULL};

static const char *kv_string(lua_State *L, const char *k, size_t *n) {
  lua_getfield(L, 3, k);
  if (lua_type(L, -1) != LUA_TSTRING)
    tend_bad_option(L, "kv", k, "a string", -1);
  const char *s = lua_tolstring(L, -1, n);
  lua_pop(L, 1);
  return s;
}

/* conn:kv_raw(op, {bucket, key, value, revision, ttl}) -> result table
 * {ok, value, revision, reason, keys}; the caller waits. */
static int l_kv(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_nats *c = check_conn(L, "kv");
  int op = tend_find_name(kv_ops, luaL_checkstring(L, 2));
  if (op < 0) tend_bad_option(L, "kv", "op", "a key-value operation", 2);
  luaL_checktype(L, 3, LUA_TTABLE);
  lua_settop(L, 3);
  tend_kv_args a = {.op = (tend_kv_op)op};
  a.bucket = kv_string(L, "bucket", NULL);
  if (op != TEND_KV_BUCKET && op != TEND_KV_KEYS)
    a.key = kv_string(L, "key", NULL);
  if (op == TEND_KV_CREATE || op == TEND_KV_PUT || op == TEND_KV_UPDATE)
    a.value = kv_string(L, "value", &a.n);
  lua_getfield(L, 3, "revision");
  a.revision = (uint64_t)luaL_optinteger(L, -1, 0);
  lua_getfield(L, 3, "ttl");
  a.ttl_s = (int64_t)luaL_optinteger(L, -1, 0);
  lua_settop(L, 3);
  tend_actor *w = tend_sched_check_wait(L, h, "kv");
  if (tend_nats_kv(L, c, w, &a) != 0)
    return raise_nats(L, "kv: cannot start", lua_tostring(L, -1));
  return tend_sched_wait(L, h, TEND_WAIT_ASK, kv_k);
}

/* core.nats_dir() -> path: a fresh private directory for a local
 * nats-server (its JetStream store and its log), removed with all it
 * holds when tend exits (base/privdir.h). Raises NatsError when none can
 * be made. */
static int l_dir(lua_State *L) {
  char path[4096];
  int r = tend_privdir_make("nats", path, sizeof path);
  if (r == 0) {
    lua_pushstring(L, path);
    return 1;
  }
  const char *tmp = getenv("TMPDIR");
  lua_pushfstring(L,
                  "nats = \"local\": cannot make a private directory under "
                  "%s (TMPDIR): %s",
                  tmp && tmp[0] ? tmp : "/tmp", strerror(-r));
  return raise_nats(L, lua_tostring(L, -1), strerror(-r));
}

void tend_open_nats(lua_State *L) {
  static const luaL_Reg methods[] = {
      {"publish", l_publish},     {"send", l_send},
      {"subscribe", l_subscribe}, {"unsubscribe", l_unsubscribe},
      {"status", l_status},       {"close", l_close},
      {"kv_raw", l_kv},           {NULL, NULL}};
  static const luaL_Reg fns[] = {
      {"nats_connect", l_connect}, {"nats_dir", l_dir}, {NULL, NULL}};
  luaL_newmetatable(L, NATS_MT);
  luaL_newlib(L, methods);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, l_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
  luaL_setfuncs(L, fns, 0);
}
