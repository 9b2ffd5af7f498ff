/* lprocess: the C side of tend.process (lua/tend/process.lua builds the
 * process actor on it): the options checked before anything runs, the
 * spawn, and the methods of a process handle ("tend.Process", a pointer
 * to a runtime/process.h record). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api.h"
#include "runtime/error.h"
#include "runtime/event.h"
#include "runtime/process.h"
#include "runtime/sched.h"
#include "runtime/value.h"

#define PROCESS_MT "tend.Process"

extern char **environ;

typedef struct handle {
  tend_process *p; /* the record, or NULL once released */
} handle;

/* ------------------------------------------------------------ checks */

static const char *const process_keys[] = {
    "cmd",   "shell",         "env",      "inherit_env",
    "cwd",   "stdin",         "stdout",   "stderr",
    "to",    "kill_signal",   "shutdown", "process_group",
    "ready", "ready_timeout", "sim",      NULL};
static const char *const run_keys[] = {
    "shell",       "env",      "inherit_env",   "cwd",    "timeout", "input",
    "kill_signal", "shutdown", "process_group", "stdout", "stderr",  NULL};
static const char *const outputs[] = {"lines", "chunks",  "log", "inherit",
                                      "null",  "collect", NULL};

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

static const char *errno_name(int e) {
  return e == ENOENT ? "ENOENT" : e == EACCES ? "EACCES" : uv_err_name(-e);
}

/* An output option at idx: a mode name, or a file path (with a '/'). */
static void check_output(lua_State *L, int idx, const char *fn, const char *opt,
                         int run) {
  if (lua_isnil(L, idx)) return;
  if (lua_type(L, idx) == LUA_TSTRING) {
    const char *s = lua_tostring(L, idx);
    int i = tend_find_name(outputs, s);
    if ((i >= 0 && (i != 5 || run)) || (i < 0 && strchr(s, '/'))) return;
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
    lua_pushliteral(L, "sh");
    lua_rawseti(L, argv, 1);
    lua_pushliteral(L, "-c");
    lua_rawseti(L, argv, 2);
    lua_pushvalue(L, idx);
    lua_rawseti(L, argv, 3);
    lua_pushliteral(L, "/bin/sh");
  } else {
    if (!lua_istable(L, idx))
      tend_bad_option(L, fn, "cmd", "a list of strings {program, args...}",
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
      lua_rawseti(L, argv, i);
    }
    lua_rawgeti(L, idx, 1);
    const char *name = lua_tostring(L, -1);
    int e = resolve(L, name);
    if (e)
      luaL_error(L, "%s: option 'cmd': cannot run '%s': %s (%s)", fn, name,
                 strerror(e), errno_name(e));
    lua_remove(L, -2);
  }
  lua_setfield(L, spec, "path");
  lua_setfield(L, spec, "argv");
}

