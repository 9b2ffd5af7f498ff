/* error: error values and the message handler (see error.h). */
#include "runtime/core/error.h"

#include <lauxlib.h>
#include <limits.h>
#include <string.h>

#include "runtime/core/errkind.h"
#include "runtime/core/host.h"
#include "runtime/core/ref.h"

const char *const tend_error_kind_names[TEND_ERR_KINDS] = {
#define NAME(id, name, directive, brief) name,
    TEND_ERROR_KIND_MAP(NAME)
#undef NAME
};

/* Does the kind's row say brief (see errkind.h)? */
static int is_brief(const char *kind) {
#define BRIEF(id, name, directive, brief) \
  if ((brief) && strcmp(kind, name) == 0) return 1;
  TEND_ERROR_KIND_MAP(BRIEF)
#undef BRIEF
  return 0;
}

/* Pushes a new error value {kind, message}. */
/* Replaces the message at the top with a new error value {kind, message}
 * (the message set once: the handler's is any string, NUL bytes and all). */
static void error_of_message(lua_State *L, const char *kind) {
  tend_host *h = tend_host_of(L);
  lua_createtable(L, 0, 4);
  lua_pushstring(L, kind);
  lua_setfield(L, -2, "kind");
  lua_insert(L, -2);
  lua_setfield(L, -2, "message");
  if (h->error_mt_ref) /* by its number: no lookup of the name */
    lua_rawgeti(L, LUA_REGISTRYINDEX, h->error_mt_ref);
  else
    luaL_getmetatable(L, TEND_ERROR_MT);
  lua_setmetatable(L, -2);
}

void tend_error_new(lua_State *L, const char *kind, const char *message) {
  lua_pushstring(L, message);
  error_of_message(L, kind);
}

int tend_error_is(lua_State *L, int idx) {
  if (!lua_istable(L, idx) || !lua_getmetatable(L, idx)) return 0;
  luaL_getmetatable(L, TEND_ERROR_MT);
  int same = lua_rawequal(L, -1, -2);
  lua_pop(L, 2);
  return same;
}

/* Pushes a traceback of L1 from `level`, in luaL_traceback's format but
 * naming functions only from their call site: luaL_traceback searches
 * package.loaded for a global name at every level, which made it the cost
 * of a restart. */
/* The number of levels on L1's stack. lua_getstack walks from the top,
 * so counting one by one is quadratic in the depth (minutes for a stack
 * overflow): an exponential, then a binary search, as lauxlib does. */
static int depth(lua_State *L1) {
  lua_Debug ar;
  int lo = 1, hi = 1;
  while (lua_getstack(L1, hi, &ar)) { /* level hi exists */
    lo = hi + 1;
    hi *= 2;
  }
  while (lo < hi) { /* levels < lo exist, level hi does not */
    int m = lo + (hi - lo) / 2;
    if (lua_getstack(L1, m, &ar))
      lo = m + 1;
    else
      hi = m;
  }
  return lo;
}

/* Writes n (>= 0) in decimal at p; returns the end: no printf, no
 * interned string per level. */
static char *put_int(char *p, int n) {
  char digits[12];
  int i = sizeof digits;
  do {
    digits[--i] = (char)('0' + n % 10);
    n /= 10;
  } while (n > 0 && i > 0);
  memcpy(p, digits + i, sizeof digits - (size_t)i);
  return p + sizeof digits - (size_t)i;
}

static char *put(char *p, const char *s, size_t n) {
  memcpy(p, s, n);
  return p + n;
}

#define PUT_LIT(p, lit) put(p, lit, sizeof lit - 1)

/* Room enough for one level's line (put_level). */
static size_t level_room(const lua_Debug *ar) {
  size_t name = *ar->namewhat ? strlen(ar->namewhat) + strlen(ar->name) : 0;
  return 2 * strlen(ar->short_src) + name + 80;
}

/* Writes one level's line at p, "\n\tsrc:line: in what" (luaL_traceback's
 * words); returns the end. */
