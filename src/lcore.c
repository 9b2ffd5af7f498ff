/* lcore: the tend.core module: spawning and addressing actors from
 * anywhere, the clock, the generator, statistics and shutdown. */
#include <errno.h>
#include <lauxlib.h>
#include <lualib.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "repl.h"
#include "lbind.h"
#include "sched.h"
#include "value.h"

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

int tend_bad_option(lua_State *L, const char *fn, const char *opt,
                    const char *expected, int idx) {
  if (lua_type(L, idx) == LUA_TNUMBER || lua_type(L, idx) == LUA_TSTRING)
    return luaL_error(L, "%s: option '%s': expected %s, got %s (%s)", fn, opt,
                      expected, lua_tostring(L, idx), luaL_typename(L, idx));
  return luaL_error(L, "%s: option '%s': expected %s, got %s", fn, opt,
                    expected, tend_typename(L, idx));
}

int tend_find_name(const char *const *list, const char *s) {
  for (int i = 0; list[i]; i++)
    if (strcmp(list[i], s) == 0) return i;
  return -1;
}

void tend_add_seconds(luaL_Buffer *b, lua_State *L, int64_t ns) {
  lua_pushfstring(L, "%f", (double)ns / 1e9);
  const char *s = lua_tostring(L, -1); /* "60.000000" -> "60" */
  size_t n = strlen(s);
  while (n > 0 && s[n - 1] == '0') n--;
  if (n > 0 && s[n - 1] == '.') n--;
  lua_pushlstring(L, s, n);
  lua_remove(L, -2);
  luaL_addvalue(b);
}

void tend_push_sentinel(lua_State *L, tend_host *h, int i) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->sentinels_ref);
  lua_rawgeti(L, -1, i);
  lua_remove(L, -2);
}

/* tend.spawn(factory [, opts]) -> ref, under /user */
static int l_spawn(lua_State *L) {
  tend_host *h = tend_host_of(L);
  if (h->user == NULL) luaL_error(L, "tend.spawn: the host is shutting down");
  return tend_spawn_under(L, h->user, 0, "tend.spawn");
}

/* tend.stop(ref): stop any actor (normal stop). */
static int l_stop(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_ref *r = tend_ref_check(L, 1, "tend.stop", "ref");
  tend_actor *a = tend_ref_actor(h, r);
  if (a && !(a->flags & TEND_AF_GUARDIAN))
    tend_actor_stop(L, h, a, TEND_STOP_NORMAL);
  return 0;
}

/* tend.alive(ref) -> boolean (an ask's reply ref: true while pending) */
static int l_alive(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_ref *r = tend_ref_check(L, 1, "tend.alive", "ref");
  tend_actor *a = tend_slots_get(&h->ids, r->id, r->gen);
  lua_pushboolean(
      L, a && (a->kind == TEND_ENTITY_PROMISE || tend_ref_actor(h, r)));
  return 1;
}

/* tend.self() -> ref of the running actor, or nil */
static int l_self(lua_State *L) {
  tend_host *h = tend_host_of(L);
  if (h->current)
    tend_actor_push_ref(L, h, h->current);
  else
    lua_pushnil(L);
  return 1;
}

/* tend.now() -> seconds on the host clock */
static int l_now(lua_State *L) {
  tend_host *h = tend_host_of(L);
  lua_pushnumber(L, (double)tend_clock_now(&h->clock) / 1e9);
  return 1;
}

/* tend.random([m [, n]]): as math.random, from the host generator. */
static int l_random(lua_State *L) {
  tend_host *h = tend_host_of(L);
  lua_Integer lo, hi;
  switch (lua_gettop(L)) {
    case 0: lua_pushnumber(L, tend_rng_double(&h->rng)); return 1;
    case 1:
      lo = 1;
      hi = luaL_checkinteger(L, 1);
      if (hi == 0) { /* all bits */
        lua_pushinteger(L, (lua_Integer)tend_rng_next(&h->rng));
        return 1;
      }
      break;
    case 2:
      lo = luaL_checkinteger(L, 1);
      hi = luaL_checkinteger(L, 2);
      break;
    default:
      return luaL_error(L, "random: expected 0, 1 or 2 arguments, got %d",
                        lua_gettop(L));
  }
  luaL_argcheck(L, lo <= hi, lua_gettop(L), "interval is empty");
  uint64_t span = (uint64_t)hi - (uint64_t)lo;
  lua_pushinteger(L,
                  (lua_Integer)((uint64_t)lo + tend_rng_upto(&h->rng, span)));
  return 1;
}

