/* names: the registry of names and path lookups (see names.h). */
#include "runtime/supervision/names.h"

#include <lauxlib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char names_key = 0; /* its address keys the registry entry */

/* Pushes the registry: a table {by_name = {}, by_id = {}, sorted = {},
 * added = {}, removed = 0} made on first use; returns its index. sorted
 * is the names as tend.registered listed them last, added the names
 * registered since (unsorted), removed how many went since: a listing
 * with nothing changed copies sorted, one after k changes merges the k
 * (sorted) into it, so it costs n + k log k rather than n log n. */
static int push_registry(lua_State *L) {
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &names_key) == LUA_TNIL) {
    lua_pop(L, 1);
    lua_createtable(L, 0, 5);
    lua_newtable(L);
    lua_setfield(L, -2, "by_name"); /* name -> ctx */
    lua_newtable(L);
    lua_setfield(L, -2, "by_id"); /* actor id -> name */
    lua_newtable(L);
    lua_setfield(L, -2, "sorted");
    lua_newtable(L);
    lua_setfield(L, -2, "added");
    lua_pushinteger(L, 0);
    lua_setfield(L, -2, "removed");
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &names_key);
  }
  return lua_gettop(L);
}

/* The live actor of the ctx at idx, or NULL. */
static tend_actor *live_ctx(lua_State *L, int idx) {
  tend_actor *a = lua_touserdata(L, idx);
  return a && a->state != TEND_ACTOR_DEAD ? a : NULL;
}

/* Notes the name at idx as added since the last listing; past 2 names
 * added a name listed (plus 1024), the listing is dropped instead (stale:
 * the next one sorts every name), so added stays bounded without one. */
