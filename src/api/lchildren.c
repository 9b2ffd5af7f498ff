/* lchildren: a supervisor's children from outside (OTP's which_children,
 * count_children, start_child, terminate_child): tend.children,
 * tend.count_children, tend.start_child, tend.stop_child. */
#include "api/api.h"

#include <string.h>

static const char *restart_name(const tend_actor *a) {
  switch (tend_actor_restart_type(a)) {
    case TEND_PERMANENT: return "permanent";
    case TEND_TRANSIENT: return "transient";
    case TEND_TEMPORARY: return "temporary";
  }
  return "?";
}

/* Does a supervise (OTP's "supervisor" type)? A strategy of its own, a
 * backoff supervisor, or children now. */
static int is_supervisor(const tend_actor *a) {
  return tend_actor_has_strategy(a) || tend_actor_is_backoff(a) ||
         tend_actor_first_child(a) != NULL;
}

/* A row's keys, in its order: upvalues 1 to ROW_KEYS of l_children (the
 * strings made once, so a row is set with rawset, no string lookup). */
static const char *const row_keys[] = {"path",    "ref",       "name",
                                       "state",   "restart",   "restarts",
                                       "mailbox", "supervisor"};
#define ROW_KEYS ((int)(sizeof row_keys / sizeof row_keys[0]))

/* Sets field k (0-based, of row_keys) of the table below the value on
 * top to that value (popped). */
static void set_row(lua_State *L, int k) {
  lua_pushvalue(L, lua_upvalueindex(k + 1));
  lua_insert(L, -2);
  lua_rawset(L, -3);
}

/* tend.children(ref) -> {{path, ref, name, state, restart, restarts,
 * mailbox, supervisor}, ...} in start order; nil, message for a dead ref */
static int l_children(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_actor *p = tend_check_target(L, 1, "tend.children", "ref", 0);
  if (p == NULL) {
    lua_pushfstring(L, "tend.children: %s is not alive",
                    luaL_tolstring(L, 1, NULL));
    lua_pushnil(L);
    lua_insert(L, -2); /* nil, message */
    return 2;
  }
  lua_newtable(L);
  lua_Integer n = 0;
  for (tend_actor *c = tend_actor_first_child(p); c;
       c = tend_actor_next_sibling(c)) {
    if (tend_actor_state_of(c) == TEND_ACTOR_DEAD) continue;
    lua_createtable(L, 0, ROW_KEYS);
    tend_actor_push_path(L, h, c);
    set_row(L, 0);
    tend_actor_push_ref(L, h, c);
    set_row(L, 1);
    tend_names_push_name(L, h, c);
    set_row(L, 2);
    lua_pushstring(L, tend_actor_state_name(c)); /* as ps() */
    set_row(L, 3);
    lua_pushstring(L, restart_name(c));
    set_row(L, 4);
    lua_pushinteger(L, tend_actor_restarts(c));
    set_row(L, 5);
    lua_pushinteger(L, tend_actor_mailbox_size(c));
    set_row(L, 6);
    lua_pushboolean(L, is_supervisor(c));
    set_row(L, 7);
    lua_rawseti(L, -2, ++n);
  }
  return 1;
}

/* tend.count_children(ref) -> {specs, active, supervisors, workers} (OTP);
 * nil, message for a dead ref */
static int l_count_children(lua_State *L) {
  tend_actor *p = tend_check_target(L, 1, "tend.count_children", "ref", 0);
  if (p == NULL) {
    lua_pushfstring(L, "tend.count_children: %s is not alive",
                    luaL_tolstring(L, 1, NULL));
    lua_pushnil(L);
    lua_insert(L, -2); /* nil, message */
    return 2;
  }
  lua_Integer specs = 0, active = 0, sups = 0;
  for (tend_actor *c = tend_actor_first_child(p); c;
       c = tend_actor_next_sibling(c)) {
    if (tend_actor_state_of(c) == TEND_ACTOR_DEAD) continue;
    specs++;
    if (tend_actor_state_of(c) == TEND_ACTOR_RUNNING ||
        tend_actor_state_of(c) == TEND_ACTOR_STARTING ||
        tend_actor_state_of(c) == TEND_ACTOR_RESTARTING)
      active++;
    if (is_supervisor(c)) sups++;
  }
  lua_createtable(L, 0, 4);
  lua_pushinteger(L, specs);
  lua_setfield(L, -2, "specs");
  lua_pushinteger(L, active);
  lua_setfield(L, -2, "active");
  lua_pushinteger(L, sups);
  lua_setfield(L, -2, "supervisors");
  lua_pushinteger(L, specs - sups);
  lua_setfield(L, -2, "workers");
  return 1;
}

/* tend.start_child(sup, factory [, opts]) -> ref: a new child of sup, as
 * if sup had called ctx:spawn (OTP's start_child) */
static int l_start_child(lua_State *L) {
  tend_actor *p = tend_check_target(L, 1, "tend.start_child", "sup", 1);
  if (tend_actor_is_backoff(p))
    luaL_error(L,
               "tend.start_child: sup: a backoff supervisor has one child, "
               "its own; it takes no other");
  if (tend_actor_is_task(p))
    luaL_error(L, "tend.start_child: sup: a task (%s) supervises no children",
               luaL_tolstring(L, 1, NULL));
  return tend_spawn_under(L, p, 1, "tend.start_child");
}

/* tend.stop_child(sup, ref) -> true, or nil, message when ref is not a
 * live child of sup. The child stops as its supervisor stops it (reason
 * "shutdown", final: a permanent child is not restarted), OTP's
 * terminate_child. */
static int l_stop_child(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_actor *p = tend_check_target(L, 1, "tend.stop_child", "sup", 0);
  tend_actor *c = tend_check_target(L, 2, "tend.stop_child", "ref", 0);
  if (p == NULL || c == NULL || tend_actor_parent(c) != p) {
    lua_pushfstring(L, "tend.stop_child: %s is not a live child of %s",
                    luaL_tolstring(L, 2, NULL), luaL_tolstring(L, 1, NULL));
    lua_pushnil(L);
    lua_insert(L, -2); /* nil, message */
    return 2;
  }
  if (tend_actor_state_of(c) < TEND_ACTOR_STOPPING)
    tend_actor_stop(L, h, c, TEND_STOP_BY_PARENT);
  lua_pushboolean(L, 1);
  return 1;
}

/* core.mailbox_load(ref) -> twice its queued messages, plus 1 when it is
 * not "running" (busy in a message, waiting, restarting, suspended), or
 * nil for a dead ref: tend.pool's smallest_mailbox reads one member at a
 * time with it (tend.children would build a row for each member) */
static int l_mailbox_load(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_actor *a = tend_ref_actor(h, tend_check_ref(L, 1, "tend.pool", "ref"));
  if (a == NULL || tend_actor_state_of(a) == TEND_ACTOR_DEAD) return 0;
  lua_Integer load = tend_actor_mailbox_size(a) * 2;
  if (strcmp(tend_actor_state_name(a), "running") != 0) load++;
  lua_pushinteger(L, load);
  return 1;
}

void tend_open_children(lua_State *L) {
  static const luaL_Reg fns[] = {{"count_children", l_count_children},
                                 {"start_child", l_start_child},
                                 {"stop_child", l_stop_child},
                                 {"mailbox_load", l_mailbox_load},
                                 {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
  for (int k = 0; k < ROW_KEYS; k++) lua_pushstring(L, row_keys[k]);
  lua_pushcclosure(L, l_children, ROW_KEYS);
  lua_setfield(L, -2, "children");
}
