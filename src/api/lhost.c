/* lhost: the host from Lua: stopping and addressing any actor, the clock,
 * the generator (also behind math.random), statistics, logging, tracing
 * and shutdown. */
#include <errno.h>
#include <string.h>

#include "api/api.h"

/* tend.stop(ref): stop any actor: a normal stop, or "shutdown" when its
 * supervisor calls it (as ctx:stop(child)). An actor that stops
 * itself finishes its message first (Akka); a task (the main chunk,
 * tend.after) that stops itself ends there: it does not return. */
static int l_stop(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_ref *r = tend_check_ref(L, 1, "tend.stop", "ref");
  tend_actor *a = tend_ref_actor(h, r);
  if (a == NULL || tend_actor_is_guardian(a)) return 0;
  tend_actor_stop(
      L, h, a,
      tend_host_current(h) && tend_actor_parent(a) == tend_host_current(h)
          ? TEND_STOP_BY_PARENT
          : TEND_STOP_NORMAL);
  if (a == tend_host_current(h) && tend_actor_is_task(a) && lua_isyieldable(L))
    return tend_sched_wait(L, h, TEND_WAIT_FOREVER, NULL);
  return 0;
}

/* tend.alive(ref) -> boolean (an ask's reply ref: true while pending; a
 * proxy whose node is not connected: false) */
static int l_alive(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_ref *r = tend_check_ref(L, 1, "tend.alive", "ref");
  int found;
  tend_actor *a = tend_host_entity(h, r->id, r->gen, &found);
  lua_pushboolean(L, found && (a == NULL || (tend_ref_actor(h, r) &&
                                             !tend_actor_is_disconnected(a))));
  return 1;
}

/* tend.self() -> ref of the running actor, or nil */
static int l_self(lua_State *L) {
  tend_host *h = tend_host_of(L);
  if (tend_host_current(h))
    tend_actor_push_ref(L, h, tend_host_current(h));
  else
    lua_pushnil(L);
  return 1;
}

/* tend.now() -> seconds on the host clock */
static int l_now(lua_State *L) {
  tend_host *h = tend_host_of(L);
  lua_pushnumber(L, (double)tend_host_now(h) / 1e9);
  return 1;
}

/* tend.random([m [, n]]): as math.random, from the host generator. */
static int l_random(lua_State *L) {
  tend_host *h = tend_host_of(L);
  lua_Integer lo, hi;
  switch (lua_gettop(L)) {
    case 0: lua_pushnumber(L, tend_rng_double(tend_host_rng(h))); return 1;
    case 1:
      lo = 1;
      hi = luaL_checkinteger(L, 1);
      if (hi == 0) { /* all bits */
        lua_pushinteger(L, (lua_Integer)tend_rng_next(tend_host_rng(h)));
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
  lua_pushinteger(
      L, (lua_Integer)((uint64_t)lo + tend_rng_upto(tend_host_rng(h), span)));
  return 1;
}

/* math.randomseed(n): reseeds the host generator. */
static int l_randomseed(lua_State *L) {
  tend_host *h = tend_host_of(L);
  lua_Integer n = luaL_checkinteger(L, 1);
  tend_host_reseed(h, (uint64_t)n);
  return 0;
}

/* tend.seed() -> the seed of this run */
static int l_seed(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)tend_host_seed(tend_host_of(L)));
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
  if (tend_host_current(h) && lua_isyieldable(L))
    return tend_sched_wait(L, h, TEND_WAIT_FOREVER, NULL);
  return 0;
}

/* A log line from a (NULL: the host): level at index first, then the
 * format and its arguments. */
static int log_line(lua_State *L, tend_actor *a, int first, const char *fn) {
  tend_host *h = tend_host_of(L);
  int level = tend_log_parse(luaL_checkstring(L, first));
  if (level < 0)
    luaL_error(L, "%s: level: expected error, warn, info or debug, got %s", fn,
               lua_tostring(L, first));
  if ((tend_log_level)level > tend_host_log_level(h)) return 0;
  int n = lua_gettop(L);
  lua_getglobal(L, "string");
  lua_getfield(L, -1, "format");
  for (int i = first + 1; i <= n; i++) lua_pushvalue(L, i);
  lua_call(L, n - first, 1);
  if (a)
    tend_actor_push_path(L, h, a);
  else
    lua_pushnil(L);
  tend_host_log(h, (tend_log_level)level, lua_tostring(L, -1), "%s",
                lua_tostring(L, -2));
  return 0;
}

/* tend.log(level, fmt, ...): a log line for the running actor (or host). */
static int l_log(lua_State *L) {
  return log_line(L, tend_host_current(tend_host_of(L)), 1, "tend.log");
}

/* ctx:log(level, fmt, ...) */
static int l_ctx_log(lua_State *L) {
  return log_line(L, tend_check_own_ctx(L, 1, "ctx:log"), 2, "ctx:log");
}

