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
#include "base/oschild.h"

#define PROCESS_MT "tend.Process"

typedef struct handle {
  tend_process *p; /* the record, or NULL once released */
} handle;

/* ------------------------------------------------------------ spawn */

static tend_output output_of(lua_State *L, int spec, const char *key,
                             tend_output def, const char **file) {
  lua_getfield(L, spec, key);
  tend_output o = def;
  if (lua_type(L, -1) == LUA_TSTRING) {
    static const tend_output modes[] = {TEND_OUT_LINES, TEND_OUT_CHUNKS,
                                        TEND_OUT_LOG,   TEND_OUT_INHERIT,
                                        TEND_OUT_NULL,  TEND_OUT_COLLECT};
    int i = tend_find_name(tend_process_outputs, lua_tostring(L, -1));
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
  tend_error_new(L, TEND_ERR_NAME(SPAWN_ERROR), lua_tostring(L, -1));
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
  tend_actor *owner = tend_host_current(h);
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
    return spawn_error(L, tend_errno_name(errno), strerror(errno), s.path);
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
  lua_getfield(L, 1, "to"); /* no `to`: the output passes through */
  tend_output def = run                ? TEND_OUT_COLLECT
                    : lua_isnil(L, -1) ? TEND_OUT_PASS
                                       : TEND_OUT_LINES;
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
    tend_sched_take_reply(L, h);
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
  if (!tend_event_wanted(h)) return 0;
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

/* core.process_pass(err, line): a line of a simulated program passed
 * through to tend's own stdout (err false) or stderr (err true). */
static int l_process_pass(lua_State *L) {
  size_t n;
  const char *s = luaL_checklstring(L, 2, &n);
  tend_host_pass(tend_host_of(L), lua_toboolean(L, 1), s, n, 1);
  return 0;
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
  static const luaL_Reg fns[] = {{"process_check", tend_process_check},
                                 {"process_spawn", l_process_spawn},
                                 {"process_event", l_process_event},
                                 {"process_cover", l_process_cover},
                                 {"process_pass", l_process_pass},
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
