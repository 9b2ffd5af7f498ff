/* options: option tables parsed from data (see api.h, options.c). A row
 * says what its option must be and where its value goes; one loop reads
 * them all, so each parser is its table of rows plus the checks between
 * options that no row can say. */
#include <math.h>
#include <string.h>

#include "api/api.h"

int tend_opt_bad(lua_State *L, const char *fn, const char *opt,
                 const tend_opt *row, int idx) {
  return tend_bad_option(L, fn, opt, row->expected, idx);
}

/* Pushes prefix .. row->name (kept until the error is raised). */
static const char *opt_name(lua_State *L, const char *prefix,
                            const tend_opt *row) {
  if (*prefix == '\0') return row->name;
  return lua_pushfstring(L, "%s%s", prefix, row->name);
}

static int in_range(lua_Number v, const tend_opt *row) {
  return v >= row->min && v <= row->max; /* NaN: no */
}

/* Checks the value at the top for row and stores it at field (a TABLE's
 * options store into out, as the table's own rows). */
static void take(lua_State *L, const tend_opt *row, const char *fn,
                 const char *prefix, void *field, void *out) {
  int v = lua_gettop(L);
  switch (row->type) {
    case TEND_OPT_U32:
    case TEND_OPT_I64: {
      if (!lua_isinteger(L, v) ||
          !in_range((lua_Number)lua_tointeger(L, v), row))
        tend_opt_bad(L, fn, opt_name(L, prefix, row), row, v);
      if (field && row->type == TEND_OPT_U32)
        *(uint32_t *)field = (uint32_t)lua_tointeger(L, v);
      else if (field)
        *(int64_t *)field = (int64_t)lua_tointeger(L, v);
      break;
    }
    case TEND_OPT_BOOL:
      if (!lua_isboolean(L, v))
        tend_opt_bad(L, fn, opt_name(L, prefix, row), row, v);
      if (field) *(int *)field = lua_toboolean(L, v);
      break;
    case TEND_OPT_NAME: {
      int i = lua_type(L, v) == LUA_TSTRING
                  ? tend_find_name(row->names, lua_tostring(L, v))
                  : -1;
      if (i < 0) tend_opt_bad(L, fn, opt_name(L, prefix, row), row, v);
      if (field) *(int *)field = row->values ? row->values[i] : i;
      break;
    }
    case TEND_OPT_NUMBER: {
      lua_Number x = lua_type(L, v) == LUA_TNUMBER ? lua_tonumber(L, v) : NAN;
      if (!in_range(x, row))
        tend_opt_bad(L, fn, opt_name(L, prefix, row), row, v);
      if (field) *(double *)field = x;
      break;
    }
    case TEND_OPT_TABLE:
      if (!lua_istable(L, v))
        tend_opt_bad(L, fn, opt_name(L, prefix, row), row, v);
      if (row->sub) {
        lua_pushfstring(L, "%s%s.", prefix, row->name);
        tend_check_keys(L, v, row->keys, fn, lua_tostring(L, -1));
        tend_opts_parse(L, v, row->sub, fn, lua_tostring(L, -1), out);
        lua_settop(L, v);
      }
      break;
    case TEND_OPT_FUNCTION:
      if (!lua_isfunction(L, v))
        tend_opt_bad(L, fn, opt_name(L, prefix, row), row, v);
      break;
    case TEND_OPT_CHECK:
      row->check(L, v, fn, opt_name(L, prefix, row), row, out);
      lua_settop(L, v);
      break;
  }
}

void tend_opts_parse(lua_State *L, int t, const tend_opt *rows, const char *fn,
                     const char *prefix, void *out) {
  t = lua_absindex(L, t);
  for (const tend_opt *row = rows; row->name; row++) {
    luaL_checkstack(L, 4, "options"); /* the kept values and a name */
    void *field = row->at ? (char *)out + row->at - 1 : NULL;
    if (lua_getfield(L, t, row->name) == LUA_TNIL) {
      int v = lua_gettop(L);
      if (row->flags & TEND_OPT_REQUIRED)
        tend_opt_bad(L, fn, opt_name(L, prefix, row), row, v);
      lua_pop(L, 1);
      continue;
    }
    if (row->flags & TEND_OPT_KEEP) {
      take(L, row, fn, prefix, NULL, out);
      if (field) *(int *)field = lua_gettop(L);
    } else {
      take(L, row, fn, prefix, field, out);
      lua_pop(L, 1);
    }
  }
}

void tend_opt_actor_name(lua_State *L, int idx, const char *fn, const char *opt,
                         const tend_opt *row, void *out) {
  (void)row, (void)out;
  tend_check_actor_name(L, idx, fn, opt);
}