/* tend.trace{ internal = bool }: the events of tend's own tasks (each
 * simulated transfer, the REPL's watch) are shown or not (also in
 * tend.tree and tend.ps); as --trace-internal. */
static void trace_options(lua_State *L, tend_host *h) {
  lua_pushnil(L);
  while (lua_next(L, 1)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TSTRING ||
        strcmp(lua_tostring(L, -1), "internal") != 0)
      luaL_error(L, "tend.trace: expected the option internal, got %s",
                 lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1)
                                                : tend_typename(L, -1));
  }
  lua_getfield(L, 1, "internal");
  if (!lua_isboolean(L, -1))
    luaL_error(L, "tend.trace: internal: expected a boolean, got %s",
               tend_typename(L, -1));
  tend_trace_set_internal(h, lua_toboolean(L, -1));
}

/* tend.trace(fn | true | false | opts): fn joins the listeners (called
 * between turns with one table per event); true: JSON lines on stderr too;
 * false: no listeners, nothing on stderr (a --trace file keeps being
 * written); opts: trace_options. */
static int l_trace(lua_State *L) {
  tend_host *h = tend_host_of(L);
  if (lua_istable(L, 1)) {
    trace_options(L, h);
  } else if (lua_isfunction(L, 1)) {
    tend_trace_listen(L, h, 1);
  } else if (lua_isboolean(L, 1)) {
    tend_trace_set_stderr(L, h, lua_toboolean(L, 1));
  } else {
    luaL_error(L,
               "tend.trace: expected a function, a boolean or "
               "{ internal = boolean }, got %s",
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

/* tend.copy_messages() -> true under --copy-messages */
static int l_copy_messages(lua_State *L) {
  lua_pushboolean(L, tend_host_copies(tend_host_of(L)));
  return 1;
}

/* tend.virtual_time() -> true under the virtual clock */
/* core.clock_hold([on]) -> held: the observer's pause of the virtual
 * clock (on true holds it, false lets it go, nil asks); raises under the
 * real clock. core.clock_step() -> now: one jump of the held clock is
 * granted (taken when no actor can run). */
static int l_clock_hold(lua_State *L) {
  tend_host *h = tend_host_of(L);
  if (!tend_host_virtual(h))
    return luaL_error(L, "the clock can be held only under --virtual-time");
  if (!lua_isnoneornil(L, 1)) tend_host_hold(h, lua_toboolean(L, 1));
  lua_pushboolean(L, tend_host_held(h));
  return 1;
}
static int l_clock_step(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_host_step(h);
  lua_pushnumber(L, (double)tend_host_now(h) / 1e9);
  return 1;
}

static int l_virtual_time(lua_State *L) {
  lua_pushboolean(L, tend_host_virtual(tend_host_of(L)));
  return 1;
}

/* print(...): as Lua's, through the host (a closed stdout stops the tree
 * instead of killing the process; output goes above the REPL's prompt). */
static int l_print(lua_State *L) {
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
  size_t len;
  const char *text = lua_tolstring(L, -1, &len);
  tend_host_print(tend_host_of(L), text, len);
  return 0;
}

/* coroutine.yield(...): as Lua's, but in an actor's own code (whose
 * coroutine belongs to the scheduler) it raises BadYield: only tend may
 * suspend an actor (ctx:sleep, tend.ask). In a coroutine the actor made,
 * it yields as usual. */
static int l_yield(lua_State *L) {
  tend_host *h = tend_host_of(L);
  if (L == tend_host_resumed(h)) {
    tend_error_new(L, TEND_ERR_NAME(BAD_YIELD),
                   "coroutine.yield called in an actor's own code, not in a "
                   "coroutine it made (to wait, use ctx:sleep or tend.ask)");
    return lua_error(L);
  }
  return lua_yield(L, lua_gettop(L));
}

/* Calls upvalue 1 with the arguments, co recorded as the innermost
 * coroutine the actor runs while it does (so that a loop there is
 * preempted as in the actor's own code); its error goes on, a text one
 * with where the caller is when where (as Lua's wrap does). When co
 * waits in tend (an ask, a sleep), the actor waits, then co is resumed
 * again (again_k): the call returns what co yields or returns next, as
 * if its code had run in the actor's own (runtime/core/fiber.h). The
 * stack below the call: [1] co. */
static int again_k(lua_State *L, int status, lua_KContext where);

static int resume_call(lua_State *L, lua_State *co, int where) {
  tend_host *h = tend_host_of(L);
  int base = 1; /* [1] co, kept for again_k */
  lua_State *before = tend_preempt_inner(h, co);
  int yieldable = tend_sched_nested_begin(L, h);
  int status = lua_pcall(L, lua_gettop(L) - base - 1, LUA_MULTRET, 0);
  int waits = tend_sched_nested_end(h, yieldable);
  tend_preempt_inner(h, before);
  if (status == LUA_OK && waits) {
    lua_settop(L, base);
    return tend_sched_nested_wait(L, h, (lua_KContext)where, again_k);
  }
  if (status != LUA_OK && where && lua_type(L, -1) == LUA_TSTRING) {
    luaL_where(L, 1);
    lua_insert(L, -2);
    lua_concat(L, 2);
  }
  if (status != LUA_OK) return lua_error(L);
  return lua_gettop(L) - base;
}

/* After the actor's wait for co (stack [1] co): resumes co again, with
 * nothing (its wait's continuation reads how the wait ended). */
static int again_k(lua_State *L, int status, lua_KContext where) {
  (void)status;
  lua_settop(L, 1);
  lua_pushvalue(L, lua_upvalueindex(1));
  if (!where) lua_pushvalue(L, 1); /* coroutine.resume(co) */
  return resume_call(L, lua_tothread(L, 1), (int)where);
}

/* coroutine.resume(co, ...): Lua's (upvalue 1), co recorded. */
static int l_resume(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTHREAD);
  lua_pushvalue(L, 1);
  lua_insert(L, 1); /* [1] co, then Lua's resume(co, ...) */
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 2);
  return resume_call(L, lua_tothread(L, 1), 0);
}

/* The function coroutine.wrap returns: Lua's (upvalue 1), its coroutine
 * (upvalue 2) recorded. */
static int l_wrapped(lua_State *L) {
  lua_pushvalue(L, lua_upvalueindex(2));
  lua_insert(L, 1); /* [1] co, then Lua's wrapped function(...) */
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 2);
  return resume_call(L, lua_tothread(L, 1), 1);
}