/* math.randomseed(n): reseeds the host generator. */
static int l_randomseed(lua_State *L) {
  tend_host *h = tend_host_of(L);
  lua_Integer n = luaL_checkinteger(L, 1);
  h->seed = (uint64_t)n;
  tend_rng_seed(&h->rng, h->seed);
  return 0;
}

void tend_random_install(lua_State *L) {
  lua_getglobal(L, "math");
  lua_pushcfunction(L, l_random);
  lua_setfield(L, -2, "random");
  lua_pushcfunction(L, l_randomseed);
  lua_setfield(L, -2, "randomseed");
  lua_pop(L, 1);
}

/* tend.seed() -> the seed of this run */
static int l_seed(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)tend_host_of(L)->seed);
  return 1;
}

static void set_count(lua_State *L, const char *k, uint64_t v) {
  lua_pushinteger(L, (lua_Integer)v);
  lua_setfield(L, -2, k);
}

/* tend.stats() -> counters */
static int l_stats(lua_State *L) {
  tend_host *h = tend_host_of(L);
  uint32_t actors = 0;
  for (uint32_t i = 1; i < h->ids.n; i++) {
    tend_actor *a = h->ids.v[i].ptr;
    if (a && a->kind == TEND_ENTITY_ACTOR && !(a->flags & TEND_AF_GUARDIAN))
      actors++;
  }
  lua_createtable(L, 0, 8);
  set_count(L, "spawned", h->stats.spawned);
  set_count(L, "messages", h->stats.messages);
  set_count(L, "dead_letters", h->stats.dead_letters);
  set_count(L, "failures", h->stats.failures);
  set_count(L, "restarts", h->stats.restarts);
  set_count(L, "actors", actors);
  set_count(L, "timers", h->timers.n);
  set_count(L, "runnable", h->runq_len);
  set_count(L, "lua_bytes", h->lua_bytes);
  set_count(L, "c_bytes",
            (uint64_t)h->ids.cap * sizeof(tend_slot) +
                h->timers.records * sizeof(tend_timer) +
                (uint64_t)h->timers.cap * sizeof(tend_timer *) +
                h->msgs.allocated * sizeof(tend_msg) +
                (uint64_t)h->cap_free_values * sizeof(uint32_t));
  return 1;
}

/* tend.shutdown([code]): stops the whole tree, then the host exits with
 * code (default 0). Inside an actor it does not return. */
static int l_shutdown(lua_State *L) {
  tend_host *h = tend_host_of(L);
  lua_Integer code = luaL_optinteger(L, 1, 0);
  if (code < 0 || code > 255)
    luaL_error(L, "tend.shutdown: code: expected an integer in 0..255, got %I",
               code);
  tend_host_shutdown(h, (int)code);
  if (h->current && lua_isyieldable(L))
    return tend_sched_wait(L, h, TEND_WAIT_FOREVER, NULL);
  return 0;
}

/* tend.log(level, fmt, ...): a log line for the running actor (or host). */
static int l_log(lua_State *L) {
  tend_host *h = tend_host_of(L);
  int level = tend_log_parse(luaL_checkstring(L, 1));
  if (level < 0)
    luaL_error(L,
               "tend.log: level: expected error, warn, info or debug, got %s",
               lua_tostring(L, 1));
  if ((tend_log_level)level > h->log_level) return 0;
  int n = lua_gettop(L);
  lua_getglobal(L, "string");
  lua_getfield(L, -1, "format");
  for (int i = 2; i <= n; i++) lua_pushvalue(L, i);
  lua_call(L, n - 1, 1);
  if (h->current)
    tend_actor_push_path(L, h, h->current);
  else
    lua_pushnil(L);
  tend_host_log(h, (tend_log_level)level, lua_tostring(L, -1), "%s",
                lua_tostring(L, -2));
  return 0;
}

/* tend.trace(fn | true | false): fn joins the listeners (called between
 * turns with one table per event); true: JSON lines on stderr too; false:
 * no listeners, nothing on stderr (a --trace file keeps being written). */
static int l_trace(lua_State *L) {
  tend_host *h = tend_host_of(L);
  if (lua_isfunction(L, 1)) {
    if (h->trace_fn_ref <= 0) {
      lua_newtable(L);
      h->trace_fn_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, h->trace_fn_ref);
    lua_pushvalue(L, 1);
    lua_rawseti(L, -2, luaL_len(L, -2) + 1);
  } else if (lua_isboolean(L, 1)) {
    h->trace_stderr = lua_toboolean(L, 1);
    if (!h->trace_stderr) {
      luaL_unref(L, LUA_REGISTRYINDEX, h->trace_fn_ref);
      h->trace_fn_ref = LUA_NOREF;
    }
  } else {
    luaL_error(L, "tend.trace: expected a function or a boolean, got %s",
               tend_typename(L, 1));
  }
  return 0;
}

