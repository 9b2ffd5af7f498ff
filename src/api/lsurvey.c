/* lsurvey: looking at the whole process: tend.ps, tend.tree,
 * tend.stats and tend.scheduler. With several schedulers each answers for
 * itself (its own state, on its own thread) and the answers are put together:
 * one tree under one /user, counters summed and broken down per scheduler.
 * Under the real clock the caller waits for each other scheduler in turn, as
 * for an ask (outside an actor it sees its own scheduler only). */
#include <stdio.h>
#include <string.h>

#include "api/api.h"

#define SURVEY_TIMEOUT 5.0 /* seconds another scheduler has to answer */

/* Appends a row for a and its subtree to the list at `list`. */
static void ps_walk(lua_State *L, tend_host *h, tend_actor *a, int list,
                    int depth) {
  if (tend_actor_is_internal(a) && !tend_trace_shows_internal(h)) return;
  if (tend_actor_is_remote(a))
    return; /* a stand-in's (away.lua): listed
               where it lives */
  lua_createtable(L, 0, 6);
  tend_actor_push_path(L, h, a);
  lua_setfield(L, -2, "path");
  lua_pushstring(L, tend_actor_state_name(a));
  lua_setfield(L, -2, "state");
  lua_pushinteger(L, tend_actor_restarts(a));
  lua_setfield(L, -2, "restarts");
  lua_pushinteger(L, tend_actor_mailbox_size(a));
  lua_setfield(L, -2, "mailbox");
  lua_pushinteger(L, depth);
  lua_setfield(L, -2, "depth");
  double busy = tend_actor_busy_seconds(a);
  if (busy >= 0) {
    lua_pushnumber(L, busy);
    lua_setfield(L, -2, "busy");
  }
  tend_actor_push_ref(L, h, a);
  lua_setfield(L, -2, "ref");
  int pid = tend_process_pid_of(h, a);
  if (pid > 0) { /* an OS process actor */
    lua_pushinteger(L, pid);
    lua_setfield(L, -2, "pid");
  }
  char sock[96];
  if (tend_tcp_describe(h, a, sock, sizeof sock) == 0 ||
      tend_httpd_describe(h, a, sock, sizeof sock) == 0) { /* a socket's */
    lua_pushstring(L, sock);
    lua_setfield(L, -2, "socket");
  }
  const tend_strategy *st = tend_actor_strategy(a);
  tend_backoff_sup *bo = tend_backoff_of(a);
  if (bo) { /* a backoff supervisor: restarts its one child after a delay */
    lua_pushstring(L, "backoff");
    lua_setfield(L, -2, "strategy");
    lua_pushinteger(L, (lua_Integer)tend_backoff_restarts(bo));
    lua_setfield(L, -2, "backoff_restarts");
    lua_pushboolean(L, tend_backoff_current_child(h, bo) == NULL);
    lua_setfield(L, -2, "backing_off"); /* no child now: waiting to restart */
  } else if (st || tend_actor_first_child(a)) { /* its children's */
    static const char *const kinds[] = {"one_for_one", "all_for_one",
                                        "rest_for_one"};
    lua_pushstring(L, !st            ? "one_for_one"
                      : st->stopping ? "stopping"
                                     : kinds[st->kind]);
    lua_setfield(L, -2, "strategy");
  }
  lua_rawseti(L, list, (lua_Integer)luaL_len(L, list) + 1);
  for (tend_actor *c = tend_actor_first_child(a); c;
       c = tend_actor_next_sibling(c))
    ps_walk(L, h, c, list, depth + 1);
}

/* This scheduler's rows: {{path, state, restarts, mailbox, depth, ref
 * [, busy, pid, socket, strategy, backoff_restarts, backing_off]}, ...} in
 * tree order (the /user tree, then
 * /system); busy: seconds the current call of a preempted actor has run */
