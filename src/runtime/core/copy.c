/* copy: deep copies of messages (see copy.h). The copy is iterative (a
 * work list, not recursion), so a deeply nested message cannot overflow
 * the C stack; only when something cannot be copied is its place looked
 * for, by a second, bounded search. */
#include "runtime/core/copy.h"

#include <lauxlib.h>
#include <string.h>

#include "runtime/core/error.h"
#include "runtime/core/ref.h"

#define PATH_DEPTH 64    /* levels the search for a bad value's place walks */
#define SCRATCH_MAX 4096 /* work-list entries kept for the next copy */

/* Is the value at idx a handle of an outside thing (a socket, a listener,
 * a process, real or simulated: its metatable has __tend_handle = true)?
 * A handle is an identity, as a ref is: it goes as it is. */
static int handle(lua_State *L, int idx) {
  if (!lua_getmetatable(L, idx)) return 0;
  int yes = lua_getfield(L, -1, "__tend_handle") == LUA_TBOOLEAN &&
            lua_toboolean(L, -1);
  lua_pop(L, 2);
  return yes;
}

/* Values that travel as they are: immutable or identities. */
static int kept(lua_State *L, tend_host *h, int idx) {
  switch (lua_type(L, idx)) {
    case LUA_TTABLE: {
      if (!lua_getmetatable(L, idx)) return 0; /* a plain table: copied */
      lua_pop(L, 1);
      if (tend_error_is(L, idx) || handle(L, idx)) return 1;
      int sentinel = 0;
      for (int s = TEND_SENTINEL_STOPPED; s <= TEND_SENTINEL_UNHANDLED; s++) {
        tend_push_sentinel(L, h, (tend_sentinel)s);
        sentinel |= lua_rawequal(L, idx, -1);
        lua_pop(L, 1);
      }
      return sentinel;
    }
    case LUA_TUSERDATA: return tend_ref_test(L, idx) != NULL || handle(L, idx);
    case LUA_TFUNCTION:
    case LUA_TTHREAD:
    case LUA_TLIGHTUSERDATA: return 0;
    default: return 1;
  }
}

/* Pushes the copy of the value at idx: itself when kept, the copy already
 * made of that table (seen: original -> copy), or a new empty table that
 * the work list (work: original, copy, original, copy, ...) will fill.
 * Returns 0, or -1 (nothing pushed) when it cannot be copied. */
static int copy_one(lua_State *L, tend_host *h, int idx, int seen, int work) {
  if (kept(L, h, idx)) {
    lua_pushvalue(L, idx);
    return 0;
  }
  if (!lua_istable(L, idx)) return -1;
  lua_pushvalue(L, idx);
  if (lua_rawget(L, seen) != LUA_TNIL) return 0;
  lua_pop(L, 1);
  lua_createtable(L, (int)lua_rawlen(L, idx), 0);
  lua_pushvalue(L, idx);
  lua_pushvalue(L, -2);
  lua_rawset(L, seen); /* seen[original] = copy */
  lua_Integer n = (lua_Integer)lua_rawlen(L, work);
  lua_pushvalue(L, idx);
  lua_rawseti(L, work, n + 1);
  lua_pushvalue(L, -1);
  lua_rawseti(L, work, n + 2);
  return 0;
}

/* Pushes how the key at idx is written after a path: .name, [3], ["a b"]. */
static void push_key(lua_State *L, int idx) {
  if (lua_type(L, idx) == LUA_TSTRING) {
    const char *s = lua_tostring(L, idx);
    int ident = s[0] == '_' || ((s[0] | 32) >= 'a' && (s[0] | 32) <= 'z');
    for (const char *p = s; ident && *p; p++)
      ident = *p == '_' || ((*p | 32) >= 'a' && (*p | 32) <= 'z') ||
              (*p >= '0' && *p <= '9');
    lua_pushfstring(L, ident ? ".%s" : "[\"%s\"]", s);
  } else if (lua_type(L, idx) == LUA_TNUMBER ||
             lua_type(L, idx) == LUA_TBOOLEAN) {
    luaL_tolstring(L, idx, NULL); /* a new string: the key stays a key */
    lua_pushfstring(L, "[%s]", lua_tostring(L, -1));
    lua_remove(L, -2);
  } else {
    lua_pushfstring(L, "[%s]", tend_typename(L, idx));
  }
}

/* Depth-first search of the table at t for the first value (or key) that
 * cannot be copied. On a hit, pushes its place below t (".a[2]", or
 * " (a key)") and what it is ("a function") and returns 1; else pushes
 * nothing and returns 0. visited: the tables seen. */
static int find_bad(lua_State *L, tend_host *h, int t, int visited, int depth) {
  if (depth > PATH_DEPTH || !lua_checkstack(L, 8)) return 0;
  int top = lua_gettop(L);
  lua_pushvalue(L, t);
  lua_pushboolean(L, 1);
  lua_rawset(L, visited);
  lua_pushnil(L);
  while (lua_next(L, t)) { /* k at top + 1, v at top + 2 */
    for (int at = top + 1; at <= top + 2; at++) {
      int key = at == top + 1;
      if (kept(L, h, at)) continue;
      if (!lua_istable(L, at)) { /* found: [k v place what] */
        if (key)
          lua_pushliteral(L, " (a key)");
        else
          push_key(L, top + 1);
        lua_pushstring(L, tend_typename(L, at));
      } else {
        lua_pushvalue(L, at);
        int seen = lua_rawget(L, visited) != LUA_TNIL;
        lua_pop(L, 1);
        if (seen || !find_bad(L, h, at, visited, depth + 1)) continue;
        /* [k v place' what]: the place goes under this key */
        if (key) {
          lua_pushfstring(L, "%s (in a key)", lua_tostring(L, -2));
        } else {
          push_key(L, top + 1);
          lua_pushvalue(L, -3);
          lua_concat(L, 2);
        }
        lua_replace(L, -3);
      }
      lua_copy(L, -2, top + 1);
      lua_copy(L, -1, top + 2);
      lua_settop(L, top + 2);
      return 1;
    }
    lua_pop(L, 1);
  }
  return 0;
}