static char *put_level(char *p, const lua_Debug *ar) {
  size_t src = strlen(ar->short_src);
  p = PUT_LIT(p, "\n\t");
  p = put(p, ar->short_src, src);
  if (ar->currentline > 0) {
    *p++ = ':';
    p = put_int(p, ar->currentline);
  }
  p = PUT_LIT(p, ": in ");
  if (*ar->namewhat != '\0') {
    p = put(p, ar->namewhat, strlen(ar->namewhat));
    p = PUT_LIT(p, " '");
    p = put(p, ar->name, strlen(ar->name));
    *p++ = '\'';
  } else if (*ar->what == 'm') {
    p = PUT_LIT(p, "main chunk");
  } else if (*ar->what != 'C') {
    p = PUT_LIT(p, "function <");
    p = put(p, ar->short_src, src);
    *p++ = ':';
    p = put_int(p, ar->linedefined);
    *p++ = '>';
  } else {
    *p++ = '?';
  }
  return p;
}

static char *put_skip(char *p, int skipped) {
  p = PUT_LIT(p, "\n\t...\t(skipping ");
  p = put_int(p, skipped);
  return PUT_LIT(p, " levels)");
}

void tend_error_add_where(luaL_Buffer *b, lua_State *L, int level) {
  lua_Debug ar;
  if (!lua_getstack(L, level, &ar)) return;
  lua_getinfo(L, "Sl", &ar);
  if (ar.currentline <= 0) return;
  size_t src = strlen(ar.short_src);
  char *p0 = luaL_prepbuffsize(b, src + 16);
  char *p = put(p0, ar.short_src, src);
  *p++ = ':';
  p = put_int(p, ar.currentline);
  p = PUT_LIT(p, ": ");
  luaL_addsize(b, (size_t)(p - p0));
}

/* Pushes the text s[0..n): the host's last one kept in *ref when it is
 * the same text (a child failing the same way again and again makes the
 * same message and traceback: the string, its hash, its allocation and
 * its collection are saved), else a new string, which becomes the last
 * one. */
static void push_text(lua_State *L, int *ref, const char *s, size_t n) {
  if (*ref > 0) {
    size_t m;
    lua_rawgeti(L, LUA_REGISTRYINDEX, *ref);
    const char *last = lua_tolstring(L, -1, &m);
    if (m == n && memcmp(last, s, n) == 0) return;
    lua_pop(L, 1);
  }
  lua_pushlstring(L, s, n);
  lua_pushvalue(L, -1);
  if (*ref > 0)
    lua_rawseti(L, LUA_REGISTRYINDEX, *ref);
  else
    *ref = luaL_ref(L, LUA_REGISTRYINDEX);
}

void tend_error_push_where_msg(lua_State *L, int level, int idx) {
  enum { SMALL = 512 };
  lua_Debug ar;
  size_t n, src;
  const char *msg = lua_tolstring(L, idx, &n);
  if (!lua_getstack(L, level, &ar) || !lua_getinfo(L, "Sl", &ar) ||
      ar.currentline <= 0) {
    lua_pushvalue(L, idx); /* no line: the message as it is */
    return;
  }
  src = strlen(ar.short_src);
  char small[SMALL];
  luaL_Buffer b;
  int big = src + n + 16 > SMALL; /* (16: ':', the line, ": ") */
  char *p0 = big ? luaL_buffinitsize(L, &b, src + n + 16) : small;
  char *p = put(p0, ar.short_src, src);
  *p++ = ':';
  p = put_int(p, ar.currentline);
  p = PUT_LIT(p, ": ");
  p = put(p, msg, n);
  if (big)
    luaL_pushresultsize(&b, (size_t)(p - p0));
  else
    push_text(L, &tend_host_of(L)->where_msg_ref, p0, (size_t)(p - p0));
}

/* The traceback is written a line per level into a C buffer, and into a
 * Lua buffer only past its size (a failure's traceback was most of what a
 * restart costs: pushfstring made and interned a string per piece). */
