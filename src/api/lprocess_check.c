/* lprocess_check: the options of tend.process{...} and tend.process.run,
 * checked before anything runs (core.process_check): each bad one is an
 * error naming the option, what was expected and what was given; a good
 * set becomes the spec that lprocess.c spawns. The simple options are rows
 * (options.c); the command, env, cwd and ready have checks of their own. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api.h"
#include "base/oschild.h"

extern char **environ;

static const char *const process_keys[] = {
    "cmd",   "shell",         "env",      "inherit_env",
    "cwd",   "stdin",         "stdout",   "stderr",
    "to",    "kill_signal",   "shutdown", "process_group",
    "ready", "ready_timeout", "sim",      NULL};
static const char *const run_keys[] = {
    "shell",       "env",      "inherit_env",   "cwd",    "timeout", "input",
    "kill_signal", "shutdown", "process_group", "stdout", "stderr",  NULL};
const char *const tend_process_outputs[] = {
    "lines", "chunks", "log", "inherit", "null", "collect", NULL};

/* Finds an executable for name (searched in PATH unless it has a '/').
 * Pushes its path and returns 0, or returns an errno. */
static int resolve(lua_State *L, const char *name) {
  struct stat st;
  if (strchr(name, '/')) {
    if (stat(name, &st) != 0) return errno;
    if (S_ISDIR(st.st_mode) || access(name, X_OK) != 0) return EACCES;
    lua_pushstring(L, name);
    return 0;
  }
  const char *path = getenv("PATH");
  if (path == NULL || *path == '\0') path = "/usr/local/bin:/usr/bin:/bin";
  int found = ENOENT;
  while (*path) {
    const char *end = strchr(path, ':');
    size_t n = end ? (size_t)(end - path) : strlen(path);
    lua_pushfstring(L, "%s/%s", n ? "" : ".", name);
    if (n) {
      lua_pushlstring(L, path, n);
      lua_insert(L, -2);
      lua_concat(L, 2);
    }
    const char *full = lua_tostring(L, -1);
    if (stat(full, &st) == 0) {
      if (!S_ISDIR(st.st_mode) && access(full, X_OK) == 0) return 0;
      found = EACCES;
    }
    lua_pop(L, 1);
    path += n + (end ? 1 : 0);
  }
  return found;
}

const char *tend_errno_name(int e) {
  return e == ENOENT ? "ENOENT" : e == EACCES ? "EACCES" : uv_err_name(-e);
}

/* An output option at idx: a mode name, or a file path (with a '/'). */
static void check_output(lua_State *L, int idx, const char *fn, const char *opt,
                         int run) {
  idx = lua_absindex(L, idx);
  if (lua_isnil(L, idx)) return;
  if (lua_type(L, idx) == LUA_TSTRING) {
    const char *s = lua_tostring(L, idx);
    int i = tend_find_name(tend_process_outputs, s);
    if (i >= 0 && (i != 5 || run)) return;
    lua_pushfstring(L, "option '%s'", opt);
    tend_check_no_nul(L, idx, fn, lua_tostring(L, -1));
    lua_pop(L, 1);
    if (i < 0 && strchr(s, '/')) return;
  }
  tend_bad_option(L, fn, opt,
                  run ? "\"collect\", \"log\", \"inherit\", \"null\" or a file "
                        "path with a '/'"
                      : "\"lines\", \"chunks\", \"log\", \"inherit\", \"null\" "
                        "or a file path with a '/'",
                  idx);
}

