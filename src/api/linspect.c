/* linspect: looking inside and reaching in: tend.tree, tend.ps,
 * tend.kill, DeathWatch from Lua (ctx:watch, tend.watch). */
#include <stdio.h>
#include <string.h>

#include "api/api.h"

/* Appends a row for a and its subtree to the list at `list`. */
static void ps_walk(lua_State *L, tend_host *h, tend_actor *a, int list,
                    int depth) {
  if (tend_actor_is_internal(a) && !tend_trace_shows_internal(h)) return;
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
  lua_rawseti(L, list, (lua_Integer)luaL_len(L, list) + 1);
  for (tend_actor *c = tend_actor_first_child(a); c;
       c = tend_actor_next_sibling(c))
    ps_walk(L, h, c, list, depth + 1);
}

/* tend.ps() -> {{path, state, restarts, mailbox, depth, ref [, busy]}, ...}
 * in tree order (the /user tree, then /system); busy: seconds the current
 * call of a preempted actor has run */
static int l_ps(lua_State *L) {
  tend_host *h = tend_host_of(L);
  lua_newtable(L);
  int list = lua_gettop(L);
  if (tend_host_user(h)) ps_walk(L, h, tend_host_user(h), list, 0);
  if (tend_host_system(h)) ps_walk(L, h, tend_host_system(h), list, 0);
  return 1;
}

/* tend.tree() -> the tree as text, one actor a line. Each line is made
 * with the buffer's stack balanced (luaL_Buffer needs it: a value left
 * above the buffer's box corrupts it once the text outgrows the stack
 * buffer). */
static int l_tree(lua_State *L) {
  l_ps(L);
  int list = lua_gettop(L);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  lua_Integer n = luaL_len(L, list);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_rawgeti(L, list, i);
    lua_getfield(L, -1, "depth");
    lua_Integer depth = lua_tointeger(L, -1);
    lua_getfield(L, -2, "pid");
    lua_getfield(L, -3, "socket");
    char pid[128] = "";
    if (lua_isinteger(L, -2))
      snprintf(pid, sizeof pid, " pid=%lld", (long long)lua_tointeger(L, -2));
    else if (lua_isstring(L, -1))
      snprintf(pid, sizeof pid, " %s", lua_tostring(L, -1));
    lua_pop(L, 4); /* balanced again: the buffer may be used */
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

/* tend.kill(ref): queues a Kill (Akka): the actor fails with Killed when
 * it reaches it in its mailbox, as if its code raised it there. A task
 * (the main chunk, tend.after) that kills itself raises at once. */
static int l_kill(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_ref *r = tend_check_ref(L, 1, "tend.kill", "ref");
  tend_actor *a = tend_ref_actor(h, r);
  if (a == NULL || tend_actor_is_guardian(a)) return 0;
  if (a == tend_host_current(h) && tend_actor_is_task(a)) {
    tend_actor_push_killed(L, h, a);
    return lua_error(L);
  }
  tend_actor_send_kill(h, a);
  return 0;
}

/* tend.poison(ref): queues a PoisonPill (Akka): the actor stops normally
 * when it reaches it, after the messages sent before it. A task has no
 * behavior to reach it: it stops at once (as with tend.stop). */
static int l_poison(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_ref *r = tend_check_ref(L, 1, "tend.poison", "ref");
  tend_actor *a = tend_ref_actor(h, r);
  if (a == NULL || tend_actor_is_guardian(a)) return 0;
  if (tend_actor_is_task(a)) {
    tend_actor_stop(L, h, a, TEND_STOP_NORMAL);
    if (a == tend_host_current(h) && lua_isyieldable(L))
      return tend_sched_wait(L, h, TEND_WAIT_FOREVER, NULL);
    return 0;
  }
  tend_actor_send_poison(h, a);
  return 0;
}

/* The watcher for a watch call: ctx at 1 (ctx form) or the running actor. */
static tend_actor *watcher(lua_State *L, tend_host *h, int ctx_form,
                           const char *fn) {
  if (ctx_form) return tend_check_own_ctx(L, 1, fn);
  if (tend_host_current(h) == NULL)
    luaL_error(L, "%s: only an actor can watch", fn);
  return tend_host_current(h);
}

static int watch(lua_State *L, int ctx_form, const char *fn) {
  tend_host *h = tend_host_of(L);
  tend_actor *w = watcher(L, h, ctx_form, fn);
  int at = ctx_form ? 2 : 1;
  tend_ref *r = tend_check_ref(L, at, fn, "ref");
  if (tend_actor_state_of(w) == TEND_ACTOR_DEAD) return 0;
  tend_watch_add(L, h, w, r->id, r->gen, at,
                 lua_isnoneornil(L, at + 1) ? 0 : at + 1);
  lua_pushvalue(L, at);
  return 1;
}

static int unwatch(lua_State *L, int ctx_form, const char *fn) {
  tend_host *h = tend_host_of(L);
  tend_actor *w = watcher(L, h, ctx_form, fn);
  int at = ctx_form ? 2 : 1;
  tend_ref *r = tend_check_ref(L, at, fn, "ref");
  tend_watch_remove(L, h, w, r->id, r->gen);
  lua_pushvalue(L, at);
  return 1;
}

/* ctx:watch(ref [, msg]) -> ref */
static int l_ctx_watch(lua_State *L) {
  return watch(L, 1, "ctx:watch");
}
/* ctx:unwatch(ref) -> ref */
static int l_ctx_unwatch(lua_State *L) {
  return unwatch(L, 1, "ctx:unwatch");
}
/* tend.watch(ref [, msg]): the running actor watches ref */
static int l_watch(lua_State *L) {
  return watch(L, 0, "tend.watch");
}
static int l_unwatch(lua_State *L) {
  return unwatch(L, 0, "tend.unwatch");
}

void tend_open_inspect(lua_State *L) {
  static const luaL_Reg fns[] = {{"tree", l_tree},   {"ps", l_ps},
                                 {"kill", l_kill},   {"poison", l_poison},
                                 {"watch", l_watch}, {"unwatch", l_unwatch},
                                 {NULL, NULL}};
  static const luaL_Reg ctx[] = {
      {"watch", l_ctx_watch}, {"unwatch", l_ctx_unwatch}, {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
  tend_ctx_add_methods(L, ctx);
}