static void note_added(lua_State *L, int reg, int idx) {
  if (lua_getfield(L, reg, "stale") != LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  lua_getfield(L, reg, "added");
  lua_getfield(L, reg, "sorted");
  lua_Integer k = (lua_Integer)lua_rawlen(L, -2);
  if (k > 2 * (lua_Integer)lua_rawlen(L, -1) + 1024) {
    lua_pushboolean(L, 1);
    lua_setfield(L, reg, "stale");
    lua_newtable(L);
    lua_setfield(L, reg, "added");
    lua_newtable(L);
    lua_setfield(L, reg, "sorted");
  } else {
    lua_pushvalue(L, idx);
    lua_rawseti(L, -3, k + 1);
  }
  lua_pop(L, 3);
}

void tend_names_register(lua_State *L, tend_host *h, tend_actor *a, int name,
                         const char *fn) {
  name = lua_absindex(L, name);
  int reg = push_registry(L);
  lua_getfield(L, reg, "by_name");
  lua_pushvalue(L, name);
  lua_rawget(L, -2);
  tend_actor *owner = live_ctx(L, -1);
  lua_pop(L, 1);
  if (owner == a) { /* the same name again: nothing changes */
    lua_settop(L, reg - 1);
    return;
  }
  if (owner) {
    tend_actor_push_path(L, h, owner);
    tend_actor_push_path(L, h, a);
    luaL_error(L, "%s: the name '%s' is taken by %s; cannot give it to %s", fn,
               lua_tostring(L, name), lua_tostring(L, -2), lua_tostring(L, -1));
  }
  if (a->flags & TEND_AF_REGISTERED) {
    lua_getfield(L, reg, "by_id");
    lua_rawgeti(L, -1, a->id);
    tend_actor_push_path(L, h, a);
    luaL_error(L,
               "%s: %s is already registered as '%s' (one name per actor; "
               "tend.unregister it first)",
               fn, lua_tostring(L, -1), lua_tostring(L, -2));
  }
  lua_pushvalue(L, name);
  tend_actor_push_ctx(L, h, a);
  lua_rawset(L, -3); /* by_name[name] = ctx */
  lua_getfield(L, reg, "by_id");
  lua_pushvalue(L, name);
  lua_rawseti(L, -2, a->id); /* by_id[id] = name */
  note_added(L, reg, name);
  a->flags |= TEND_AF_REGISTERED;
  lua_settop(L, reg - 1);
}

int tend_names_unregister(lua_State *L, tend_host *h, int name) {
  (void)h;
  name = lua_absindex(L, name);
  int reg = push_registry(L);
  lua_getfield(L, reg, "by_name");
  lua_pushvalue(L, name);
  lua_rawget(L, -2);
  tend_actor *a = live_ctx(L, -1);
  lua_pop(L, 1);
  if (a) {
    lua_pushvalue(L, name);
    lua_pushnil(L);
    lua_rawset(L, -3);
    lua_getfield(L, reg, "by_id");
    lua_pushnil(L);
    lua_rawseti(L, -2, a->id);
    lua_getfield(L, reg, "removed");
    lua_pushinteger(L, lua_tointeger(L, -1) + 1);
    lua_setfield(L, reg, "removed");
    a->flags &= ~TEND_AF_REGISTERED;
  }
  lua_settop(L, reg - 1);
  return a != NULL;
}

void tend_names_forget(lua_State *L, tend_host *h, tend_actor *a) {
  if (!(a->flags & TEND_AF_REGISTERED)) return;
  int reg = push_registry(L);
  lua_getfield(L, reg, "by_id");
  lua_rawgeti(L, -1, a->id);
  tend_names_unregister(L, h, -1);
  lua_settop(L, reg - 1);
}

void tend_names_push_name(lua_State *L, tend_host *h, const tend_actor *a) {
  (void)h;
  if (!(a->flags & TEND_AF_REGISTERED)) {
    lua_pushnil(L);
    return;
  }
  push_registry(L);
  lua_getfield(L, -1, "by_id");
  lua_rawgeti(L, -1, a->id);
  lua_replace(L, -3);
  lua_pop(L, 1);
}

static int by_bytes(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Is the string at idx a name now (in by_name at index by_name)? */
static int is_name(lua_State *L, int by_name, int idx) {
  lua_pushvalue(L, idx);
  int t = lua_rawget(L, by_name);
  lua_pop(L, 1);
  return t != LUA_TNIL;
}

/* Appends the string at the top (popped) to list at index list (n
 * entries), unless it is the list's last already: n + 0 or 1. */
static lua_Integer append_new(lua_State *L, int list, lua_Integer n) {
  if (n > 0) {
    lua_rawgeti(L, list, n);
    int same = lua_rawequal(L, -1, -2);
    lua_pop(L, 1);
    if (same) {
      lua_pop(L, 1);
      return n;
    }
  }
  lua_rawseti(L, list, ++n);
  return n;
}

/* registry.sorted merged with the names added since, both filtered to
 * the names there are now: registry.sorted anew, added emptied. */
static void resort(lua_State *L, int reg) {
  lua_getfield(L, reg, "by_name");
  int by_name = lua_gettop(L);
  lua_getfield(L, reg, "sorted");
  int old = lua_gettop(L);
  lua_getfield(L, reg, "added");
  int added = lua_gettop(L);
  lua_Integer k = (lua_Integer)lua_rawlen(L, added);
  lua_Integer n = (lua_Integer)lua_rawlen(L, old);
  /* the added names sorted with qsort: they stay alive in added */
  const char **v = lua_newuserdatauv(L, (size_t)(k ? k : 1) * sizeof *v, 0);
  for (lua_Integer i = 1; i <= k; i++) {
    lua_rawgeti(L, added, i);
    v[i - 1] = lua_tostring(L, -1);
    lua_pop(L, 1);
  }
  qsort(v, (size_t)k, sizeof *v, by_bytes);
  lua_createtable(L, (int)(n + k), 0);
  int out = lua_gettop(L);
  lua_Integer m = 0, i = 1, j = 0;
  while (i <= n || j < k) {
    if (i <= n) lua_rawgeti(L, old, i);
    if (i <= n && (j == k || strcmp(lua_tostring(L, -1), v[j]) <= 0)) {
      i++;
    } else {
      if (i <= n) lua_pop(L, 1);
      lua_pushstring(L, v[j++]);
    }
    if (is_name(L, by_name, -1))
      m = append_new(L, out, m);
    else
      lua_pop(L, 1);
  }
  lua_setfield(L, reg, "sorted");
  lua_pop(L, 1); /* v */
  lua_newtable(L);
  lua_setfield(L, reg, "added");
  lua_pushinteger(L, 0);
  lua_setfield(L, reg, "removed");
  lua_settop(L, by_name - 1);
}

void tend_names_push_all(lua_State *L, tend_host *h) {
  (void)h;
  int reg = push_registry(L);
  lua_getfield(L, reg, "added");
  lua_getfield(L, reg, "removed");
  if (lua_getfield(L, reg, "stale") != LUA_TNIL) { /* every name, anew */
    lua_newtable(L);
    lua_Integer k = 0;
    lua_getfield(L, reg, "by_name");
    lua_pushnil(L);
    while (lua_next(L, -2)) {
      lua_pop(L, 1);
      lua_pushvalue(L, -1);
      lua_rawseti(L, -4, ++k);
    }
    lua_pop(L, 1);
    lua_setfield(L, reg, "added");
    lua_pushnil(L);
    lua_setfield(L, reg, "stale");
    resort(L, reg);
  } else if (lua_rawlen(L, -3) > 0 || lua_tointeger(L, -2) > 0) {
    resort(L, reg);
  }
  lua_settop(L, reg);
  lua_getfield(L, reg, "sorted");
  lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
  lua_createtable(L, (int)n, 0); /* a copy: the caller may change it */
  for (lua_Integer i = 1; i <= n; i++) {
    lua_rawgeti(L, -2, i);
    lua_rawseti(L, -2, i);
  }
  lua_replace(L, reg);
  lua_pop(L, 1); /* sorted */
}

/* The child of p named "$seq" by its spawn number (an anonymous one),
 * or NULL: a walk of the siblings, comparing numbers. */
static tend_actor *child_by_seq(tend_actor *p, const char *seg, size_t len) {
  if (len < 2 || len > 11 || seg[0] != '$') return NULL;
  uint64_t seq = 0;
  for (size_t i = 1; i < len; i++) {
    if (seg[i] < '0' || seg[i] > '9') return NULL;
    seq = seq * 10 + (uint64_t)(seg[i] - '0');
  }
  for (tend_actor *c = p->first_child; c; c = c->next_sibling)
    if (c->seq == seq && c->state != TEND_ACTOR_DEAD &&
        !(c->flags & TEND_AF_NAMED))
      return c;
  return NULL;
}

/* The live actor at the path (starting with '/'), or NULL. A named
 * actor's path is a key of the host's names table (its record the
 * value): one lookup. Otherwise the path names an anonymous actor
 * ("$seq") or one under it: from the longest prefix that is a guardian
 * or a named actor, each "$seq" segment found among the children. */
static tend_actor *walk(lua_State *L, tend_host *h, int idx) {
  size_t n;
  const char *path = lua_tolstring(L, idx, &n);
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->names_ref);
  int names = lua_gettop(L);
  tend_actor *a = NULL;
  size_t at = n; /* the prefix path[0..at) tried */
  for (;;) {
    if (at == n) /* the whole path: the string given, not made anew */
      lua_pushvalue(L, idx);
    else
      lua_pushlstring(L, path, at);
    if (lua_rawget(L, names) == LUA_TLIGHTUSERDATA) a = lua_touserdata(L, -1);
    lua_pop(L, 1);
    if (a) break;
    if (at == 5 && memcmp(path, "/user", 5) == 0) a = h->user;
    if (at == 7 && memcmp(path, "/system", 7) == 0) a = h->system;
    if (a) break;
    while (at > 0 && path[at - 1] != '/') at--; /* drop the last segment */
    if (at <= 1) break;
    at--;
  }
  lua_settop(L, names - 1);
  while (a && at < n) { /* the rest: anonymous children, one by one */
    if (path[at] != '/') return NULL;
    const char *seg = path + at + 1;
    const char *end = strchr(seg, '/');
    size_t len = end ? (size_t)(end - seg) : strlen(seg);
    if (len == 0 && end == NULL) break; /* a trailing '/' */
    a = child_by_seq(a, seg, len);
    at += 1 + len;
  }
  return a && a->state != TEND_ACTOR_DEAD ? a : NULL;
}

tend_actor *tend_names_lookup(lua_State *L, tend_host *h, int idx) {
  const char *s = lua_tostring(L, idx);
  if (s == NULL) return NULL;
  idx = lua_absindex(L, idx);
  if (s[0] == '/') return walk(L, h, idx);
  push_registry(L);
  lua_getfield(L, -1, "by_name");
  lua_pushvalue(L, idx);
  lua_rawget(L, -2);
  tend_actor *a = lua_isnil(L, -1) ? NULL : live_ctx(L, -1);
  lua_pop(L, 3);
  return a;
}

const tend_driver tend_names_driver = {.name = "names",
                                       .death = tend_names_forget};