void tend_traceback(lua_State *L, lua_State *L1, int level) {
  enum { HEAD = 10, TAIL = 11, SMALL = 2048 };
  lua_Debug ar;
  /* levels: level..last-1; a stack too short for the skip is walked
   * until its end (depth's search cost more than the whole walk) */
  int deep = lua_getstack(L1, level + HEAD + TAIL + 1, &ar);
  int last = deep ? depth(L1) : INT_MAX;
  char small[SMALL];
  char *p = PUT_LIT(small, "stack traceback:");
  luaL_Buffer b;
  int big = 0; /* spilled into b */
  for (int i = level; i < last; i++) {
    int skip = deep && i == level + HEAD && last - i > TAIL + 1;
    if (!skip) {
      if (!lua_getstack(L1, i, &ar)) break; /* (a short stack's end) */
      lua_getinfo(L1, "Sln", &ar);
    }
    size_t room = skip ? 64 : level_room(&ar);
    if (!big && room > (size_t)(small + SMALL - p)) {
      big = 1;
      luaL_buffinit(L, &b);
      luaL_addlstring(&b, small, (size_t)(p - small));
    }
    char *q0 = big ? luaL_prepbuffsize(&b, room) : p;
    char *q = skip ? put_skip(q0, last - i - TAIL) : put_level(q0, &ar);
    if (big)
      luaL_addsize(&b, (size_t)(q - q0));
    else
      p = q;
    if (skip) i = last - TAIL - 1;
  }
  if (big)
    luaL_pushresult(&b);
  else
    push_text(L, &tend_host_of(L)->traceback_ref, small, (size_t)(p - small));
}

static int tolstring_p(lua_State *L) {
  luaL_tolstring(L, 1, NULL);
  return 1;
}

/* Pushes words for a raised value that is not an error value, the same in
 * every run: a string as it is; a number or boolean printed; a value with a
 * __tostring that works, its text; anything else by its type (or __name),
 * never by its address. */
static void push_words(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  int t = lua_type(L, idx);
  if (t == LUA_TSTRING || t == LUA_TNUMBER || t == LUA_TBOOLEAN ||
      t == LUA_TNIL || t == LUA_TNONE) {
    if (luaL_getmetafield(L, idx, "__tostring") == LUA_TNIL) {
      luaL_tolstring(L, idx, NULL);
      return;
    }
    lua_pop(L, 1);
  }
  if (luaL_getmetafield(L, idx, "__tostring") != LUA_TNIL) {
    lua_pop(L, 1);
    lua_pushcfunction(L, tolstring_p);
    lua_pushvalue(L, idx);
    if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_type(L, -1) == LUA_TSTRING)
      return;
    lua_pop(L, 1); /* it failed: by its type */
  }
  const char *name = luaL_typename(L, idx);
  int named = luaL_getmetafield(L, idx, "__name"); /* pushed unless nil */
  if (named == LUA_TSTRING) name = lua_tostring(L, -1);
  lua_pushfstring(L, "(error object is a %s value)", name);
  if (named != LUA_TNIL) lua_remove(L, -2);
}

/* Does the string at idx have a __tostring (a script can give strings
 * one)? key: index of the interned "__tostring" (lua_pushstring of a C
 * literal can miss Lua's string cache and hash it again each time). */
static int string_tostring(lua_State *L, int idx, int key) {
  if (!lua_getmetatable(L, idx)) return 0;
  lua_pushvalue(L, key);
  int t = lua_rawget(L, -2);
  lua_pop(L, 2);
  return t != LUA_TNIL;
}

/* The message handler; upvalue 1: "__tostring". */
static int error_handler(lua_State *L) {
  if (tend_error_is(L, 1)) {
    if (lua_getfield(L, 1, "traceback") == LUA_TNIL) {
      tend_traceback(L, L, 1);
      lua_setfield(L, 1, "traceback");
    }
    lua_settop(L, 1);
    return 1;
  }
  if (lua_type(L, 1) == LUA_TSTRING &&
      !string_tostring(L, 1, lua_upvalueindex(1)))
    lua_pushvalue(L, 1); /* error("..."): the message as it is */
  else
    push_words(L, 1);
  error_of_message(L, TEND_ERR_NAME(ERROR));
  if (lua_type(L, 1) != LUA_TSTRING) {
    lua_pushvalue(L, 1);
    lua_setfield(L, -2, "value"); /* keep what was raised */
  }
  tend_traceback(L, L, 1);
  lua_setfield(L, -2, "traceback");
  return 1;
}

void tend_error_push_handler(lua_State *L) {
  lua_pushliteral(L, "__tostring");
  lua_pushcclosure(L, error_handler, 1);
}

