/* linternal: tend.internal, the plumbing of tend's own tools (the test and
 * scenario runners, the benchmarks): not part of the public tend table. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api.h"

/* wall_clock() -> seconds of real time (never the virtual clock): only for
 * reports; anything computed from it is not replayable. */
static int l_wall_clock(lua_State *L) {
  lua_pushnumber(L, (double)uv_hrtime() / 1e9);
  return 1;
}

/* now_ns() -> the host's time in ns, exact (tend.now()'s float is not,
 * once the time is large): the test runner aligns the virtual clock. */
static int l_now_ns(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)tend_host_now(tend_host_of(L)));
  return 1;
}

/* after(seconds, fn): as tend.after, for tend's own tasks (a simulated
 * transfer, the REPL's watch): the task is internal (TEND_AF_INTERNAL),
 * out of the traces and the tree unless internal events are shown. */
static int l_after(lua_State *L) {
  tend_host *h = tend_host_of(L);
  double s = tend_check_seconds(L, 1, "internal.after", "seconds", 0);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  lua_settop(L, 2);
  tend_timer *t =
      tend_timer_arm(L, h, TEND_TIMER_TASK, NULL, tend_clock_ns(s), 0, 2);
  if (t == NULL) luaL_error(L, "out of memory arming a timer");
  t->tag = TEND_TASK_INTERNAL;
  return 0;
}

/* executable() -> path of this tend binary */
static int l_executable(lua_State *L) {
  char buf[4096];
  size_t n = sizeof buf;
  if (uv_exepath(buf, &n) != 0) return 0;
  lua_pushlstring(L, buf, n);
  return 1;
}

/* list_dir(path) -> sorted names, or nil, message */
static int l_list_dir(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  uv_fs_t req;
  int r = uv_fs_scandir(NULL, &req, path, 0, NULL);
  if (r < 0) {
    uv_fs_req_cleanup(&req);
    lua_pushnil(L);
    lua_pushfstring(L, "%s: %s", path, uv_strerror(r));
    return 2;
  }
  lua_newtable(L);
  uv_dirent_t ent;
  int i = 0;
  while (uv_fs_scandir_next(&req, &ent) != UV_EOF) {
    lua_pushstring(L, ent.name);
    lua_rawseti(L, -2, ++i);
  }
  uv_fs_req_cleanup(&req);
  lua_getglobal(L, "table");
  lua_getfield(L, -1, "sort");
  lua_pushvalue(L, -3);
  lua_call(L, 1, 0);
  lua_pop(L, 1);
  return 1;
}

/* is_dir(path) -> boolean */
static int l_is_dir(lua_State *L) {
  uv_fs_t req;
  int r = uv_fs_stat(NULL, &req, luaL_checkstring(L, 1), NULL);
  lua_pushboolean(L, r == 0 && (req.statbuf.st_mode & S_IFMT) == S_IFDIR);
  uv_fs_req_cleanup(&req);
  return 1;
}

/* cpus() -> the processors this process may use (tend explore's --jobs). */
static int l_cpus(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)uv_available_parallelism());
  return 1;
}

/* isatty(fd) -> whether fd is a terminal (tend explore's progress line). */
static int l_isatty(lua_State *L) {
  lua_pushboolean(L, isatty((int)luaL_checkinteger(L, 1)));
  return 1;
}

/* mkdir(path) -> true, or nil and the error: an existing directory is
 * fine (tend explore's --out). */
static int l_mkdir(lua_State *L) {
  uv_fs_t req;
  const char *path = luaL_checkstring(L, 1);
  int r = uv_fs_mkdir(NULL, &req, path, 0777, NULL);
  uv_fs_req_cleanup(&req);
  if (r == UV_EEXIST) {
    uv_fs_t st;
    if (uv_fs_stat(NULL, &st, path, NULL) == 0 &&
        (st.statbuf.st_mode & S_IFMT) == S_IFDIR)
      r = 0;
    uv_fs_req_cleanup(&st);
  }
  if (r == 0) {
    lua_pushboolean(L, 1);
    return 1;
  }
  lua_pushnil(L);
  lua_pushfstring(L, "%s: %s", path, uv_strerror(r));
  return 2;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* check_keys(opts, known, fn) -> nil, or for a key of opts not in the set
 * known the message "fn: unknown option 'k' (expected one of: ...): did you
 * mean 'x'?" of the C-checked options, for the Lua-checked ones to raise. */
/* adopt(ref): the running actor adopts the proxy ref of an actor on
 * another scheduler (lua/tend/away.lua's stand-in) */
static int l_adopt(lua_State *L) {
  tend_schedulers_adopt(L, tend_host_of(L), 1, "adopt");
  return 0;
}

/* exit_code(n): the status the host ends with unless a shutdown says
 * another (tend test: 1 until its summary) */
static int l_exit_code(lua_State *L) {
  lua_Integer n = luaL_checkinteger(L, 1);
  tend_host_set_exit_code(tend_host_of(L), (int)(n & 255));
  return 0;
}

static int l_check_keys(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checktype(L, 2, LUA_TTABLE);
  const char *fn = luaL_checkstring(L, 3);
  const char *keys[65];
  int n = 0;
  lua_pushnil(L);
  while (lua_next(L, 2)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) == LUA_TSTRING && n < 64)
      keys[n++] = lua_tostring(L, -1);
  }
  keys[n] = NULL;
  qsort(keys, (size_t)n, sizeof keys[0], by_name);
  lua_pushnil(L);
  while (lua_next(L, 1)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) == LUA_TSTRING &&
        tend_find_name(keys, lua_tostring(L, -1)) >= 0)
      continue;
    tend_push_unknown_option(L, -1, keys, fn, "");
    return 1;
  }
  return 0;
}

int luaopen_tend_internal(lua_State *L) {
  static const luaL_Reg fns[] = {{"after", l_after},
                                 {"wall_clock", l_wall_clock},
                                 {"now_ns", l_now_ns},
                                 {"executable", l_executable},
                                 {"list_dir", l_list_dir},
                                 {"is_dir", l_is_dir},
                                 {"check_keys", l_check_keys},
                                 {"cpus", l_cpus},
                                 {"isatty", l_isatty},
                                 {"mkdir", l_mkdir},
                                 {"adopt", l_adopt},
                                 {"exit_code", l_exit_code},
                                 {NULL, NULL}};
  luaL_newlib(L, fns);
  return 1;
}