static int ps_local(lua_State *L) {
  tend_host *h = tend_host_of(L);
  lua_newtable(L);
  int list = lua_gettop(L);
  if (tend_host_user(h)) ps_walk(L, h, tend_host_user(h), list, 0);
  if (tend_host_system(h)) ps_walk(L, h, tend_host_system(h), list, 0);
  return 1;
}

static void set_count(lua_State *L, const char *k, uint64_t v) {
  lua_pushinteger(L, (lua_Integer)v);
  lua_setfield(L, -2, k);
}

/* This scheduler's counters. */
static int stats_local(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_counts c;
  tend_host_counts(h, &c);
  lua_createtable(L, 0, 10);
  set_count(L, "spawned", c.spawned);
  set_count(L, "messages", c.messages);
  set_count(L, "dead_letters", c.dead_letters);
  set_count(L, "failures", c.failures);
  set_count(L, "restarts", c.restarts);
  set_count(L, "unhandled", c.unhandled);
  set_count(L, "actors", c.actors);
  set_count(L, "timers", c.timers);
  set_count(L, "runnable", c.runnable);
  set_count(L, "lua_bytes", c.lua_bytes);
  set_count(L, "c_bytes", c.c_bytes);
  return 1;
}

/* The rows at list as text, one actor a line (tend.tree). Each line is
 * made with the buffer's stack balanced (luaL_Buffer needs it: a value
 * left above the buffer's box corrupts it once the text outgrows the
 * stack buffer). */
static int tree_text(lua_State *L, int list) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  lua_Integer n = luaL_len(L, list);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_rawgeti(L, list, i);
    lua_getfield(L, -1, "depth");
    lua_Integer depth = lua_tointeger(L, -1);
    lua_getfield(L, -2, "pid");
    lua_getfield(L, -3, "socket");
    lua_getfield(L, -4, "scheduler");
    char pid[160] = "";
    int at = 0;
    if (lua_isinteger(L, -3))
      at = snprintf(pid, sizeof pid, " pid=%lld",
                    (long long)lua_tointeger(L, -3));
    else if (lua_isstring(L, -2))
      at = snprintf(pid, sizeof pid, " %.100s", lua_tostring(L, -2));
    if (lua_isinteger(L, -1) && depth > 0)
      snprintf(pid + at, sizeof pid - (size_t)at, " sched=%lld",
               (long long)lua_tointeger(L, -1));
    lua_pop(L, 5); /* balanced again: the buffer may be used */
    for (lua_Integer d = depth; d > 0; d--) luaL_addstring(&b, "  ");
    lua_rawgeti(L, list, i);
    lua_getfield(L, -1, "path");
    lua_getfield(L, -2, "state");
    lua_getfield(L, -3, "restarts");
    lua_getfield(L, -4, "mailbox");
    lua_getfield(L, -5, "busy");
    const char *path = lua_tostring(L, -5);
    const char *slash = strrchr(path, '/');
    char busy[48] = "";
    if (lua_isnumber(L, -1))
      snprintf(busy, sizeof busy, " %.1f s", (double)lua_tonumber(L, -1));
    lua_pushfstring(L, "%s [%s%s] restarts=%I mailbox=%I%s\n",
                    slash && depth > 0 ? slash + 1 : path, lua_tostring(L, -4),
                    busy, lua_tointeger(L, -3), lua_tointeger(L, -2), pid);
    lua_replace(L, -7); /* the line where the row was */
    lua_pop(L, 5);
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
  return 1;
}

/* ------------------------------------------------------ putting together */

/* The rows of scheduler k's list at src, from row `from` to row `to`
 * (inclusive), are appended to the list at dst, tagged with k when the
 * process has several schedulers; its roots (depth 0) only when keep. */
static void append_rows(lua_State *L, int dst, int src, lua_Integer from,
                        lua_Integer to, int k, int several, int keep) {
  for (lua_Integer i = from; i <= to; i++) {
    lua_rawgeti(L, src, i);
    lua_getfield(L, -1, "depth");
    int root = lua_tointeger(L, -1) == 0;
    lua_pop(L, 1);
    if (root && !keep) {
      lua_pop(L, 1);
      continue;
    }
    if (several) {
      lua_pushinteger(L, k);
      lua_setfield(L, -2, "scheduler");
    }
    lua_rawseti(L, dst, (lua_Integer)luaL_len(L, dst) + 1);
  }
}

