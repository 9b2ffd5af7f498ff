/* lchaos: the C side of tend.chaos (lua/tend/chaos.lua keeps the rules).
 * While rules exist, chaos.lua sets two Lua filters; this file installs C
 * hooks in the host (tend_host_set_filters) that call them:
 * one at every send (delay, drop; ask requests and replies included),
 * one before a behavior gets a message (crash_on). Both run protected and
 * cannot wait. */
#include "api/api.h"

/* The registry keys of the Lua filters (the addresses are the keys). */
static const char send_key = 's', receive_key = 'r';
static int bypass; /* 1 while chaos itself delivers (no filter) */

/* Pushes the ref of the actor at one end (nil for none). */
static void push_endpoint(lua_State *L, tend_host *h, tend_actor *a) {
  if (a)
    tend_actor_push_ref(L, h, a);
  else
    lua_pushnil(L);
}

/* Calls on_send(from, to, msg, real_to, real_from): from and to are the
 * actors at the two ends (an ask's asker for its request and its reply),
 * real_to and real_from the addresses a delayed message goes to and
 * comes from (the ask itself, for ask traffic). */
static int send_filter(lua_State *L, tend_host *h, uint32_t to_id,
                       uint32_t to_gen, tend_value *v, uint32_t sender_id,
                       uint32_t sender_gen) {
  if (bypass) return 0;
  int top = lua_gettop(L);
  tend_actor *to = tend_host_endpoint(h, to_id, to_gen);
  lua_rawgetp(L, LUA_REGISTRYINDEX, &send_key);
  push_endpoint(L, h, tend_host_endpoint(h, sender_id, sender_gen));
  push_endpoint(L, h, to);
  tend_value_push(L, h, v);
  tend_ref_push(L, h, to_id, to_gen);
  tend_ref_push(L, h, sender_id, sender_gen);
  int held = 0;
  if (lua_pcall(L, 5, 2, 0) != LUA_OK) { /* -> taken, dead */
    tend_host_log(h, TEND_LOG_WARN, NULL, "chaos filter failed: %s",
                  lua_tostring(L, -1));
  } else if (lua_toboolean(L, -2)) {
    held = 1; /* dropped (a dead letter), or delivered later by chaos */
    if (lua_toboolean(L, -1)) {
      tend_actor_dead_letter_from(L, h, to, sender_id, sender_gen, v,
                                  "dropped by tend.chaos");
    } else
      tend_value_drop(L, h, v);
  }
  lua_settop(L, top);
  return held;
}

static int receive_filter(lua_State *L, tend_host *h, tend_actor *a, int msg) {
  int top = lua_gettop(L);
  msg = lua_absindex(L, msg);
  lua_rawgetp(L, LUA_REGISTRYINDEX, &receive_key);
  tend_actor_push_ref(L, h, a);
  lua_pushvalue(L, msg);
  if (lua_pcall(L, 2, 1, 0) != LUA_OK) {
    tend_host_log(h, TEND_LOG_WARN, NULL, "chaos filter failed: %s",
                  lua_tostring(L, -1));
    lua_settop(L, top);
    return 0;
  }
  if (lua_isnil(L, -1)) {
    lua_settop(L, top);
    return 0;
  }
  return 1; /* the error is at the top */
}

static tend_actor *check_actor(lua_State *L, int idx, const char *fn) {
  tend_ref *r = tend_check_ref(L, idx, fn, "ref");
  return tend_ref_actor(tend_host_of(L), r);
}

/* core.chaos_filters(receive_fn | nil, send_fn | nil): installs the
 * hooks while there is a function to call. */
static int l_chaos_filters(lua_State *L) {
  tend_host *h = tend_host_of(L);
  int receive = lua_isfunction(L, 1), send = lua_isfunction(L, 2);
  if (receive)
    lua_pushvalue(L, 1);
  else
    lua_pushnil(L);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &receive_key);
  if (send)
    lua_pushvalue(L, 2);
  else
    lua_pushnil(L);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &send_key);
  tend_host_set_filters(h, receive ? receive_filter : NULL,
                        send ? send_filter : NULL);
  return 0;
}

/* core.chaos_deliver(to, msg, from | nil): a send that bypasses the send
 * filter (a delayed message arriving). */
static int l_chaos_deliver(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_ref *to = tend_check_ref(L, 1, "chaos.deliver", "to");
  uint32_t sid = 0, sgen = 0;
  tend_ref *from = lua_isnoneornil(L, 3)
                       ? NULL
                       : tend_check_ref(L, 3, "chaos.deliver", "from");
  if (from) {
    sid = from->id;
    sgen = from->gen;
  }
  bypass = 1;
  tend_actor_send(L, h, to->id, to->gen, 2, sid, sgen);
  bypass = 0;
  return 0;
}