/* coroutine.wrap(f): Lua's (upvalue 1), whose function keeps its
 * coroutine as its first upvalue; that function, co recorded. */
static int l_wrap(lua_State *L) {
  lua_settop(L, 1);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, 1, 1);
  if (lua_getupvalue(L, 1, 1) == NULL) return 1;
  if (!lua_isthread(L, 2)) {
    lua_pop(L, 1);
    return 1;
  }
  lua_pushcclosure(L, l_wrapped, 2);
  return 1;
}

/* os.exit(code, close): Lua's (upvalue 1), after what the host holds in
 * buffers is written: the trace file's lines, the events queued for the
 * tend.trace functions, stdout. Nothing else runs: no actor stops, no
 * post_stop (tend.shutdown does that). */
static int l_os_exit(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_host *w = tend_host_world(h) ? tend_host_world(h)
                                    : h; /* a node's trace is its world's */
  tend_event_flush(L, h);
  tend_trace_close(w);
  fflush(NULL);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 0);
  return 0;
}

void tend_open_hostlib(lua_State *L) {
  static const luaL_Reg fns[] = {{"stop", l_stop},
                                 {"alive", l_alive},
                                 {"self", l_self},
                                 {"now", l_now},
                                 {"random", l_random},
                                 {"seed", l_seed},
                                 {"shutdown", l_shutdown},
                                 {"log", l_log},
                                 {"trace", l_trace},
                                 {"trace_file", l_trace_file},
                                 {"virtual_time", l_virtual_time},
                                 {"clock_hold", l_clock_hold},
                                 {"clock_step", l_clock_step},
                                 {"copy_messages", l_copy_messages},
                                 {NULL, NULL}};
  static const luaL_Reg ctx[] = {{"log", l_ctx_log}, {NULL, NULL}};
  tend_host *h = tend_host_of(L);
  luaL_setfuncs(L, fns, 0);
  tend_ctx_add_methods(L, ctx);
  tend_host_push_sentinel(L, h, TEND_SENTINEL_STOPPED);
  lua_setfield(L, -2, "stopped");
  tend_host_push_sentinel(L, h, TEND_SENTINEL_UNHANDLED);
  lua_setfield(L, -2, "unhandled");
  lua_pushliteral(L, TEND_VERSION);
  lua_setfield(L, -2, "version");
  lua_getglobal(L, "math"); /* math.random: the host generator too */
  lua_pushcfunction(L, l_random);
  lua_setfield(L, -2, "random");
  lua_pushcfunction(L, l_randomseed);
  lua_setfield(L, -2, "randomseed");
  lua_pop(L, 1);
  lua_pushcfunction(L, l_print);
  lua_setglobal(L, "print");
  lua_getglobal(L, "os");
  lua_getfield(L, -1, "exit");
  lua_pushcclosure(L, l_os_exit, 1);
  lua_setfield(L, -2, "exit");
  lua_pop(L, 1);
  lua_getglobal(L, "coroutine");
  lua_pushcfunction(L, l_yield);
  lua_setfield(L, -2, "yield");
  lua_getfield(L, -1, "resume");
  lua_pushcclosure(L, l_resume, 1);
  lua_setfield(L, -2, "resume");
  lua_getfield(L, -1, "wrap");
  lua_pushcclosure(L, l_wrap, 1);
  lua_setfield(L, -2, "wrap");
  lua_pop(L, 1);
}