/* Builds the "K=V" list for env at idx (may be nil) into spec.env. */
static void check_env(lua_State *L, int opts, int spec, const char *fn) {
  lua_getfield(L, opts, "inherit_env");
  int inherit = 1;
  if (!lua_isnil(L, -1)) {
    if (!lua_isboolean(L, -1))
      tend_bad_option(L, fn, "inherit_env", "a boolean", -1);
    inherit = lua_toboolean(L, -1);
  }
  lua_getfield(L, opts, "env");
  int env = lua_gettop(L);
  if (lua_isnil(L, env) && inherit) {
    lua_pop(L, 2);
    return;
  }
  if (!lua_isnil(L, env) && !lua_istable(L, env))
    tend_bad_option(L, fn, "env", "a table of strings", env);
  lua_newtable(L);
  int list = lua_gettop(L);
  lua_Integer n = 0;
  if (!lua_isnil(L, env)) {
    lua_pushnil(L);
    while (lua_next(L, env)) {
      if (lua_type(L, -2) != LUA_TSTRING || *lua_tostring(L, -2) == '\0' ||
          strchr(lua_tostring(L, -2), '='))
        luaL_error(L,
                   "%s: option 'env': keys must be names without '=', got %s",
                   fn, tend_typename(L, -2));
      if (lua_type(L, -1) != LUA_TSTRING)
        luaL_error(L,
                   "%s: option 'env': value of %s: expected a string, got %s",
                   fn, lua_tostring(L, -2), tend_typename(L, -1));
      tend_check_no_nul(L, -2, fn, "option 'env': a key");
      lua_pushfstring(L, "option 'env': value of %s", lua_tostring(L, -2));
      tend_check_no_nul(L, -2, fn, lua_tostring(L, -1));
      lua_pop(L, 1);
      lua_pushfstring(L, "%s=%s", lua_tostring(L, -2), lua_tostring(L, -1));
      lua_rawseti(L, list, ++n);
      lua_pop(L, 1);
    }
  }
  if (inherit)
    for (char **e = environ; *e; e++) {
      const char *eq = strchr(*e, '=');
      if (eq == NULL) continue;
      lua_pushlstring(L, *e, (size_t)(eq - *e));
      int given = lua_rawget(L, env) != LUA_TNIL;
      lua_pop(L, 1);
      if (given) continue;
      lua_pushstring(L, *e);
      lua_rawseti(L, list, ++n);
    }
  lua_setfield(L, spec, "env");
  lua_pop(L, 2);
}

/* The command at idx (list, or a string with shell): spec.path, argv. */
static void check_cmd(lua_State *L, int idx, int shell, int spec,
                      const char *fn) {
  lua_newtable(L);
  int argv = lua_gettop(L);
  if (shell) {
    if (lua_type(L, idx) != LUA_TSTRING)
      tend_bad_option(L, fn, "cmd", "a string (with shell = true)", idx);
    tend_check_no_nul(L, idx, fn, "option 'cmd'");
    lua_pushliteral(L, "sh");
    lua_rawseti(L, argv, 1);
    lua_pushliteral(L, "-c");
    lua_rawseti(L, argv, 2);
    lua_pushvalue(L, idx);
    lua_rawseti(L, argv, 3);
    lua_pushliteral(L, "/bin/sh");
  } else {
    if (!lua_istable(L, idx))
      tend_bad_option(L, fn, "cmd",
                      lua_type(L, idx) == LUA_TSTRING
                          ? "a list of strings {program, args...}, or a "
                            "string with shell = true"
                          : "a list of strings {program, args...}",
                      idx);
    lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
    if (n == 0)
      luaL_error(L,
                 "%s: option 'cmd': expected a list of strings {program, "
                 "args...}, got an empty table",
                 fn);
    for (lua_Integer i = 1; i <= n; i++) {
      if (lua_rawgeti(L, idx, i) != LUA_TSTRING)
        luaL_error(L, "%s: option 'cmd': element %d: expected a string, got %s",
                   fn, (int)i, tend_typename(L, -1));
      lua_pushfstring(L, "option 'cmd': element %d", (int)i);
      tend_check_no_nul(L, -2, fn, lua_tostring(L, -1));
      lua_pop(L, 1);
      lua_rawseti(L, argv, i);
    }
    lua_rawgeti(L, idx, 1);
    const char *name = lua_tostring(L, -1);
    int e = resolve(L, name);
    if (e)
      luaL_error(L, "%s: option 'cmd': cannot run '%s': %s (%s)", fn, name,
                 strerror(e), tend_errno_name(e));
    lua_remove(L, -2);
  }
  lua_setfield(L, spec, "path");
  lua_setfield(L, spec, "argv");
}

