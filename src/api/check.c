/* check: the checks the API files share: arguments (refs, seconds) and
 * options (unknown keys, names in a list, spawn options), each raising an
 * error that names the function, the option, what was expected and what
 * was given (design §7), before anything is created. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "api/api.h"

tend_ref *tend_check_ref(lua_State *L, int idx, const char *fn,
                         const char *arg) {
  tend_ref *r = tend_ref_test(L, idx);
  if (r == NULL)
    luaL_error(L, "%s: %s: expected an actor ref, got %s", fn, arg,
               tend_typename(L, idx));
  return r;
}

double tend_check_seconds(lua_State *L, int idx, const char *fn,
                          const char *arg, int positive) {
  if (lua_type(L, idx) != LUA_TNUMBER)
    luaL_error(L, "%s: %s: expected a number of seconds, got %s", fn, arg,
               tend_typename(L, idx));
  double s = lua_tonumber(L, idx);
  if (isnan(s) || s < 0 || (positive && s == 0))
    luaL_error(L, "%s: %s: expected a number of seconds %s, got %s", fn, arg,
               positive ? "> 0" : ">= 0", lua_tostring(L, idx));
  if (s > TEND_MAX_SECONDS && !isinf(s))
    luaL_error(L,
               "%s: %s: expected a number of seconds <= 1e9 (or math.huge), "
               "got %s",
               fn, arg, lua_tostring(L, idx));
  return s;
}

int tend_bad_option(lua_State *L, const char *fn, const char *opt,
                    const char *expected, int idx) {
  if (lua_type(L, idx) == LUA_TNUMBER || lua_type(L, idx) == LUA_TSTRING)
    return luaL_error(L, "%s: option '%s': expected %s, got %s (%s)", fn, opt,
                      expected, lua_tostring(L, idx), luaL_typename(L, idx));
  return luaL_error(L, "%s: option '%s': expected %s, got %s", fn, opt,
                    expected, tend_typename(L, idx));
}

void tend_push_quoted(lua_State *L, const char *s, size_t len) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addchar(&b, '"');
  for (size_t i = 0; i < len && i < 80; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') {
      luaL_addchar(&b, '\\');
      luaL_addchar(&b, (char)c);
    } else if (c < 32 || c == 127) {
      char esc[8]; /* three digits when a digit follows, as %q */
      int digit = i + 1 < len && s[i + 1] >= '0' && s[i + 1] <= '9';
      snprintf(esc, sizeof esc, digit ? "\\%03d" : "\\%d", c);
      luaL_addstring(&b, esc);
    } else {
      luaL_addchar(&b, (char)c);
    }
  }
  luaL_addstring(&b, len > 80 ? "\"..." : "\"");
  luaL_pushresult(&b);
}

const char *tend_check_no_nul(lua_State *L, int idx, const char *fn,
                              const char *what) {
  size_t len;
  const char *s = lua_tolstring(L, idx, &len);
  if (s == NULL || strlen(s) == len) return s;
  tend_push_quoted(L, s, len);
  luaL_error(L, "%s: %s: expected a string without NUL bytes, got %s", fn, what,
             lua_tostring(L, -1));
  return NULL;
}

int tend_find_name(const char *const *list, const char *s) {
  for (int i = 0; list[i]; i++)
    if (strcmp(list[i], s) == 0) return i;
  return -1;
}

/* Edits (insert, delete, change, swap two neighbours) from a to b, as the
 * REPL's "did you mean" counts them (lua/tend/help.lua); 3 for anything
 * farther than 2 or longer than 32 bytes. */
static int distance(const char *a, const char *b) {
  size_t m = strlen(a), n = strlen(b);
  if (m > 32 || n > 32 || (m > n ? m - n : n - m) > 2) return 3;
  int d[33][33];
  for (size_t i = 0; i <= m; i++) d[i][0] = (int)i;
  for (size_t j = 0; j <= n; j++) d[0][j] = (int)j;
  for (size_t i = 1; i <= m; i++)
    for (size_t j = 1; j <= n; j++) {
      int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
          d[i - 2][j - 2] + 1 < best)
        best = d[i - 2][j - 2] + 1;
      d[i][j] = best;
    }
  return d[m][n] < 3 ? d[m][n] : 3;
}

/* The key closest to name (at most 2 edits, 1 for names of 3 bytes or
 * fewer; the first in the list on a tie), or NULL. */
static const char *closest(const char *const *keys, const char *name) {
  const char *best = NULL;
  int best_d = strlen(name) <= 3 ? 2 : 3; /* must be below this */
  for (int i = 0; keys[i]; i++) {
    int d = distance(name, keys[i]);
    if (d < best_d) {
      best = keys[i];
      best_d = d;
    }
  }
  return best;
}