/* core.chaos_crash(ref, err): fails the actor as if its behavior raised
 * err (an error value, or a kind). */
static int l_chaos_crash(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_actor *a = check_actor(L, 1, "tend.chaos.crash");
  if (lua_type(L, 2) == LUA_TSTRING) {
    tend_error_new(L, lua_tostring(L, 2), "injected by tend.chaos.crash");
    lua_replace(L, 2);
  } else if (!tend_error_is(L, 2)) { /* C reads its fields unprotected */
    luaL_error(L,
               "tend.chaos.crash: err: expected an error kind or a "
               "tend.error value, got %s",
               tend_typename(L, 2));
  }
  lua_settop(L, 2);
  if (a == NULL || tend_actor_is_guardian(a)) return 0;
  if (a == tend_host_current(h)) return lua_error(L); /* crashing itself */
  tend_actor_fail(L, h, a);
  return 0;
}

/* core.chaos_freeze(ref) / core.chaos_thaw(ref): the actor takes no
 * messages while frozen (its mailbox fills). */
static int l_chaos_freeze(lua_State *L) {
  tend_actor *a = check_actor(L, 1, "tend.chaos.freeze");
  if (a) tend_actor_freeze(a);
  return 0;
}

static int l_chaos_thaw(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_actor *a = check_actor(L, 1, "tend.chaos.thaw");
  if (a) tend_actor_thaw(h, a);
  return 0;
}

static int quiet; /* > 0 while the nemesis applies a verb: one event */

#define MAX_FIELDS 16

/* core.chaos_event(ref_or_path, detail [, to [, fields]]): a "chaos"
 * trace event; fields: {key1, value1, key2, value2, ...} (strings,
 * numbers, booleans) it carries after the others, in that order. Nothing while
 * quiet, unless fields are given. */
static int l_chaos_event(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_event e = TEND_EVENT_INIT(TEND_EV_CHAOS, NULL);
  lua_settop(L, 4);
  if (quiet > 0 && lua_isnoneornil(L, 4)) return 0;
  e.to = lua_isstring(L, 3) ? lua_tostring(L, 3) : NULL;
  tend_event_field fields[MAX_FIELDS];
  if (lua_istable(L, 4)) {
    lua_Integer n = luaL_len(L, 4);
    luaL_argcheck(L, n % 2 == 0 && n / 2 <= MAX_FIELDS, 4,
                  "expected at most 16 key, value pairs");
    for (lua_Integer i = 1; i < n; i += 2) {
      tend_event_field *f = &fields[e.nfields++];
      lua_rawgeti(L, 4, i);
      f->key = luaL_checkstring(L, -1);
      lua_rawgeti(L, 4, i + 1);
      int type = lua_type(L, -1);
      const char *v = type == LUA_TBOOLEAN
                          ? (lua_toboolean(L, -1) ? "true" : "false")
                          : luaL_checkstring(L, -1); /* (on the stack) */
      f->text = type == LUA_TSTRING ? v : NULL;
      f->num_text = type == LUA_TSTRING ? NULL : v;
    }
    e.fields = fields;
  }
  tend_ref *r = tend_ref_test(L, 1);
  if (r) {
    lua_getfield(L, 1, "path");
    lua_pushvalue(L, 1);
    lua_call(L, 1, 1);
    e.path = lua_tostring(L, -1);
  } else {
    e.path = luaL_optstring(L, 1, "*");
  }
  e.detail = luaL_checkstring(L, 2);
  tend_event_emit(L, h, &e);
  return 0;
}

/* core.chaos_quiet(on): while on, the verbs' own events are not traced
 * (the nemesis traces one event per fault it applies). */
static int l_chaos_quiet(lua_State *L) {
  quiet += lua_toboolean(L, 1) ? 1 : -1;
  if (quiet < 0) quiet = 0;
  return 0;
}

void tend_open_chaos(lua_State *L) {
  static const luaL_Reg fns[] = {
      {"chaos_filters", l_chaos_filters}, {"chaos_deliver", l_chaos_deliver},
      {"chaos_crash", l_chaos_crash},     {"chaos_freeze", l_chaos_freeze},
      {"chaos_thaw", l_chaos_thaw},       {"chaos_event", l_chaos_event},
      {"chaos_quiet", l_chaos_quiet},     {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
}