/* Where the /system part of a scheduler's rows (at list) begins: its
 * second root, or past the end. */
static lua_Integer system_part(lua_State *L, int list) {
  lua_Integer n = luaL_len(L, list);
  for (lua_Integer i = 2; i <= n; i++) {
    lua_rawgeti(L, list, i);
    lua_getfield(L, -1, "depth");
    int root = lua_tointeger(L, -1) == 0;
    lua_pop(L, 2);
    if (root) return i;
  }
  return n + 1;
}

/* [1] each scheduler's rows (index k+1) -> one list: the /user tree of
 * scheduler 0 with the /user children of the others after its own, then
 * the /system trees the same way. */
static void merge_rows(lua_State *L, int n) {
  lua_newtable(L);
  int dst = lua_gettop(L);
  for (int part = 0; part < 2; part++) {
    for (int k = 0; k < n; k++) {
      if (lua_rawgeti(L, 1, k + 1) != LUA_TTABLE) {
        lua_pop(L, 1); /* it did not answer: stopping */
        continue;
      }
      int src = lua_gettop(L);
      lua_Integer sys = system_part(L, src);
      if (part == 0)
        append_rows(L, dst, src, 1, sys - 1, k, n > 1, k == 0);
      else
        append_rows(L, dst, src, sys, luaL_len(L, src), k, n > 1, k == 0);
      lua_pop(L, 1);
    }
  }
}

static int merge_ps(lua_State *L, int n) {
  merge_rows(L, n);
  return 1;
}

static int merge_tree(lua_State *L, int n) {
  merge_rows(L, n);
  return tree_text(L, lua_gettop(L));
}

/* [1] each scheduler's counters -> their sums, and with several
 * schedulers `schedulers`: the list of each one's (index k+1). */
