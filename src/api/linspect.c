/* linspect: reaching in: tend.kill, tend.poison, DeathWatch from Lua
 * (ctx:watch, tend.watch). tend.ps and tend.tree: lsurvey.c. */
#include "api/api.h"

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
  static const luaL_Reg fns[] = {{"kill", l_kill},
                                 {"poison", l_poison},
                                 {"watch", l_watch},
                                 {"unwatch", l_unwatch},
                                 {NULL, NULL}};
  static const luaL_Reg ctx[] = {
      {"watch", l_ctx_watch}, {"unwatch", l_ctx_unwatch}, {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
  tend_ctx_add_methods(L, ctx);
}