static double opt_seconds(lua_State *L, int opts, const char *key, double def,
                          int positive, const char *fn) {
  lua_getfield(L, opts, key);
  double s = def;
  if (!lua_isnil(L, -1)) {
    lua_pushfstring(L, "option '%s'", key);
    s = tend_check_seconds(L, -2, fn, lua_tostring(L, -1), positive);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return s;
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

/* core.process_check(opts, fn [, cmd]) -> spec: tend.process{...} (no
 * cmd) or tend.process.run(cmd, opts); raises "fn: option ...". */
static int l_process_check(lua_State *L) {
  tend_host *h = tend_host_of(L);
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
  int shell = 0;
  lua_getfield(L, 1, "shell");
  if (!lua_isnil(L, -1)) {
    if (!lua_isboolean(L, -1)) tend_bad_option(L, fn, "shell", "a boolean", -1);
    shell = lua_toboolean(L, -1);
  }
  lua_pop(L, 1);
  int sim = 0;
  if (!run) {
    lua_getfield(L, 1, "sim");
    if (!lua_isnil(L, -1) && !lua_isfunction(L, -1))
      tend_bad_option(L, fn, "sim", "a function(p)", -1);
    sim = lua_isfunction(L, -1);
    lua_setfield(L, spec, "sim");
    lua_getfield(L, 1, "cmd");
    lua_replace(L, 3);
  }
  if (h->clock.is_virtual && !sim)
    luaL_error(L,
               run ? "%s: a real command cannot run under the virtual clock "
                     "(--virtual-time): tend.process.run runs real programs "
                     "only; in a scenario, spawn tend.process{ sim = "
                     "function(p) ... end } instead"
                   : "%s: a real command cannot run under the virtual clock "
                     "(--virtual-time): give sim = function(p) ... end to "
                     "simulate the process",
               fn);
  if (!h->clock.is_virtual || !sim) {
    if (!lua_isnil(L, 3) || !sim) check_cmd(L, 3, shell, spec, fn);
  }
  if (!lua_isnil(L, 3)) {
    lua_pushvalue(L, 3);
    lua_setfield(L, spec, "cmd");
  }
  check_env(L, 1, spec, fn);
  if (lua_getfield(L, 1, "cwd") != LUA_TNIL) {
    struct stat st;
    if (lua_type(L, -1) != LUA_TSTRING)
      tend_bad_option(L, fn, "cwd", "a directory path", -1);
    if (stat(lua_tostring(L, -1), &st) != 0 || !S_ISDIR(st.st_mode))
      luaL_error(L, "%s: option 'cwd': '%s' is not a directory", fn,
                 lua_tostring(L, -1));
  }
  lua_setfield(L, spec, "cwd");
  if (!run) {
    lua_getfield(L, 1, "stdin");
    if (!lua_isnil(L, -1) && (lua_type(L, -1) != LUA_TSTRING ||
                              (strcmp(lua_tostring(L, -1), "pipe") != 0 &&
                               strcmp(lua_tostring(L, -1), "null") != 0)))
      tend_bad_option(L, fn, "stdin", "\"pipe\" or \"null\"", -1);
    lua_setfield(L, spec, "stdin");
    lua_getfield(L, 1, "to");
    if (!lua_isnil(L, -1)) tend_check_ref(L, -1, fn, "option 'to'");
    lua_setfield(L, spec, "to");
  }
  static const char *const streams[] = {"stdout", "stderr"};
  for (int i = 0; i < 2; i++) {
    lua_getfield(L, 1, streams[i]);
    check_output(L, -1, fn, streams[i], run);
    lua_setfield(L, spec, streams[i]);
  }
  lua_getfield(L, 1, "kill_signal");
  int sig = SIGTERM;
  if (!lua_isnil(L, -1)) {
    if (lua_type(L, -1) != LUA_TSTRING ||
        (sig = tend_signal_number(lua_tostring(L, -1))) == 0)
      tend_bad_option(L, fn, "kill_signal", "a signal name such as \"TERM\"",
                      -1);
  }
  lua_pop(L, 1);
  lua_pushinteger(L, sig);
  lua_setfield(L, spec, "kill_signal");
  lua_pushstring(L, tend_signal_name(sig));
  lua_setfield(L, spec, "kill_signal_name");
  lua_pushnumber(L, opt_seconds(L, 1, "shutdown", 5.0, 0, fn));
  lua_setfield(L, spec, "shutdown");
  lua_getfield(L, 1, "process_group");
  if (!lua_isnil(L, -1) && !lua_isboolean(L, -1))
    tend_bad_option(L, fn, "process_group", "a boolean", -1);
  lua_pushboolean(L, lua_isnil(L, -1) || lua_toboolean(L, -1));
  lua_setfield(L, spec, "group");
  lua_pop(L, 1);
  if (run) {
    double t = opt_seconds(L, 1, "timeout", HUGE_VAL, 1, fn);
    lua_pushnumber(L, t);
    lua_setfield(L, spec, "timeout");
    lua_getfield(L, 1, "input");
    if (!lua_isnil(L, -1) && lua_type(L, -1) != LUA_TSTRING)
      tend_bad_option(L, fn, "input", "a string", -1);
    lua_setfield(L, spec, "input");
  } else {
    check_ready(L, 1, spec, fn);
    lua_pushnumber(L, opt_seconds(L, 1, "ready_timeout", 30.0, 1, fn));
    lua_setfield(L, spec, "ready_timeout");
  }
  lua_settop(L, spec);
  return 1;
}

/* ------------------------------------------------------------ spawn */

static tend_output output_of(lua_State *L, int spec, const char *key,
                             tend_output def, const char **file) {
  lua_getfield(L, spec, key);
  tend_output o = def;
  if (lua_type(L, -1) == LUA_TSTRING) {
    static const tend_output modes[] = {TEND_OUT_LINES, TEND_OUT_CHUNKS,
                                        TEND_OUT_LOG,   TEND_OUT_INHERIT,
                                        TEND_OUT_NULL,  TEND_OUT_COLLECT};
    int i = tend_find_name(outputs, lua_tostring(L, -1));
    if (i >= 0) {
      o = modes[i];
    } else {
      o = TEND_OUT_FILE;
      *file = lua_tostring(L, -1); /* kept alive by spec */
    }
  }
  lua_pop(L, 1);
  return o;
}

/* A NULL-ended char* array of the list at idx, in a userdata left on the
 * stack (collected with it). */
static const char **push_array(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  size_t n = lua_rawlen(L, idx);
  const char **v = lua_newuserdatauv(L, (n + 1) * sizeof *v, 0);
  for (size_t i = 0; i < n; i++) {
    lua_rawgeti(L, idx, (lua_Integer)i + 1);
    v[i] = lua_tostring(L, -1); /* anchored by the list */
    lua_pop(L, 1);
  }
  v[n] = NULL;
  return v;
}

/* Raises a SpawnError naming the OS error. */
static int spawn_error(lua_State *L, const char *name, const char *what,
                       const char *path) {
  lua_pushfstring(L, "%s: %s: %s", name, what, path);
  tend_error_new(L, "SpawnError", lua_tostring(L, -1));
  lua_pushstring(L, name);
  lua_setfield(L, -2, "errno");
  return lua_error(L);
}

/* The actor's post_stop must outlast the kill sequence: `secs` after
 * the kill signal, then up to 2 s after SIGKILL. */
static void cover(tend_actor *a, double secs) {
  int64_t need = isinf(secs) ? INT64_MAX / 4 : tend_clock_ns(secs + 2.0);
  if (tend_actor_shutdown_ns(a) < need) tend_actor_set_shutdown_ns(a, need);
}

/* core.process_cover(ctx, seconds): the same for a simulated process. */
static int l_process_cover(lua_State *L) {
  cover(tend_check_ctx(L, 1), luaL_checknumber(L, 2));
  return 0;
}

/* core.process_spawn(spec, to | nil, run) -> handle: runs the program for
 * the current actor; raises SpawnError (nothing runs). */
static int l_process_spawn(lua_State *L) {
  tend_host *h = tend_host_of(L);
  luaL_checktype(L, 1, LUA_TTABLE);
  int run = lua_toboolean(L, 3);
  tend_actor *owner = h->current;
  if (owner == NULL)
    luaL_error(L, "tend.process: can only run inside an actor");
  uint32_t to_id = 0, to_gen = 0;
  if (!lua_isnil(L, 2)) {
    tend_ref *r = tend_check_ref(L, 2, "tend.process", "to");
    to_id = r->id;
    to_gen = r->gen;
  }
  tend_process_spec s;
  memset(&s, 0, sizeof s);
  lua_getfield(L, 1, "path");
  s.path = luaL_checkstring(L, -1);
  struct stat st;
  if (stat(s.path, &st) != 0)
    return spawn_error(L, errno_name(errno), strerror(errno), s.path);
  if (S_ISDIR(st.st_mode) || access(s.path, X_OK) != 0)
    return spawn_error(L, "EACCES", strerror(EACCES), s.path);
  lua_getfield(L, 1, "argv");
  s.argv = push_array(L, -1);
  if (lua_getfield(L, 1, "env") == LUA_TTABLE)
    s.env = (char **)push_array(L, -1);
  lua_getfield(L, 1, "cwd");
  s.cwd = lua_tostring(L, -1);
  if (s.cwd && (stat(s.cwd, &st) != 0 || !S_ISDIR(st.st_mode)))
    return spawn_error(L, "ENOENT", "no such directory", s.cwd);
  lua_getfield(L, 1, run ? "input" : "stdin");
  s.stdin_pipe =
      run ? !lua_isnil(L, -1)
          : lua_isstring(L, -1) && strcmp(lua_tostring(L, -1), "pipe") == 0;
  tend_output def = run ? TEND_OUT_COLLECT : TEND_OUT_LINES;
  s.out[0] = output_of(L, 1, "stdout", def, &s.file[0]);
  s.out[1] = output_of(L, 1, "stderr", def, &s.file[1]);
  lua_getfield(L, 1, "group");
  s.group = lua_toboolean(L, -1);
  lua_getfield(L, 1, "ready_line");
  s.ready_line = lua_tostring(L, -1);
  lua_getfield(L, 1, "ready_tcp");
  s.ready_tcp = (int)lua_tointeger(L, -1);
  handle *hd = lua_newuserdatauv(L, sizeof *hd, 0);
  hd->p = NULL;
  luaL_setmetatable(L, PROCESS_MT);
  int err = 0;
  hd->p = tend_process_spawn(L, h, owner, to_id, to_gen, &s, &err);
  if (hd->p == NULL) {
    const char *path = s.path;
    for (int i = 0; i < 2; i++)
      if (s.out[i] == TEND_OUT_FILE) path = s.file[i]; /* the likelier one */
    return spawn_error(L, uv_err_name(err), uv_strerror(err),
                       err == UV_ENOENT || err == UV_EACCES ? path : s.path);
  }
  if (!run) {
    tend_process_set_token(L, hd->p, -1);
    lua_getfield(L, 1, "shutdown");
    cover(owner, lua_tonumber(L, -1));
    lua_pop(L, 1);
  }
  return 1;
}

/* ------------------------------------------------------------ handles */

static tend_process *check_process(lua_State *L) {
  handle *hd = luaL_checkudata(L, 1, PROCESS_MT);
  if (hd->p == NULL) luaL_error(L, "process handle: released");
  return hd->p;
}

static int l_gc(lua_State *L) {
  handle *hd = luaL_checkudata(L, 1, PROCESS_MT);
  if (hd->p) tend_process_release(hd->p);
  hd->p = NULL;
  return 0;
}

static int l_pid(lua_State *L) {
  lua_pushinteger(L, tend_process_pid(check_process(L)));
  return 1;
}

/* h:status() -> nil while it runs; else status (or nil), signal name (or
 * nil), core_dump */
static int l_status(lua_State *L) {
  tend_process *p = check_process(L);
  if (!tend_process_done(p)) return 0;
  int64_t status;
  int sig;
  tend_process_status(p, &status, &sig);
  if (sig) {
    lua_pushnil(L);
    const char *name = tend_signal_name(sig);
    if (name)
      lua_pushstring(L, name);
    else
      lua_pushinteger(L, sig);
  } else {
    lua_pushinteger(L, status);
    lua_pushnil(L);
  }
  lua_pushboolean(L, sig && tend_process_core_dump(p));
  return 3;
}

static int l_done(lua_State *L) {
  lua_pushboolean(L, tend_process_done(check_process(L)));
  return 1;
}

static int l_ready(lua_State *L) {
  lua_pushboolean(L, tend_process_is_ready(check_process(L)));
  return 1;
}

static int l_mark_ready(lua_State *L) {
  tend_process_mark_ready(L, check_process(L));
  return 0;
}

/* h:signal(name) -> true, or nil and an error message */
static int l_signal(lua_State *L) {
  tend_process *p = check_process(L);
  int sig = tend_signal_number(luaL_checkstring(L, 2));
  if (sig == 0)
    luaL_error(L, "signal: expected a signal name such as \"TERM\", got %s",
               lua_tostring(L, 2));
  int r = tend_process_signal(p, sig);
  if (r == 0) {
    lua_pushboolean(L, 1);
    return 1;
  }
  luaL_pushfail(L);
  lua_pushstring(L, strerror(-r));
  return 2;
}

static int l_write(lua_State *L) {
  tend_process *p = check_process(L);
  size_t n;
  const char *s = luaL_checklstring(L, 2, &n);
  int r = tend_process_write(p, s, n);
  if (r == 0) {
    lua_pushboolean(L, 1);
    return 1;
  }
  luaL_pushfail(L);
  lua_pushfstring(L, "%s: %s", uv_err_name(r), uv_strerror(r));
  return 2;
}

static int l_close_stdin(lua_State *L) {
  tend_process_close_stdin(check_process(L));
  return 0;
}

static int l_collected(lua_State *L) {
  tend_process *p = check_process(L);
  tend_process_push_collected(L, p, 0);
  tend_process_push_collected(L, p, 1);
  return 2;
}

static const char *const event_names[] = {"timeout", "exit", "ready"};

static int wait_k(lua_State *L, int status, lua_KContext k) {
  (void)status;
  (void)k;
  tend_host *h = tend_host_of(L);
  int code = TEND_PROCESS_TIMEOUT;
  if (tend_sched_woken(L, h) == TEND_WAKE_OK) {
    tend_value_take(L, h, &h->current->wake_value);
    code = (int)lua_tointeger(L, -1);
    lua_pop(L, 1);
  }
  lua_pushstring(L, event_names[code >= 0 && code <= 2 ? code : 0]);
  return 1;
}

/* h:wait(timeout | nil, for_ready) -> "exit" | "ready" | "timeout": the
 * current actor waits (others run). */
static int l_wait(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_process *p = check_process(L);
  double t = lua_isnoneornil(L, 2)
                 ? HUGE_VAL
                 : tend_check_seconds(L, 2, "process wait", "timeout", 0);
  int for_ready = lua_toboolean(L, 3);
  tend_actor *a = tend_sched_check_wait(L, h, "tend.process");
  if (tend_process_wait(L, h, a, p, for_ready, isinf(t) ? -1 : tend_clock_ns(t),
                        "tend.process")) {
    lua_pushstring(L, tend_process_done(p) ? "exit" : "ready");
    return 1;
  }
  return tend_sched_wait(L, h, TEND_WAIT_ASK, wait_k);
}

/* core.process_event(ctx, ev, {pid, argv0, status, signal}): a process
 * event of a simulated process (real ones emit their own). */
static int l_process_event(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_actor *a = tend_check_ctx(L, 1);
  static const char *const evs[] = {"spawn_os", "ready", "exit", NULL};
  static const tend_event_kind kinds[] = {TEND_EV_SPAWN_OS, TEND_EV_READY,
                                          TEND_EV_EXIT};
  int i = tend_find_name(evs, luaL_checkstring(L, 2));
  if (i < 0) luaL_argerror(L, 2, "spawn_os, ready or exit");
  luaL_checktype(L, 3, LUA_TTABLE);
  if (!tend_event_on(h)) return 0;
  tend_event e = TEND_EVENT_INIT(kinds[i], a);
  lua_getfield(L, 3, "pid");
  if (lua_isinteger(L, -1)) e.pid = lua_tointeger(L, -1);
  lua_getfield(L, 3, "argv0");
  e.argv0 = lua_tostring(L, -1);
  lua_getfield(L, 3, "status");
  if (lua_isinteger(L, -1)) e.status = lua_tointeger(L, -1);
  lua_getfield(L, 3, "signal");
  e.signal = lua_tostring(L, -1);
  tend_event_emit(L, h, &e);
  return 0;
}

/* core.process_signal_ref(ref, name) -> true when ref's actor owns a
 * running OS process and it was signalled (tend.chaos.signal). */
static int l_process_signal_ref(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_ref *r = tend_check_ref(L, 1, "tend.chaos.signal", "ref");
  int sig = tend_signal_number(luaL_checkstring(L, 2));
  tend_actor *a = tend_ref_actor(h, r);
  tend_process *p = a ? tend_process_of(h, a) : NULL;
  lua_pushboolean(L, p && sig && tend_process_signal(p, sig) == 0);
  return 1;
}

/* core.signal_number(name) -> number or nil */
static int l_signal_number(lua_State *L) {
  int sig = tend_signal_number(luaL_checkstring(L, 1));
  if (sig == 0) return 0;
  lua_pushinteger(L, sig);
  return 1;
}

void tend_open_process(lua_State *L) {
  static const luaL_Reg methods[] = {{"pid", l_pid},
                                     {"status", l_status},
                                     {"ready", l_ready},
                                     {"mark_ready", l_mark_ready},
                                     {"done", l_done},
                                     {"signal", l_signal},
                                     {"write", l_write},
                                     {"close_stdin", l_close_stdin},
                                     {"collected", l_collected},
                                     {"wait", l_wait},
                                     {NULL, NULL}};
  static const luaL_Reg fns[] = {{"process_check", l_process_check},
                                 {"process_spawn", l_process_spawn},
                                 {"process_event", l_process_event},
                                 {"process_cover", l_process_cover},
                                 {"process_signal_ref", l_process_signal_ref},
                                 {"signal_number", l_signal_number},
                                 {NULL, NULL}};
  luaL_newmetatable(L, PROCESS_MT);
  lua_pushcfunction(L, l_gc);
  lua_setfield(L, -2, "__gc");
  luaL_newlib(L, methods);
  lua_setfield(L, -2, "__index");
  lua_pushliteral(L, "tend.Process");
  lua_setfield(L, -2, "__name");
  lua_pushboolean(L, 1); /* an identity: --copy-messages keeps it */
  lua_setfield(L, -2, "__tend_handle");
  lua_pop(L, 1);
  luaL_setfuncs(L, fns, 0);
}