static void check_ready(lua_State *L, int opts, int spec, const char *fn) {
  lua_getfield(L, opts, "ready");
  int r = lua_gettop(L);
  if (lua_isnil(L, r)) {
    lua_pop(L, 1);
    return;
  }
  static const char *const keys[] = {"line", "tcp", "after", NULL};
  const char *expect = "{ line = pattern } | { tcp = port } | { after = s }";
  if (!lua_istable(L, r)) tend_bad_option(L, fn, "ready", expect, r);
  tend_check_keys(L, r, keys, fn, "option 'ready': ");
  int n = 0;
  if (lua_getfield(L, r, "line") != LUA_TNIL) {
    if (lua_type(L, -1) != LUA_TSTRING)
      tend_bad_option(L, fn, "ready.line", "a Lua pattern (string)", -1);
    tend_check_no_nul(L, -1, fn, "option 'ready.line'");
    lua_setfield(L, spec, "ready_line");
    n++;
  } else {
    lua_pop(L, 1);
  }
  if (lua_getfield(L, r, "tcp") != LUA_TNIL) {
    if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1 ||
        lua_tointeger(L, -1) > 65535)
      tend_bad_option(L, fn, "ready.tcp", "a port number 1-65535", -1);
    lua_setfield(L, spec, "ready_tcp");
    n++;
  } else {
    lua_pop(L, 1);
  }
  if (lua_getfield(L, r, "after") != LUA_TNIL) {
    lua_pushnumber(L, tend_check_seconds(L, -1, fn, "option 'ready.after'", 0));
    lua_setfield(L, spec, "ready_after");
    n++;
  }
  lua_pop(L, 1);
  if (n != 1) tend_bad_option(L, fn, "ready", expect, r);
  lua_pop(L, 1);
}

/* The options read by rows (process_rows...); the values kept on the
 * stack are their indexes (0: not given). */
typedef struct popts {
  int shell;            /* shell = true */
  int sim;              /* sim (a function) */
  int in;               /* stdin */
  int to;               /* to (a ref) */
  int out[2];           /* stdout, stderr */
  int input;            /* input (run) */
  int sig;              /* kill_signal's number (default SIGTERM) */
  int group;            /* process_group (default true) */
  double shutdown;      /* seconds (default 5) */
  double timeout;       /* run: seconds (default none) */
  double ready_timeout; /* seconds (default 30) */
} popts;

static void output(lua_State *L, int idx, const char *fn, const char *opt,
                   const tend_opt *row, void *out) {
  (void)row, (void)out;
  check_output(L, idx, fn, opt, 0);
}

static void output_run(lua_State *L, int idx, const char *fn, const char *opt,
                       const tend_opt *row, void *out) {
  (void)row, (void)out;
  check_output(L, idx, fn, opt, 1);
}

static void ref(lua_State *L, int idx, const char *fn, const char *opt,
                const tend_opt *row, void *out) {
  (void)row, (void)out;
  lua_pushfstring(L, "option '%s'", opt);
  tend_check_ref(L, idx, fn, lua_tostring(L, -1));
}

static void kill_signal(lua_State *L, int idx, const char *fn, const char *opt,
                        const tend_opt *row, void *out) {
  int *sig = TEND_OPT_FIELD(int, row, out);
  if (lua_type(L, idx) != LUA_TSTRING ||
      (*sig = tend_signal_number(lua_tostring(L, idx))) == 0)
    tend_opt_bad(L, fn, opt, row, idx);
}

/* Seconds, >= 0 (row->min 0) or > 0 (row->min 1), tend_check_seconds's
 * words. */
static void secs(lua_State *L, int idx, const char *fn, const char *opt,
                 const tend_opt *row, void *out) {
  lua_pushfstring(L, "option '%s'", opt);
  *TEND_OPT_FIELD(double, row, out) =
      tend_check_seconds(L, idx, fn, lua_tostring(L, -1), row->min > 0);
}

