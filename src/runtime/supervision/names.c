/* names: the registry of names and path lookups (see names.h). */
#include "runtime/supervision/names.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

static const char names_key = 0; /* its address keys the registry entry */

/* Pushes the registry: a table {by_name = {}, by_id = {}} made on first
 * use; returns its index. */
static int push_registry(lua_State *L) {
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &names_key) == LUA_TNIL) {
    lua_pop(L, 1);
    lua_createtable(L, 0, 2);
    lua_newtable(L);
    lua_setfield(L, -2, "by_name"); /* name -> ctx */
    lua_newtable(L);
    lua_setfield(L, -2, "by_id"); /* actor id -> name */
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

void tend_names_push_all(lua_State *L, tend_host *h) {
  (void)h;
  int reg = push_registry(L);
  lua_newtable(L);
  int list = lua_gettop(L);
  lua_getfield(L, reg, "by_name");
  lua_Integer n = 0;
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    lua_pop(L, 1);
    lua_pushvalue(L, -1);
    lua_rawseti(L, list, ++n);
  }
  lua_pop(L, 1);
  /* sorted with qsort (no Lua call): the strings stay alive in list */
  const char **v = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof *v, 0);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_rawgeti(L, list, i);
    v[i - 1] = lua_tostring(L, -1);
    lua_pop(L, 1);
  }
  qsort(v, (size_t)n, sizeof *v, by_bytes);
  lua_createtable(L, (int)n, 0);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_pushstring(L, v[i - 1]);
    lua_rawseti(L, -2, i);
  }
  lua_replace(L, list);
  lua_pop(L, 1); /* v */
  lua_replace(L, reg);
}

/* The child of p whose last path segment is seg (len bytes), or NULL. */
static tend_actor *child_named(lua_State *L, tend_host *h, tend_actor *p,
                               const char *seg, size_t len) {
  for (tend_actor *c = p->first_child; c; c = c->next_sibling) {
    if (c->state == TEND_ACTOR_DEAD) continue;
    tend_actor_push_path(L, h, c);
    const char *path = lua_tostring(L, -1);
    const char *last = strrchr(path, '/');
    int same =
        last && strlen(last + 1) == len && memcmp(last + 1, seg, len) == 0;
    lua_pop(L, 1);
    if (same) return c;
  }
  return NULL;
}

/* The live actor at the path (starting with '/'), or NULL. */
static tend_actor *walk(lua_State *L, tend_host *h, const char *path) {
  tend_actor *a = NULL;
  const char *p = path + 1;
  while (*p) {
    const char *end = strchr(p, '/');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (a == NULL) {
      if (len == 4 && memcmp(p, "user", 4) == 0)
        a = h->user;
      else if (len == 6 && memcmp(p, "system", 6) == 0)
        a = h->system;
      if (a == NULL) return NULL;
    } else {
      a = child_named(L, h, a, p, len);
      if (a == NULL) return NULL;
    }
    if (end == NULL) break;
    p = end + 1;
  }
  return a && a->state != TEND_ACTOR_DEAD ? a : NULL;
}

tend_actor *tend_names_lookup(lua_State *L, tend_host *h, int idx) {
  const char *s = lua_tostring(L, idx);
  if (s == NULL) return NULL;
  if (s[0] == '/') return walk(L, h, s);
  idx = lua_absindex(L, idx);
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