/* The string at the top, with each NUL byte written as \0 (replaced):
 * C code prints it with %s, which would stop at the first NUL. */
static void escape_nul(lua_State *L) {
  size_t n;
  const char *s = lua_tolstring(L, -1, &n);
  if (memchr(s, '\0', n) == NULL) return;
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '\0')
      luaL_addstring(&b, "\\0");
    else
      luaL_addchar(&b, s[i]);
  }
  luaL_pushresult(&b);
  lua_replace(L, -2);
}

void tend_error_describe(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  if (tend_error_is(L, idx)) {
    lua_getfield(L, idx, "where");
    lua_getfield(L, idx, "kind");
    lua_getfield(L, idx, "message");
    lua_pushfstring(L, "%s%s: ", luaL_optstring(L, -3, ""),
                    luaL_optstring(L, -2, TEND_ERR_NAME(ERROR)));
    lua_pushvalue(L, -2);
    if (!lua_isstring(L, -1)) {
      lua_pop(L, 1);
      lua_pushliteral(L, "");
    }
    lua_concat(L, 2); /* the message keeps its NUL bytes */
    lua_replace(L, -4);
    lua_pop(L, 2);
  } else {
    push_words(L, idx);
  }
  escape_nul(L);
}

int tend_error_push_brief(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  if (!tend_error_is(L, idx)) return 0;
  lua_getfield(L, idx, "kind");
  const char *kind = lua_tostring(L, -1);
  int brief = kind && is_brief(kind);
  lua_pop(L, 1);
  if (!brief) return 0;
  int top = lua_gettop(L);
  const char *at = "";
  size_t at_len = 0;
  if (lua_getfield(L, idx, "where") == LUA_TNIL &&
      lua_getfield(L, idx, "traceback") == LUA_TSTRING) {
    /* the first "\n\tsrc:line: in ..." that is not tend's or C's */
    const char *line = lua_tostring(L, -1);
    while ((line = strstr(line, "\n\t")) != NULL) {
      line += 2;
      const char *end = strstr(line, ": in ");
      if (end == NULL) break;
      if (strncmp(line, "[C]", 3) != 0 && strncmp(line, "[tend]", 6) != 0 &&
          strncmp(line, "[string ", 8) != 0) { /* (a wrapper of main.c) */
        at = line;
        at_len = (size_t)(end - line) + 2; /* with ": " */
        break;
      }
    }
  }
  lua_pushlstring(L, at, at_len); /* (the traceback stays below it) */
  tend_error_describe(L, idx);
  lua_concat(L, 2);
  lua_replace(L, top + 1);
  lua_settop(L, top + 1);
  return 1;
}

void tend_error_wrap(lua_State *L, int idx, const char *kind,
                     const char *prefix) {
  idx = lua_absindex(L, idx);
  tend_error_describe(L, idx);
  lua_pushfstring(L, "%s: %s", prefix, lua_tostring(L, -1));
  tend_error_new(L, kind, lua_tostring(L, -1));
  lua_replace(L, -3);
  lua_pop(L, 1);
  lua_pushvalue(L, idx);
  lua_setfield(L, -2, "cause");
  if (lua_istable(L, idx)) {
    lua_getfield(L, idx, "traceback");
    lua_setfield(L, -2, "traceback");
  }
}

int tend_error_interrupted(lua_State *L) {
  tend_error_new(L, TEND_ERR_NAME(INTERRUPTED), "interrupted (Ctrl-C)");
  return lua_error(L);
}

const char *tend_typename(lua_State *L, int idx) {
  if (tend_ref_test(L, idx)) return "an actor ref";
  switch (lua_type(L, idx)) {
    case LUA_TNONE:
    case LUA_TNIL: return "nil";
    case LUA_TNUMBER: return lua_isinteger(L, idx) ? "an integer" : "a number";
    case LUA_TBOOLEAN: return "a boolean";
    case LUA_TSTRING: return "a string";
    case LUA_TTABLE: return "a table";
    case LUA_TFUNCTION: return "a function";
    case LUA_TTHREAD: return "a coroutine";
    default: return "a userdata";
  }
}