/* Pushes the tables a copy works with (seen, work): the host's, kept
 * between copies so that a message costs no allocation of them, unless a
 * copy is already under way (a __gc that sends during one). */
static void push_scratch(lua_State *L, tend_host *h) {
  if (h->copy_busy) {
    lua_newtable(L);
    lua_newtable(L);
    return;
  }
  if (h->copy_scratch_ref <= 0) {
    lua_createtable(L, 2, 0);
    lua_newtable(L);
    lua_rawseti(L, -2, 1);
    lua_newtable(L);
    lua_rawseti(L, -2, 2);
    h->copy_scratch_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  }
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->copy_scratch_ref);
  lua_rawgeti(L, -1, 1);
  lua_rawgeti(L, -2, 2);
  lua_remove(L, -3);
}

/* Empties seen and work (the originals in work are seen's keys). */
static void clear_scratch(lua_State *L, int seen, int work) {
  lua_Integer n = (lua_Integer)lua_rawlen(L, work);
  for (lua_Integer i = 1; i <= n; i += 2) {
    lua_rawgeti(L, work, i);
    lua_pushnil(L);
    lua_rawset(L, seen);
  }
  for (lua_Integer i = n; i >= 1; i--) {
    lua_pushnil(L);
    lua_rawseti(L, work, i);
  }
}

int tend_copy_push(lua_State *L, tend_host *h, int idx) {
  idx = lua_absindex(L, idx);
  int top = lua_gettop(L);
  luaL_checkstack(L, 16, "copying a message");
  push_scratch(L, h); /* top + 1: seen, top + 2: work */
  int seen = top + 1, work = top + 2, busy = h->copy_busy;
  h->copy_busy = 1;
  int bad = copy_one(L, h, idx, seen, work); /* top + 3: the copy */
  for (lua_Integer i = 1; bad == 0 && i < (lua_Integer)lua_rawlen(L, work);
       i += 2) {
    lua_rawgeti(L, work, i);     /* original */
    lua_rawgeti(L, work, i + 1); /* its copy */
    int orig = lua_gettop(L) - 1, copy = orig + 1;
    lua_pushnil(L);
    while (bad == 0 && lua_next(L, orig)) {
      int k = lua_gettop(L) - 1;
      if (copy_one(L, h, k, seen, work) != 0 ||
          copy_one(L, h, k + 1, seen, work) != 0) {
        bad = -1;
        break;
      }
      lua_rawset(L, copy); /* copy[copy of k] = copy of v */
      lua_pop(L, 1);       /* the value; the key stays for lua_next */
    }
    if (bad == 0 && lua_getmetatable(L, orig)) lua_setmetatable(L, copy);
    lua_settop(L, top + 3);
  }
  if (bad == 0) lua_settop(L, top + 3);
  if (!busy && lua_rawlen(L, work) > SCRATCH_MAX) { /* let big ones go */
    luaL_unref(L, LUA_REGISTRYINDEX, h->copy_scratch_ref);
    h->copy_scratch_ref = 0;
  } else {
    clear_scratch(L, seen, work);
  }
  h->copy_busy = busy;
  if (bad == 0) {
    lua_replace(L, top + 1); /* leave only the copy */
    lua_settop(L, top + 1);
    return 0;
  }
  lua_settop(L, top);
  /* where: a second search, bounded, from the message itself */
  const char *what;
  if (!lua_istable(L, idx)) {
    lua_pushliteral(L, "");
    lua_pushstring(L, tend_typename(L, idx));
  } else {
    lua_newtable(L);
    if (!find_bad(L, h, idx, lua_gettop(L), 0)) {
      lua_settop(L, top);
      lua_pushliteral(L, " (deeper than 64 levels)");
      lua_pushliteral(L, "a value that cannot be copied");
    }
  }
  what = lua_tostring(L, -1);
  lua_pushfstring(L, "%s at message%s", what, lua_tostring(L, -2));
  lua_replace(L, top + 1);
  lua_settop(L, top + 1);
  return -1;
}

void tend_copy_in_place(lua_State *L, tend_host *h, int idx,
                        const char *prefix) {
  idx = lua_absindex(L, idx);
  if (tend_copy_push(L, h, idx) == 0) {
    lua_replace(L, idx);
    return;
  }
  lua_pushfstring(L,
                  "%s--copy-messages: cannot copy %s (a copied message "
                  "holds nil, booleans, numbers, strings, tables, refs and "
                  "error values)",
                  prefix, lua_tostring(L, -1));
  tend_error_new(L, TEND_ERR_NAME(NOT_COPYABLE), lua_tostring(L, -1));
  luaL_where(L, 1);
  lua_setfield(L, -2, "where");
  lua_error(L);
}