static int merge_stats(lua_State *L, int n) {
  if (n == 1) {
    lua_rawgeti(L, 1, 1);
    return 1;
  }
  lua_newtable(L);
  int sum = lua_gettop(L);
  for (int k = 0; k < n; k++) {
    if (lua_rawgeti(L, 1, k + 1) != LUA_TTABLE) {
      lua_pop(L, 1);
      continue;
    }
    lua_pushnil(L);
    while (lua_next(L, -2)) {
      if (lua_isinteger(L, -1)) {
        lua_pushvalue(L, -2);
        lua_rawget(L, sum);
        lua_Integer had = lua_tointeger(L, -1);
        lua_pop(L, 1);
        lua_pushvalue(L, -2);
        lua_pushinteger(L, had + lua_tointeger(L, -2));
        lua_rawset(L, sum);
      }
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
  lua_pushvalue(L, 1);
  lua_setfield(L, sum, "schedulers");
  return 1;
}

/* ------------------------------------------------------ asking each one */

typedef struct survey {
  lua_CFunction local;               /* one scheduler's answer, in its state */
  int (*merge)(lua_State *L, int n); /* [1] the answers -> the result */
  const char *fn;
} survey;

static int survey_next(lua_State *L);

/* Continues once scheduler [2] answered: [1] answers [2] k [3] survey. */
static int survey_k(lua_State *L, int status, lua_KContext ctx) {
  (void)status;
  (void)ctx;
  const survey *s = lua_touserdata(L, 3);
  tend_host *h = tend_host_of(L);
  int k = (int)lua_tointeger(L, 2);
  if (tend_sched_woken(L, h) != TEND_WAKE_OK) /* raises if interrupted */
    return luaL_error(L, "%s: scheduler %d did not answer within %d s", s->fn,
                      k, (int)SURVEY_TIMEOUT);
  tend_sched_take_reply(L, h);
  if (lua_getfield(L, -1, "error") != LUA_TNIL)
    return luaL_error(L, "%s: scheduler %d: %s", s->fn, k, lua_tostring(L, -1));
  lua_getfield(L, -2, "value");
  lua_rawseti(L, 1, k + 1);
  lua_settop(L, 3);
  lua_pushinteger(L, k + 1);
  lua_replace(L, 2);
  return survey_next(L);
}

/* Asks the next scheduler from [2] on (not this one), or puts the answers
 * together: [1] answers [2] k [3] survey. */
static int survey_next(lua_State *L) {
  const survey *s = lua_touserdata(L, 3);
  tend_host *h = tend_host_of(L);
  int n = tend_schedulers_count(h), me = tend_schedulers_index(h);
  for (int k = (int)lua_tointeger(L, 2); k < n; k++) {
    if (k == me) continue;
    tend_actor *a = tend_sched_check_wait(L, h, s->fn);
    tend_promise *p =
        tend_promise_new(L, h, a, tend_clock_ns(SURVEY_TIMEOUT), s->fn);
    if (tend_schedulers_query_request(h, k, s->local, tend_promise_id(p),
                                      tend_promise_gen(p)) != 0) {
      tend_promise_cancel(L, h, a); /* stopping: no answer */
      continue;
    }
    lua_pushinteger(L, k);
    lua_replace(L, 2);
    return tend_sched_wait(
        L, h, tend_actor_has_promise(a) ? TEND_WAIT_ASK : TEND_WAIT_WOKEN,
        survey_k);
  }
  lua_settop(L, 1);
  return s->merge(L, n);
}

/* The survey s of every scheduler. */
static int survey_all(lua_State *L, const survey *s) {
  tend_host *h = tend_host_of(L);
  int n = tend_schedulers_count(h), me = tend_schedulers_index(h);
  lua_settop(L, 0);
  lua_createtable(L, n, 0); /* [1] the answers */
  lua_pushcfunction(L, s->local);
  lua_call(L, 0, 1);
  lua_rawseti(L, 1, me + 1);
  if (n > 1 && !tend_schedulers_threaded(h)) { /* one thread: at once */
    for (int k = 0; k < n; k++) {
      if (k == me) continue;
      tend_schedulers_query_now(L, h, k, s->local, s->fn);
      lua_rawseti(L, 1, k + 1);
    }
  } else if (n > 1 && tend_host_current(h) && lua_isyieldable(L)) {
    lua_pushinteger(L, 0);
    lua_pushlightuserdata(L, (void *)s);
    return survey_next(L);
  }
  return s->merge(L, n);
}

/* tend.ps() -> {{path, state, restarts, mailbox, depth, ref [, busy, pid,
 * socket, scheduler]}, ...}: every scheduler's rows (scheduler: which
 * one, with several) */
static int l_ps(lua_State *L) {
  static const survey s = {ps_local, merge_ps, "tend.ps"};
  return survey_all(L, &s);
}

/* tend.tree() -> the tree as text, one actor a line */
static int l_tree(lua_State *L) {
  static const survey s = {ps_local, merge_tree, "tend.tree"};
  return survey_all(L, &s);
}

/* tend.stats() -> counters (summed over the schedulers; with several,
 * `schedulers` lists each one's) */
static int l_stats(lua_State *L) {
  static const survey s = {stats_local, merge_stats, "tend.stats"};
  return survey_all(L, &s);
}

/* tend.scheduler() -> k, n: the scheduler the caller runs on (0..n-1) and
 * how many the process has */
static int l_scheduler(lua_State *L) {
  tend_host *h = tend_host_of(L);
  lua_pushinteger(L, tend_schedulers_index(h));
  lua_pushinteger(L, tend_schedulers_count(h));
  return 2;
}

void tend_open_survey(lua_State *L) {
  static const luaL_Reg fns[] = {{"ps", l_ps},
                                 {"tree", l_tree},
                                 {"stats", l_stats},
                                 {"scheduler", l_scheduler},
                                 {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
}
