/* lsimnodes: simulated nodes (runtime/simnodes.h), for
 * lua/tend/simnodes.lua. Not part of the tend module (lua/tend.lua leaves
 * sim_* out). "The world" is the host the scenario runs in; a node is a
 * host of its own that the world steps. */
#include <string.h>

#include "api/api.h"

static tend_host *world_of(tend_host *h) {
  return tend_host_world(h) ? tend_host_world(h) : h;
}

/* The world, or an error: these calls belong to the scenario. */
static tend_host *check_world(lua_State *L, const char *fn) {
  tend_host *h = tend_host_of(L);
  if (tend_host_world(h))
    luaL_error(L,
               "%s: call it from the scenario (the world), not from a "
               "simulated node",
               fn);
  return h;
}

/* The index of the node named at idx, or an error. */
static int check_node(lua_State *L, tend_host *w, int idx, const char *fn) {
  const char *name = luaL_checkstring(L, idx);
  int i = tend_sim_find(w, name);
  if (i < 0) luaL_error(L, "%s: no simulated node named '%s'", fn, name);
  return i;
}

/* A node's seed: the world's, its name and its incarnation, mixed
 * (splitmix64's finalizer). */
static uint64_t seed_for(uint64_t seed, const char *name, uint64_t inc) {
  uint64_t x = seed ^ (inc * 0x9E3779B97F4A7C15ull);
  for (const unsigned char *c = (const unsigned char *)name; *c; c++)
    x = (x ^ *c) * 0x100000001B3ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/* Runs in the node's state: boot(name, inc, opts bytes) returns the main
 * chunk and its arguments; they are spawned as /user/main. */
static int boot(lua_State *NL) {
  lua_getglobal(NL, "require");
  lua_pushliteral(NL, "tend.simnodes");
  lua_call(NL, 1, 1);
  lua_getfield(NL, -1, "boot");
  lua_insert(NL, 1);
  lua_pop(NL, 1);     /* the module */
  lua_call(NL, 3, 2); /* chunk, args */
  lua_pushcfunction(NL, tend_api_start_main);
  lua_insert(NL, -3);
  lua_call(NL, 2, 0);
  return 0;
}

/* core.sim_open(name, opts) -> inc: node `name` (a new one, or the next
 * incarnation of one that crashed or ended) boots with opts (msgpack
 * bytes, read by tend.simnodes.boot in the node) and runs its main chunk.
 * Raises with the node's error when it cannot start. */
static int l_open(lua_State *L) {
  tend_host *w = check_world(L, "tend.sim.nodes");
  const char *name = luaL_checkstring(L, 1);
  size_t len;
  const char *opts = luaL_checklstring(L, 2, &len);
  if (!tend_host_virtual(w))
    return luaL_error(L,
                      "tend.sim.nodes: simulated nodes need the virtual "
                      "clock (--virtual-time)");
  int i = tend_sim_find(w, name);
  if (i >= 0 && tend_sim_state(w, i) == TEND_SIMNODE_UP)
    return luaL_error(L, "tend.sim.nodes: node '%s' is up already", name);
  tend_host_config cfg = {
      .virtual_time = 1,
      .has_seed = 1,
      .seed =
          seed_for(tend_host_seed(w), name, i >= 0 ? tend_sim_inc(w, i) : 0),
      .log_level = tend_host_log_level(w),
      .copy_messages = tend_host_copies(w),
      .drivers = tend_drivers,
      .open = tend_host_opener(w),
      .world = w,
      .node_name = name,
  };
  tend_host *n = tend_host_open(&cfg);
  if (n == NULL)
    return luaL_error(L, "tend.sim.nodes: node '%s': no host", name);
  tend_host_jump(n, tend_host_now(w));
  uint64_t inc = tend_sim_add(w, name, n);
  if (inc == 0) {
    tend_host_close(n);
    return luaL_error(L, "tend.sim.nodes: out of memory");
  }
  i = tend_sim_find(w, name);
  lua_State *NL = tend_host_state(n);
  lua_pushcfunction(NL, boot);
  lua_pushstring(NL, name);
  lua_pushinteger(NL, (lua_Integer)inc);
  lua_pushlstring(NL, opts, len);
  if (lua_pcall(NL, 3, 0, 0) != LUA_OK) {
    lua_pushfstring(L, "tend.sim.nodes: node '%s': %s", name,
                    luaL_tolstring(NL, -1, NULL));
    tend_sim_crash(w, i); /* its host closes */
    return lua_error(L);
  }
  lua_pushinteger(L, (lua_Integer)inc);
  return 1;
}

/* core.sim_join(name) -> inc: the world itself takes part as node name. */
static int l_join(lua_State *L) {
  tend_host *w = check_world(L, "tend.sim.nodes");
  const char *name = luaL_checkstring(L, 1);
  int i = tend_sim_find(w, name);
  if (i >= 0 && tend_sim_state(w, i) == TEND_SIMNODE_UP)
    return luaL_error(L, "tend.sim.nodes: node '%s' is up already", name);
  uint64_t inc = tend_sim_add(w, name, w);
  if (inc == 0) return luaL_error(L, "tend.sim.nodes: out of memory");
  lua_pushinteger(L, (lua_Integer)inc);
  return 1;
}

/* core.sim_dispatch(fn): fn(subject, data) takes this host's deliveries. */
static int l_dispatch(lua_State *L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  tend_sim_set_dispatch(L, tend_host_of(L), 1);
  return 0;
}

/* core.sim_publish(subject, data): onto the bus. */
static int l_publish(lua_State *L) {
  size_t len;
  const char *subject = luaL_checkstring(L, 1);
  const char *data = luaL_checklstring(L, 2, &len);
  tend_sim_publish(tend_host_of(L), subject, data, len);
  return 0;
}

/* core.sim_crash(name) -> true, or false when it was not up. */
static int l_crash(lua_State *L) {
  tend_host *w = check_world(L, "tend.chaos.crash_node");
  int i = check_node(L, w, 1, "tend.chaos.crash_node");
  int up = tend_sim_state(w, i) == TEND_SIMNODE_UP;
  if (up) tend_sim_crash(w, i);
  lua_pushboolean(L, up);
  return 1;
}

/* core.sim_stop_all(): every node's tree stops (tend.shutdown there). */
static int l_stop_all(lua_State *L) {
  tend_sim_stop_all(check_world(L, "tend.sim.stop"));
  return 0;
}

/* core.sim_link(a, b, cut, latency, jitter): cut true/false/nil
 * (unchanged), seconds or nil (unchanged). */
static int l_link(lua_State *L) {
  const char *fn = "tend.chaos";
  tend_host *w = check_world(L, fn);
  int i = check_node(L, w, 1, fn), j = check_node(L, w, 2, fn);
  int cut = lua_isnoneornil(L, 3) ? -1 : lua_toboolean(L, 3);
  int64_t latency =
      lua_isnoneornil(L, 4)
          ? -1
          : tend_clock_ns(tend_check_seconds(L, 4, fn, "seconds", 0));
  int64_t jitter =
      lua_isnoneornil(L, 5)
          ? -1
          : tend_clock_ns(tend_check_seconds(L, 5, fn, "jitter", 0));
  tend_sim_link(w, i, j, cut, latency, jitter);
  return 0;
}

/* core.sim_heal(): every link as new. */
static int l_heal(lua_State *L) {
  tend_sim_heal(check_world(L, "tend.chaos.heal"));
  return 0;
}

/* core.sim_list() -> { {name, state, inc}, ... } in the order added. */
static int l_list(lua_State *L) {
  tend_host *w = world_of(tend_host_of(L));
  static const char *const states[] = {"up", "crashed", "ended"};
  int n = tend_sim_count(w);
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_createtable(L, 0, 3);
    lua_pushstring(L, tend_sim_name(w, i));
    lua_setfield(L, -2, "name");
    lua_pushstring(L, states[tend_sim_state(w, i)]);
    lua_setfield(L, -2, "state");
    lua_pushinteger(L, (lua_Integer)tend_sim_inc(w, i));
    lua_setfield(L, -2, "inc");
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

/* core.sim_kv(op, bucket, key, value, revision | ttl): the world's
 * key-value store, answered as lua/tend/nats.lua's kv() answers:
 * get -> value, revision | nil; create -> revision | nil, "exists";
 * update -> revision | nil, "wrong revision"; put -> revision;
 * delete, bucket -> true; keys -> list. */
static int l_kv(lua_State *L) {
  tend_host *w = world_of(tend_host_of(L));
  static const char *const ops[] = {"get",    "create", "update", "put",
                                    "delete", "bucket", "keys",   NULL};
  int op = luaL_checkoption(L, 1, NULL, ops);
  const char *bucket = luaL_checkstring(L, 2);
  tend_simkv_result r = TEND_SIMKV_OK;
  if (op == 5) { /* bucket */
    double ttl = luaL_optnumber(L, 5, 0);
    r = tend_simkv_bucket(w, bucket, ttl > 0 ? tend_clock_ns(ttl) : 0);
    lua_pushboolean(L, 1);
  } else if (op == 6) { /* keys */
    tend_simkv_push_keys(L, w, bucket);
  } else {
    const char *key = luaL_checkstring(L, 3);
    if (op == 0) { /* get */
      const char *v;
      size_t len;
      uint64_t rev;
      if (tend_simkv_get(w, bucket, key, &v, &len, &rev) != TEND_SIMKV_OK) {
        lua_pushnil(L);
        return 1;
      }
      lua_pushlstring(L, v, len);
      lua_pushinteger(L, (lua_Integer)rev);
      return 2;
    }
    if (op == 4) { /* delete */
      tend_simkv_delete(w, bucket, key);
      lua_pushboolean(L, 1);
      return 1;
    }
    size_t len;
    const char *v = luaL_checklstring(L, 4, &len);
    uint64_t rev = (uint64_t)luaL_optinteger(L, 5, 0);
    r = tend_simkv_write(w, "cup"[op - 1], bucket, key, v, len, &rev);
    if (r == TEND_SIMKV_EXISTS || r == TEND_SIMKV_WRONG) {
      lua_pushnil(L);
      lua_pushstring(L, r == TEND_SIMKV_EXISTS ? "exists" : "wrong revision");
      return 2;
    }
    lua_pushinteger(L, (lua_Integer)rev);
  }
  if (r == TEND_SIMKV_NOMEM) return luaL_error(L, "tend.global: out of memory");
  return 1;
}

void tend_open_simnodes(lua_State *L) {
  static const luaL_Reg fns[] = {{"sim_open", l_open},
                                 {"sim_join", l_join},
                                 {"sim_dispatch", l_dispatch},
                                 {"sim_publish", l_publish},
                                 {"sim_crash", l_crash},
                                 {"sim_stop_all", l_stop_all},
                                 {"sim_link", l_link},
                                 {"sim_heal", l_heal},
                                 {"sim_list", l_list},
                                 {"sim_kv", l_kv},
                                 {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
}