void tend_push_unknown_option(lua_State *L, int k, const char *const *keys,
                              const char *fn, const char *prefix) {
  k = lua_absindex(L, k);
  const char *key = luaL_tolstring(L, k, NULL);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int i = 0; keys[i]; i++) {
    if (i) luaL_addstring(&b, ", ");
    luaL_addstring(&b, keys[i]);
  }
  luaL_pushresult(&b);
  const char *guess = lua_type(L, k) == LUA_TSTRING ? closest(keys, key) : NULL;
  lua_pushfstring(L, "%s: unknown option '%s%s' (expected one of: %s)%s%s%s%s",
                  fn, prefix, key, lua_tostring(L, -1),
                  guess ? ": did you mean '" : "", guess ? prefix : "",
                  guess ? guess : "", guess ? "'?" : "");
  lua_replace(L, -3);
  lua_pop(L, 1);
}

void tend_check_keys(lua_State *L, int t, const char *const *keys,
                     const char *fn, const char *prefix) {
  t = lua_absindex(L, t);
  lua_pushnil(L);
  while (lua_next(L, t)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) == LUA_TSTRING &&
        tend_find_name(keys, lua_tostring(L, -1)) >= 0)
      continue;
    tend_push_unknown_option(L, -1, keys, fn, prefix);
    luaL_error(L, "%s", lua_tostring(L, -1));
  }
}

void tend_add_seconds(luaL_Buffer *b, lua_State *L, int64_t ns) {
  (void)L;
  char num[64]; /* Lua's number format: "60", "1.5" */
  snprintf(num, sizeof num, "%.14g", (double)ns / 1e9);
  luaL_addstring(b, num);
}

void tend_check_actor_name(lua_State *L, int idx, const char *fn,
                           const char *opt) {
  size_t len = 0;
  const char *name =
      lua_type(L, idx) == LUA_TSTRING ? lua_tolstring(L, idx, &len) : NULL;
  if (name && len > 0 && len <= 255 && strlen(name) == len &&
      !strchr(name, '/') && name[0] != '$' && strcmp(name, ".") != 0 &&
      strcmp(name, "..") != 0)
    return;
  const char *expected =
      "a name of 1-255 bytes without '/' or NUL, not starting with '$', "
      "not \".\" or \"..\" (a step of the actor's path)";
  if (name == NULL) tend_bad_option(L, fn, opt, expected, idx);
  tend_push_quoted(L, name, len);
  luaL_error(L, "%s: option '%s': expected %s, got %s", fn, opt, expected,
             lua_tostring(L, -1));
}

static const char *const spawn_keys[] = {
    "name",     "args",      "mailbox",    "shutdown",
    "children", "restart",   "supervisor", "max_message_time",
    "stash",    "scheduler", NULL};
static const char *const mailbox_keys[] = {"capacity", "overflow", NULL};
static const char *const overflow_names[] = {"drop_new", "drop_old", "fail",
                                             NULL};
static const char *const restart_names[] = {"permanent", "transient",
                                            "temporary", NULL};

static int64_t check_duration(lua_State *L, int idx, const char *fn,
                              const char *opt, int allow_huge) {
  if (lua_type(L, idx) != LUA_TNUMBER)
    tend_bad_option(L, fn, opt, "a number of seconds >= 0", idx);
  double s = lua_tonumber(L, idx);
  if (!(s >= 0) || (isinf(s) && !allow_huge))
    tend_bad_option(L, fn, opt, "a number of seconds >= 0", idx);
  if (s > TEND_MAX_SECONDS && !isinf(s))
    tend_bad_option(L, fn, opt, "a number of seconds <= 1e9 (or math.huge)",
                    idx);
  return isinf(s) ? INT64_MAX : tend_clock_ns(s);
}

/* shutdown: seconds >= 0; math.huge: never killed */
static void check_shutdown(lua_State *L, int idx, const char *fn,
                           const char *opt, const tend_opt *row, void *out) {
  *TEND_OPT_FIELD(int64_t, row, out) = check_duration(L, idx, fn, opt, 1);
}

/* max_message_time: seconds > 0, at least 1 ns */
static void check_budget(lua_State *L, int idx, const char *fn, const char *opt,
                         const tend_opt *row, void *out) {
  if (lua_type(L, idx) != LUA_TNUMBER || !(lua_tonumber(L, idx) > 0))
    tend_bad_option(L, fn, opt, "a number of seconds > 0", idx);
  if (!(lua_tonumber(L, idx) <= TEND_MAX_SECONDS))
    tend_bad_option(L, fn, opt, "a number of seconds <= 1e9", idx);
  int64_t ns = tend_clock_ns(lua_tonumber(L, idx));
  *TEND_OPT_FIELD(int64_t, row, out) = ns ? ns : 1;
}