static void string(lua_State *L, int idx, const char *fn, const char *opt,
                   const tend_opt *row, void *out) {
  (void)out;
  if (lua_type(L, idx) != LUA_TSTRING) tend_opt_bad(L, fn, opt, row, idx);
}

static const char *const stdins[] = {"pipe", "null", NULL};
#define AT(field) TEND_OPT_AT(popts, field)
#define KEPT(name, type, expected, field, ...) \
  { name, type, expected, TEND_OPT_KEEP, .at = AT(field), __VA_ARGS__ }
static const tend_opt head_process[] = {
    {"shell", TEND_OPT_BOOL, "a boolean", .at = AT(shell)},
    KEPT("sim", TEND_OPT_FUNCTION, "a function(p)", sim),
    {NULL}};
static const tend_opt head_run[] = {
    {"shell", TEND_OPT_BOOL, "a boolean", .at = AT(shell)}, {NULL}};
/* (after cmd, env and cwd) */
#define STOP_ROWS                                                   \
  {"kill_signal", TEND_OPT_CHECK, "a signal name such as \"TERM\"", \
   .check = kill_signal, .at = AT(sig)},                            \
      {"shutdown", TEND_OPT_CHECK, .min = 0, .check = secs,         \
       .at = AT(shutdown)},                                         \
  {                                                                 \
    "process_group", TEND_OPT_BOOL, "a boolean", .at = AT(group)    \
  }
static const tend_opt tail_process[] = {
    KEPT("stdin", TEND_OPT_NAME, "\"pipe\" or \"null\"", in, .names = stdins),
    KEPT("to", TEND_OPT_CHECK, NULL, to, .check = ref),
    KEPT("stdout", TEND_OPT_CHECK, NULL, out[0], .check = output),
    KEPT("stderr", TEND_OPT_CHECK, NULL, out[1], .check = output),
    STOP_ROWS,
    {NULL}};
static const tend_opt tail_run[] = {
    KEPT("stdout", TEND_OPT_CHECK, NULL, out[0], .check = output_run),
    KEPT("stderr", TEND_OPT_CHECK, NULL, out[1], .check = output_run),
    STOP_ROWS,
    {"timeout", TEND_OPT_CHECK, .min = 1, .check = secs, .at = AT(timeout)},
    KEPT("input", TEND_OPT_CHECK, "a string", input, .check = string),
    {NULL}};
static const tend_opt ready_timeout[] = {
    {"ready_timeout", TEND_OPT_CHECK, .min = 1, .check = secs,
     .at = AT(ready_timeout)},
    {NULL}};
#undef STOP_ROWS
#undef KEPT
#undef AT

/* Sets spec[key] to the value at idx (kept by a row; 0: none). */
static void set(lua_State *L, int spec, const char *key, int idx) {
  if (idx == 0) return;
  lua_pushvalue(L, idx);
  lua_setfield(L, spec, key);
}

static void check_cwd(lua_State *L, int spec, const char *fn) {
  if (lua_getfield(L, 1, "cwd") != LUA_TNIL) {
    struct stat st;
    if (lua_type(L, -1) != LUA_TSTRING)
      tend_bad_option(L, fn, "cwd", "a directory path", -1);
    tend_check_no_nul(L, -1, fn, "option 'cwd'");
    if (stat(lua_tostring(L, -1), &st) != 0 || !S_ISDIR(st.st_mode))
      luaL_error(L, "%s: option 'cwd': '%s' is not a directory", fn,
                 lua_tostring(L, -1));
  }
  lua_setfield(L, spec, "cwd");
}

