/* lcode: the code inside an actor, seen from outside: what tend.inspect
 * (lua/tend/code.lua) reads without stopping the actor (only reads: its
 * mailbox and timers are untouched), and the two steps of moving an actor
 * to new code (tend.reload): install a mover as its behavior, which runs
 * at its next message boundary and puts that message back in front. */
#include "api/api.h"

/* tend.core.code_actor(ref) -> {path, ref, behavior, hooks, factory, args,
 * thread, op, running, mailbox, restarts, timers, watchers, watching}, or
 * nil when the actor is dead. `thread` is the coroutine parked in the
 * middle of a message (sleep, ask, preempted), else nil. */
static int l_code_actor(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_ref *r = tend_check_ref(L, 1, "tend.inspect", "ref");
  tend_actor *a = tend_ref_actor(h, r);
  if (a == NULL || tend_actor_state_of(a) == TEND_ACTOR_DEAD) return 0;
  lua_createtable(L, 0, 14);
  tend_actor_push_path(L, h, a);
  lua_setfield(L, -2, "path");
  tend_actor_push_ref(L, h, a);
  lua_setfield(L, -2, "ref");
  tend_actor_push_behavior(L, h, a);
  lua_setfield(L, -2, "behavior");
  tend_actor_push_factory(L, h, a);
  lua_setfield(L, -2, "factory");
  tend_actor_push_parked(L, h, a);
  lua_setfield(L, -2, "thread");
  tend_actor_push_args(L, a);
  lua_setfield(L, -2, "args");
  lua_pushboolean(L, tend_actor_has_hooks(a));
  lua_setfield(L, -2, "hooks");
  lua_pushstring(L, tend_actor_op_name(a));
  lua_setfield(L, -2, "op");
  lua_pushboolean(L, tend_host_current(h) == a);
  lua_setfield(L, -2, "running");
  lua_pushinteger(L, tend_actor_mailbox_size(a));
  lua_setfield(L, -2, "mailbox");
  lua_pushinteger(L, tend_actor_restarts(a));
  lua_setfield(L, -2, "restarts");
  lua_pushinteger(L, tend_actor_timer_count(a));
  lua_setfield(L, -2, "timers");
  tend_actor_push_watches(L, h, a, 1);
  lua_setfield(L, -2, "watchers");
  tend_actor_push_watches(L, h, a, 0);
  lua_setfield(L, -2, "watching");
  return 1;
}

/* core.code_install(ref, factory, mover) -> true | nil, reason: the actor
 * restarts with factory from now on, and its next message goes to mover
 * (a function behavior) in place of the behavior it has: that is its next
 * message boundary (a busy actor finishes the message it is in first). A
 * task, a guardian or a backoff supervisor has no factory to change. */
static int l_code_install(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_ref *r = tend_check_ref(L, 1, "tend.reload", "ref");
  luaL_checktype(L, 2, LUA_TFUNCTION);
  luaL_checktype(L, 3, LUA_TFUNCTION);
  tend_actor *a = tend_ref_actor(h, r);
  const char *why = NULL;
  if (a == NULL || tend_actor_state_of(a) == TEND_ACTOR_DEAD)
    why = "it is dead";
  else if (tend_actor_is_task(a) || tend_actor_is_guardian(a))
    why = "a task or a guardian has no factory";
  else if (tend_actor_is_backoff(a))
    why = "a backoff supervisor's code is tend's own";
  else if (tend_actor_state_of(a) != TEND_ACTOR_RUNNING)
    why = "it is not running (starting, restarting or stopping)";
  if (why) {
    lua_pushnil(L);
    lua_pushstring(L, why);
    return 2;
  }
  tend_actor_install(L, h, a, 2, 3);
  lua_pushboolean(L, 1);
  return 1;
}

/* core.code_requeue(msg): inside a mover only: the message it got goes
 * back in front of the running actor's mailbox, with its sender, so the
 * moved actor (become or restarted) takes it first. */
static int l_code_requeue(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_actor *a = tend_host_current(h);
  if (a == NULL || !tend_actor_in_receive(a))
    return luaL_error(L, "code_requeue: only inside a mover");
  lua_settop(L, 1);
  if (tend_actor_requeue(L, h, a, 1) != 0)
    return luaL_error(L, "code_requeue: out of memory");
  return 0;
}

void tend_open_code(lua_State *L) {
  static const luaL_Reg fns[] = {{"code_actor", l_code_actor},
                                 {"code_install", l_code_install},
                                 {"code_requeue", l_code_requeue},
                                 {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
}