/* scheduler: an index of the process's schedulers, or "spread" */
static void check_scheduler(lua_State *L, int idx, const char *fn,
                            const char *opt, const tend_opt *row, void *out) {
  int n = tend_schedulers_count(tend_host_of(L));
  int *k = TEND_OPT_FIELD(int, row, out);
  if (lua_type(L, idx) == LUA_TSTRING &&
      strcmp(lua_tostring(L, idx), "spread") == 0) {
    *k = TEND_SCHED_SPREAD;
    return;
  }
  if (!lua_isinteger(L, idx) || lua_tointeger(L, idx) < 0 ||
      lua_tointeger(L, idx) >= n) {
    char want[96];
    snprintf(want, sizeof want,
             "a scheduler 0..%d (--schedulers %d) or \"spread\"", n - 1, n);
    tend_bad_option(L, fn, opt, want, idx);
  }
  *k = (int)lua_tointeger(L, idx);
}

/* TEND_OPT_NAME stores an int: the enums it fills must be that size. */
_Static_assert(sizeof(tend_overflow) == sizeof(int), "an int-sized enum");
_Static_assert(sizeof(tend_restart_type) == sizeof(int), "an int-sized enum");
static const int restart_values[] = {TEND_PERMANENT, TEND_TRANSIENT,
                                     TEND_TEMPORARY}; /* restart_names' */

#define AT(field) TEND_OPT_AT(tend_spawn_opts, field)
static const tend_opt mailbox_opts[] = {
    {"capacity", TEND_OPT_U32, "an integer >= 1", .min = 1, .max = UINT32_MAX,
     .at = AT(capacity)},
    {"overflow", TEND_OPT_NAME, "\"drop_new\", \"drop_old\" or \"fail\"",
     .names = overflow_names, .at = AT(overflow)},
    {NULL}};
/* In the order they are checked (children and supervisor: after them). */
static const tend_opt spawn_opts[] = {
    {"name", TEND_OPT_CHECK, NULL, TEND_OPT_KEEP, .check = tend_opt_actor_name,
     .at = AT(name)}, /* stays on the stack for the caller */
    {"args", TEND_OPT_TABLE, "a table (list)", TEND_OPT_KEEP, .at = AT(args)},
    {"mailbox", TEND_OPT_TABLE, "a table {capacity=N, overflow=...}",
     .sub = mailbox_opts, .keys = mailbox_keys},
    {"shutdown", TEND_OPT_CHECK, .check = check_shutdown,
     .at = AT(shutdown_ns)},
    {"restart", TEND_OPT_NAME, "\"permanent\", \"transient\" or \"temporary\"",
     .names = restart_names, .values = restart_values, .at = AT(restart)},
    {"max_message_time", TEND_OPT_CHECK, .check = check_budget,
     .at = AT(max_message_ns)},
    {"stash", TEND_OPT_U32, "an integer >= 1 (the stash's bound)", .min = 1,
     .max = UINT32_MAX, .at = AT(stash)},
    {"scheduler", TEND_OPT_CHECK, .check = check_scheduler,
     .at = AT(scheduler)},
    {NULL}};
#undef AT

void tend_spawn_parse(lua_State *L, int idx, const char *fn,
                      tend_spawn_opts *o) {
  tend_spawn_opts_init(o);
  if (lua_isnoneornil(L, idx)) return;
  if (!lua_istable(L, idx))
    luaL_error(L, "%s: options: expected a table, got %s", fn,
               tend_typename(L, idx));
  idx = lua_absindex(L, idx);
  tend_check_keys(L, idx, spawn_keys, fn, "");
  tend_opts_parse(L, idx, spawn_opts, fn, "", o);
  /* children: the strategy for this actor's children; supervisor is its
   * older name, kept as an alias */
  const char *key = "children";
  if (lua_getfield(L, idx, "supervisor") != LUA_TNIL) {
    if (lua_getfield(L, idx, "children") != LUA_TNIL)
      luaL_error(L,
                 "%s: options 'children' and 'supervisor' are the same "
                 "option (the strategy for this actor's children; "
                 "'supervisor' is its old name): give one, got both",
                 fn);
    lua_pop(L, 1);
    key = "supervisor";
  } else {
    lua_pop(L, 1);
    lua_getfield(L, idx, "children");
  }
  if (!lua_isnil(L, -1)) {
    o->strategy = tend_strategy_test(L, -1);
    if (o->strategy == NULL)
      tend_bad_option(L, fn, key,
                      "a strategy for the actor's children "
                      "(tend.one_for_one{...}, tend.stopping, ...)",
                      -1);
    o->decider = tend_strategy_push_decider(L, -1); /* both stay */
  } else {
    lua_pop(L, 1);
  }
}