/* ready.line needs a stdout that tend reads. */
static void check_ready_line(lua_State *L, int spec, const char *fn) {
  if (lua_getfield(L, spec, "ready_line") != LUA_TNIL &&
      lua_getfield(L, spec, "stdout") == LUA_TSTRING) {
    int i = tend_find_name(tend_process_outputs, lua_tostring(L, -1));
    if (i < 0 || i > 2) /* inherit, null, a file: tend never sees it */
      luaL_error(L,
                 "%s: option 'ready.line': expected stdout read by tend "
                 "(\"lines\", \"chunks\", \"log\" or none), got stdout = "
                 "\"%s\"",
                 fn, lua_tostring(L, -1));
  }
}

/* The command (at 3 for run, else opts.cmd): none under the virtual clock,
 * where only sim runs; else spec.path and spec.argv (check_cmd). */
static void cmd_or_sim(lua_State *L, int run, const popts *o, int spec,
                       const char *fn) {
  if (!run) {
    lua_getfield(L, 1, "cmd");
    lua_replace(L, 3);
  }
  int is_virtual = tend_host_virtual(tend_host_of(L));
  if (is_virtual && !o->sim)
    luaL_error(L,
               run ? "%s: a real command cannot run under the virtual clock "
                     "(--virtual-time): tend.process.run runs real programs "
                     "only; in a scenario, spawn tend.process{ sim = "
                     "function(p) ... end } instead"
                   : "%s: a real command cannot run under the virtual clock "
                     "(--virtual-time): give sim = function(p) ... end to "
                     "simulate the process",
               fn);
  if (!is_virtual || !o->sim) {
    if (!lua_isnil(L, 3) || !o->sim) check_cmd(L, 3, o->shell, spec, fn);
  }
  set(L, spec, "cmd", lua_isnil(L, 3) ? 0 : 3);
}

/* core.process_check(opts, fn [, cmd]) -> spec: tend.process{...} (no
 * cmd) or tend.process.run(cmd, opts); raises "fn: option ...". */
int tend_process_check(lua_State *L) {
  const char *fn = luaL_checkstring(L, 2);
  int run = !lua_isnoneornil(L, 3);
  lua_settop(L, 3);
  if (lua_isnil(L, 1)) {
    lua_newtable(L);
    lua_replace(L, 1);
  }
  if (!lua_istable(L, 1))
    luaL_error(L, "%s: options: expected a table, got %s", fn,
               tend_typename(L, 1));
  tend_check_keys(L, 1, run ? run_keys : process_keys, fn, "");
  lua_newtable(L);
  int spec = lua_gettop(L);
  popts o = {.sig = SIGTERM,
             .group = 1,
             .shutdown = 5.0,
             .timeout = HUGE_VAL,
             .ready_timeout = 30.0};
  tend_opts_parse(L, 1, run ? head_run : head_process, fn, "", &o);
  set(L, spec, "sim", o.sim);
  cmd_or_sim(L, run, &o, spec, fn);
  check_env(L, 1, spec, fn);
  check_cwd(L, spec, fn);
  tend_opts_parse(L, 1, run ? tail_run : tail_process, fn, "", &o);
  set(L, spec, "stdin", o.in);
  set(L, spec, "to", o.to);
  set(L, spec, "stdout", o.out[0]);
  set(L, spec, "stderr", o.out[1]);
  lua_pushinteger(L, o.sig);
  lua_setfield(L, spec, "kill_signal");
  lua_pushstring(L, tend_signal_name(o.sig));
  lua_setfield(L, spec, "kill_signal_name");
  lua_pushnumber(L, o.shutdown);
  lua_setfield(L, spec, "shutdown");
  lua_pushboolean(L, o.group);
  lua_setfield(L, spec, "group");
  if (run) {
    lua_pushnumber(L, o.timeout);
    lua_setfield(L, spec, "timeout");
    set(L, spec, "input", o.input);
  } else {
    check_ready(L, 1, spec, fn);
    check_ready_line(L, spec, fn);
    tend_opts_parse(L, 1, ready_timeout, fn, "", &o);
    lua_pushnumber(L, o.ready_timeout);
    lua_setfield(L, spec, "ready_timeout");
  }
  lua_settop(L, spec);
  return 1;
}