/* tend.trace_file(path): writes the trace to path from now on (what
 * --trace does); returns true, or nil and a message. */
static int l_trace_file(lua_State *L) {
  tend_host *h = tend_host_of(L);
  const char *path = luaL_checkstring(L, 1);
  tend_trace_close(h);
  if (tend_trace_open(h, path) != 0) {
    lua_pushnil(L);
    lua_pushfstring(L, "%s: %s", path, strerror(errno));
    return 2;
  }
  lua_pushboolean(L, 1);
  return 1;
}

/* tend.wall_clock() -> seconds of real time (never the virtual clock):
 * only for reports; anything computed from it is not replayable. */
static int l_wall_clock(lua_State *L) {
  lua_pushnumber(L, (double)uv_hrtime() / 1e9);
  return 1;
}

/* core.repl_print(...): print for the REPL: the values go above the prompt
 * and the line being edited is drawn again below them. */
static int l_repl_print(lua_State *L) {
  tend_host *h = tend_host_of(L);
  int n = lua_gettop(L);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int i = 1; i <= n; i++) {
    if (i > 1) luaL_addchar(&b, '\t');
    luaL_tolstring(L, i, NULL);
    luaL_addvalue(&b);
  }
  luaL_addchar(&b, '\n');
  luaL_pushresult(&b);
  tend_repl_output(h, 1);
  fwrite(lua_tostring(L, -1), 1, lua_rawlen(L, -1), stdout);
  fflush(stdout);
  tend_repl_output(h, 0);
  return 0;
}

/* core.repl_done(): /user/repl finished a chunk. */
static int l_repl_done(lua_State *L) {
  tend_repl_done(tend_host_of(L));
  return 0;
}

/* core.repl_register(ref): the actor that evaluates REPL lines. */
static int l_repl_register(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_ref *r = tend_ref_check(L, 1, "repl_register", "ref");
  h->repl_actor = tend_ref_actor(h, r);
  return 0;
}

/* tend.virtual_time() -> true under the virtual clock */
static int l_virtual_time(lua_State *L) {
  lua_pushboolean(L, tend_host_of(L)->clock.is_virtual);
  return 1;
}

/* tend.executable() -> path of this tend binary */
static int l_executable(lua_State *L) {
  char buf[4096];
  size_t n = sizeof buf;
  if (uv_exepath(buf, &n) != 0) return 0;
  lua_pushlstring(L, buf, n);
  return 1;
}

/* tend.list_dir(path) -> sorted names, or nil, message */
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

/* tend.is_dir(path) -> boolean */
static int l_is_dir(lua_State *L) {
  uv_fs_t req;
  int r = uv_fs_stat(NULL, &req, luaL_checkstring(L, 1), NULL);
  lua_pushboolean(L, r == 0 && (req.statbuf.st_mode & S_IFMT) == S_IFDIR);
  uv_fs_req_cleanup(&req);
  return 1;
}

int luaopen_tend_core(lua_State *L) {
  static const luaL_Reg fns[] = {{"spawn", l_spawn},

                                 {"ask", tend_l_ask},
                                 {"stop", l_stop},
                                 {"alive", l_alive},
                                 {"self", l_self},
                                 {"sleep", tend_l_sleep},
                                 {"now", l_now},
                                 {"after", tend_l_after},
                                 {"random", l_random},
                                 {"seed", l_seed},
                                 {"stats", l_stats},
                                 {"shutdown", l_shutdown},
                                 {"log", l_log},
                                 {"error", tend_l_error},
                                 {"raise", tend_l_raise},
                                 {"virtual_time", l_virtual_time},
                                 {"executable", l_executable},
                                 {"list_dir", l_list_dir},
                                 {"is_dir", l_is_dir},
                                 {"trace", l_trace},
                                 {"trace_file", l_trace_file},
                                 {"wall_clock", l_wall_clock},
                                 {"repl_print", l_repl_print},
                                 {"repl_done", l_repl_done},
                                 {"repl_register", l_repl_register},
                                 {NULL, NULL}};
  tend_host *h = tend_host_of(L);
  luaL_newlib(L, fns);
  tend_push_send(L, h);
  lua_setfield(L, -2, "send");
  tend_strategy_register(L);
  tend_inspect_register(L);
  tend_backoff_register(L);
  tend_chaos_register(L);
  tend_push_sentinel(L, h, 1);
  lua_setfield(L, -2, "stopped");
  tend_push_sentinel(L, h, 2);
  lua_setfield(L, -2, "unhandled");
  lua_pushliteral(L, TEND_VERSION);
  lua_setfield(L, -2, "version");
  return 1;
}
