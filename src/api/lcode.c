/* lcode: the code inside an actor, seen from outside: what tend.inspect
 * (lua/tend/code.lua) reads without stopping the actor (only reads: its
 * mailbox and timers are untouched), and the two steps of moving an actor
 * to new code (tend.reload): install a mover as its behavior, which runs
 * at its next message boundary and puts that message back in front. */
#include "api/api.h"
#include "base/timer.h"
#include "runtime/core/promise.h"
#include "runtime/core/value.h"
#include "runtime/core/watch.h"
#include "runtime/core/host.h"
#include "runtime/core/lifecycle.h"
#include "runtime/core/ref.h"
#include "runtime/core/send.h"

static const char *op_name(const tend_actor *a) {
  switch ((tend_actor_op)a->op) {
    case TEND_OP_NONE: return "idle";
    case TEND_OP_FACTORY: return "factory";
    case TEND_OP_PRE_START: return "pre_start";
    case TEND_OP_RECEIVE: return "receive";
    case TEND_OP_POST_STOP: return "post_stop";
    case TEND_OP_TASK: return "task";
    case TEND_OP_DECIDE: return "decide";
    case TEND_OP_PRE_RESTART: return "pre_restart";
    case TEND_OP_RESTART_STOP: return "restart_stop";
    case TEND_OP_POST_RESTART: return "post_restart";
  }
  return "?";
}

/* Pushes a list of the refs on a's watch list (watchers: who watches a;
 * else what a watches). */
static void push_watches(lua_State *L, tend_host *h, const tend_actor *a,
                         int watchers) {
  lua_newtable(L);
  if (a->ext == NULL) return;
  lua_Integer n = 0;
  if (watchers) {
    for (tend_watch *w = a->ext->watchers; w; w = w->t_next) {
      tend_actor_push_ref(L, h, w->watcher);
      lua_rawseti(L, -2, ++n);
    }
  } else {
    for (tend_watch *w = a->ext->watching; w; w = w->w_next) {
      if (w->target == NULL) continue; /* fired: its notice is on its way */
      tend_actor_push_ref(L, h, w->target);
      lua_rawseti(L, -2, ++n);
    }
  }
}

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
  tend_actor_push_ctx(L, h, a);
  lua_getiuservalue(L, -1, TEND_UV_BEHAVIOR);
  lua_setfield(L, -3, "behavior");
  lua_getiuservalue(L, -1, TEND_UV_FACTORY);
  lua_setfield(L, -3, "factory");
  lua_pop(L, 1);                                    /* the ctx */
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->parked_ref); /* its parked coroutine */
  lua_rawgeti(L, -1, a->id);
  lua_setfield(L, -3, "thread");
  lua_pop(L, 1);
  tend_actor_push_ext(L, a, TEND_EXT(args_ref));
  lua_setfield(L, -2, "args");
  lua_pushboolean(L, (a->flags & TEND_AF_HOOKS) != 0);
  lua_setfield(L, -2, "hooks");
  lua_pushstring(L, op_name(a));
  lua_setfield(L, -2, "op");
  lua_pushboolean(L, tend_host_current(h) == a);
  lua_setfield(L, -2, "running");
  lua_pushinteger(L, tend_actor_mailbox_size(a));
  lua_setfield(L, -2, "mailbox");
  lua_pushinteger(L, tend_actor_restarts(a));
  lua_setfield(L, -2, "restarts");
  lua_Integer timers = 0;
  for (const tend_timer *t = a->timers; t; t = t->next) timers++;
  lua_pushinteger(L, timers);
  lua_setfield(L, -2, "timers");
  push_watches(L, h, a, 1);
  lua_setfield(L, -2, "watchers");
  push_watches(L, h, a, 0);
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
  else if (a->flags & (TEND_AF_TASK | TEND_AF_GUARDIAN))
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
  tend_actor_push_ctx(L, h, a);
  lua_pushvalue(L, 2);
  lua_setiuservalue(L, -2, TEND_UV_FACTORY);
  lua_pushvalue(L, 3);
  lua_setiuservalue(L, -2, TEND_UV_BEHAVIOR);
  a->flags &= ~TEND_AF_HOOKS; /* the mover is a function */
  lua_pushboolean(L, 1);
  return 1;
}

/* core.code_requeue(msg): inside a mover only: the message it got goes
 * back in front of the running actor's mailbox, with its sender, so the
 * moved actor (become or restarted) takes it first. */
static int l_code_requeue(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_actor *a = tend_host_current(h);
  if (a == NULL || a->op != TEND_OP_RECEIVE)
    return luaL_error(L, "code_requeue: only inside a mover");
  lua_settop(L, 1);
  tend_msg *m = tend_msg_alloc(&h->msgs);
  if (m == NULL) return luaL_error(L, "code_requeue: out of memory");
  if (tend_value_store(L, h, 1, &m->value) != 0) {
    tend_msg_release(&h->msgs, m);
    return luaL_error(L, "code_requeue: out of memory");
  }
  m->kind = TEND_MSG_USER;
  m->sender_id = a->sender_id;
  m->sender_gen = a->sender_gen;
  tend_promise_enqueue(h, a, m); /* a request: queued again (promise.h) */
  m->next = a->mbox.user.head;   /* in front */
  a->mbox.user.head = m;
  if (a->mbox.user.tail == NULL) a->mbox.user.tail = m;
  a->mbox.n_user++;
  return 0;
}

void tend_open_code(lua_State *L) {
  static const luaL_Reg fns[] = {{"code_actor", l_code_actor},
                                 {"code_install", l_code_install},
                                 {"code_requeue", l_code_requeue},
                                 {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
}
