/* sched: run queue, workers and waits (see sched.h). */
#include "runtime/core/sched.h"

#include <lauxlib.h>

#include "runtime/core/advice.h"
#include "runtime/core/error.h"
#include "runtime/core/failure.h"
#include "runtime/core/fiber.h"
#include "runtime/core/inbox.h"
#include "runtime/core/lifecycle.h"
#include "runtime/core/promise.h"
#include "runtime/core/runq.h"
#include "runtime/core/send.h"
#include "runtime/core/value.h"
#include "runtime/core/watch.h"

#define POOL_MAX 256 /* idle workers kept; more are left to the collector */

/* A worker's stack: fixed slots below the call it makes. */
enum {
  W_MSGH = 1,    /* message handler (tracebacks) */
  W_ANCHORS = 2, /* the anchor table: actor id -> ctx */
  W_VALUES = 3,  /* the fast value store */
  W_CTX = 4,     /* ctx of the actor whose turn it is */
  W_MSG = 5,     /* the last message received in this turn, or nil */
  W_RESULT = 6   /* where a call sits, then its result (or error) */
};

/* ------------------------------------------------------------ the worker */

static int worker_loop(lua_State *L, tend_host *h);
static void resume_woken(lua_State *L, tend_host *h, tend_actor *a);

/* Pushes the behavior call for one user message of a; returns nargs. */
static int receive(lua_State *L, tend_host *h, tend_actor *a) {
  tend_msg *m = tend_queue_pop(&a->mbox.user);
  a->mbox.n_user--;
  tend_promise_dequeue(h, a, m); /* a request: taken */
  a->sender_id = m->sender_id;
  a->sender_gen = m->sender_gen;
  a->terminated_msg = 0;
  if (m->kind == TEND_MSG_TERMINATED) { /* DeathWatch: still watched? */
    int w = tend_watch_take(L, h, a, m->sender_id, m->sender_gen);
    if (w == 0) {
      tend_value_drop(L, h, &m->value);
      tend_msg_release(&h->msgs, m);
      return -1;
    }
    a->terminated_msg = w == 1;
  } else if (m->kind == TEND_MSG_KILL) { /* fails here, in mailbox order */
    tend_msg_release(&h->msgs, m);
    h->stats.messages++;
    tend_actor_push_killed(L, h, a);
    tend_actor_fail(L, h, a); /* pops the error */
    return -1;
  } else if (m->kind == TEND_MSG_POISON) { /* stops here, in mailbox order */
    tend_msg_release(&h->msgs, m);
    h->stats.messages++;
    tend_actor_stop(L, h, a, TEND_STOP_NORMAL);
    return -1;
  }
  /* an actor a driver runs (the backoff supervisor), or a receive
   * filter, looks at the message first */
  int early = h->role_driver[a->role] ||
              (h->receive_filter && a->role != TEND_ROLE_TASK);
  if (early) {
    tend_value_take_at(L, h, &m->value, W_VALUES);
    lua_replace(L, W_MSG);
    tend_msg_release(&h->msgs, m);
    const tend_driver *d = tend_driver_of(h, a);
    if (d && d->receive) { /* forwarded, stashed or answered */
      d->receive(L, h, a, W_MSG, a->sender_id, a->sender_gen);
      lua_settop(L, W_MSG);
      return -1;
    }
    if (h->receive_filter(L, h, a, W_MSG)) { /* fails instead */
      h->stats.messages++;
      lua_pushvalue(L, W_MSG);
      tend_actor_set_ext(L, a, TEND_EXT(failed_msg_ref));
      tend_actor_fail(L, h, a); /* pops the error */
      lua_settop(L, W_MSG);
      return -1;
    }
  }
  if (tend_advice_pending(a)) tend_advice_check(L, h, a);
  int nargs = 2;
  lua_getiuservalue(L, W_CTX, TEND_UV_BEHAVIOR);
  if (a->flags & TEND_AF_HOOKS) {
    tend_value_hook(L, -1, "receive");
    lua_insert(L, -2); /* receive hooks */
    nargs = 3;
  }
  if (early) {
    lua_pushvalue(L, W_MSG);
  } else {
    tend_value_take_at(L, h, &m->value, W_VALUES);
    tend_msg_release(&h->msgs, m);
    lua_copy(L, -1, W_MSG); /* kept for pre_restart if the call fails */
  }
  if (a->ext) { /* ctx:stash keeps it; the receive timeout starts again */
    if (a->ext->receiving_ref > 0) {
      lua_pushvalue(L, W_MSG);
      lua_rawseti(L, LUA_REGISTRYINDEX, a->ext->receiving_ref);
    }
    if (a->ext->rtimeout) a->ext->received_at = tend_clock_now(&h->clock);
  }
  lua_pushvalue(L, W_CTX);
  a->op = TEND_OP_RECEIVE;
  h->stats.messages++;
  return nargs;
}

/* Pushes the next call a's turn needs (at W_RESULT); returns nargs, -1
 * when the step needed no call, -2 when the turn is over. */
static int step(lua_State *L, tend_host *h, tend_actor *a) {
  if (a->state == TEND_ACTOR_DEAD) return -2;
  tend_msg *m = tend_queue_pop(&a->mbox.sys);
  if (m) return tend_lifecycle_system(L, h, a, m);
  if ((a->flags & TEND_AF_NOTICES) && a->wait == TEND_WAIT_NONE)
    tend_watch_deliver(a);
  if (tend_actor_takes_mail(a) && a->mbox.user.head && h->turn_left > 0) {
    h->turn_left--;
    return receive(L, h, a);
  }
  return -2;
}

static const char *bad_return(lua_State *L, int idx) {
  return lua_pushfstring(L,
                         "behavior returned %s; expected nil, a behavior "
                         "(function or table with receive), tend.stopped or "
                         "tend.unhandled",
                         tend_typename(L, idx));
}

/* Installs the behavior at idx (already checked) for a. */
static void become(lua_State *L, tend_actor *a, int idx) {
  if (lua_istable(L, idx))
    a->flags |= TEND_AF_HOOKS;
  else
    a->flags &= ~TEND_AF_HOOKS;
  lua_pushvalue(L, idx);
  lua_setiuservalue(L, W_CTX, TEND_UV_BEHAVIOR);
}

static int is_behavior(lua_State *L, int idx) {
  if (lua_isfunction(L, idx)) return 1;
  if (!lua_istable(L, idx)) return 0;
  int ok = tend_value_hook(L, idx, "receive") == LUA_TFUNCTION;
  lua_pop(L, 1);
  return ok;
}

/* Fails a with a new error of kind whose message is at the top (popped). */
static void fail_with(lua_State *L, tend_host *h, tend_actor *a,
                      const char *kind) {
  tend_error_new(L, kind, lua_tostring(L, -1));
  lua_remove(L, -2);
  tend_actor_fail(L, h, a);
}

/* A follow-up call was pushed above the result: drop the result so the
 * call sits at W_RESULT. Returns nargs (or -1 when nothing was pushed). */
static int follow(lua_State *L, int nargs) {
  if (nargs >= 0) lua_remove(L, W_RESULT);
  return nargs;
}

static void log_failure(lua_State *L, tend_host *h, tend_actor *a,
                        const char *what) {
  tend_actor_push_path(L, h, a);
  tend_error_describe(L, W_RESULT);
  tend_host_log(h, TEND_LOG_WARN, lua_tostring(L, -2), "%s failed: %s", what,
                lua_tostring(L, -1));
  lua_pop(L, 2);
}

/* The call of one of the core's ops failed with the error value at
 * W_RESULT. */
static int failed(lua_State *L, tend_host *h, tend_actor *a, tend_actor_op op) {
  switch (op) {
    case TEND_OP_POST_STOP:
      log_failure(L, h, a, "post_stop");
      tend_actor_die(L, h, a);
      return -1;
    case TEND_OP_FACTORY:
    case TEND_OP_PRE_START:
      tend_actor_init_failed(L, h, a, op, W_RESULT);
      return -1;
    case TEND_OP_RECEIVE:
      lua_pushvalue(L, W_MSG); /* pre_restart gets it */
      tend_actor_set_ext(L, a, TEND_EXT(failed_msg_ref));
      /* fall through */
    default:
      lua_pushvalue(L, W_RESULT);
      tend_actor_fail(L, h, a);
      return -1;
  }
}

static void received(lua_State *L, tend_host *h, tend_actor *a) {
  if (lua_isnil(L, W_RESULT)) return;
  tend_push_sentinel(L, h, TEND_SENTINEL_STOPPED);
  int stopped = lua_rawequal(L, W_RESULT, -1);
  tend_push_sentinel(L, h, TEND_SENTINEL_UNHANDLED);
  int unhandled = lua_rawequal(L, W_RESULT, -1);
  lua_pop(L, 2);
  if (stopped) {
    tend_actor_stop(L, h, a, TEND_STOP_NORMAL);
  } else if (unhandled) {
    if (a->terminated_msg) { /* Akka: an unhandled Terminated is fatal */
      lua_getfield(L, W_MSG, "ref");
      lua_pushfstring(L, "%s died and this actor did not handle it",
                      luaL_tolstring(L, -1, NULL));
      fail_with(L, h, a, TEND_ERR_NAME(DEATH_PACT));
      lua_pop(L, 2);
    } else { /* logged with the dead letters (Akka) */
      h->stats.unhandled++;
      tend_letter l = {.to = a,
                       .msg = W_MSG,
                       .from_id = a->sender_id,
                       .from_gen = a->sender_gen};
      tend_deadletter_log(L, h, &l);
    }
  } else if (is_behavior(L, W_RESULT)) {
    if (a->state == TEND_ACTOR_RUNNING) become(L, a, W_RESULT);
  } else {
    bad_return(L, W_RESULT);
    fail_with(L, h, a, TEND_ERR_NAME(ERROR));
  }
}

int tend_sched_adopt(lua_State *L, tend_actor *a, int idx) {
  if (!is_behavior(L, idx)) {
    lua_pushfstring(L,
                    "factory returned %s; expected a behavior (function "
                    "or table with receive)",
                    tend_typename(L, idx));
    tend_error_new(L, TEND_ERR_NAME(ERROR), lua_tostring(L, -1));
    lua_replace(L, idx);
    lua_settop(L, idx);
    return 0;
  }
  become(L, a, idx);
  return 1;
}

/* The key of the handler of a's op: a factory or pre_start that returns
 * while a restarts completes the restart (the supervisor's driver). */
static tend_actor_op op_key(const tend_actor *a, tend_actor_op op) {
  if (a->state != TEND_ACTOR_RESTARTING) return op;
  if (op == TEND_OP_FACTORY) return TEND_OP_RESTART_FACTORY;
  if (op == TEND_OP_PRE_START) return TEND_OP_RESTART_PRE_START;
  return op;
}

/* Completes a's op after its call returned with status; the result or the
 * error value is at W_RESULT. An op a driver started goes to its handler.
 * Returns nargs of a follow-up call pushed (it then sits at W_RESULT), or
 * -1. */
static int finish(lua_State *L, tend_host *h, int status) {
  tend_actor *a = h->current;
  tend_actor_op op = (tend_actor_op)a->op;
  a->op = TEND_OP_NONE;
  if (a->ext && a->ext->busy_since) a->ext->busy_since = 0; /* call over */
  int r = -1;
  int ok = status == LUA_OK || status == LUA_YIELD;
  if (op == TEND_OP_RECEIVE && ok) { /* the common case first */
    received(L, h, a);
    lua_settop(L, W_MSG);
    return -1;
  }
  tend_op_fn done = h->on_op[op_key(a, op)];
  if (done) {
    r = follow(L, done(L, h, a, status, W_RESULT));
  } else if (!ok) {
    r = failed(L, h, a, op);
  } else {
    switch (op) {
      case TEND_OP_FACTORY:
        if (!tend_sched_adopt(L, a, W_RESULT)) {
          tend_actor_init_failed(L, h, a, op, W_RESULT);
          break;
        }
        r = follow(L, tend_lifecycle_built(L, h, a));
        break;
      case TEND_OP_PRE_START: tend_lifecycle_started(L, h, a); break;
      case TEND_OP_TASK:
        tend_inbox_close(L, h, a); /* what it never read: dead letters */
        tend_actor_stop(L, h, a, TEND_STOP_NORMAL);
        break;
      case TEND_OP_POST_STOP: tend_actor_die(L, h, a); break;
      default: break;
    }
  }
  if (r < 0) lua_settop(L, W_MSG);
  return r;
}

static void run_calls(lua_State *L, tend_host *h, int nargs);

static int after_call(lua_State *L, int status, lua_KContext k) {
  (void)k;
  tend_host *h = tend_host_of(L);
  run_calls(L, h, finish(L, h, status));
  return worker_loop(L, h);
}

static void run_calls(lua_State *L, tend_host *h, int nargs) {
  while (nargs >= 0) {
    tend_actor *a = h->current; /* its budget counts from here (preempt.h) */
    if (a->ext && (a->ext->max_ns || a->op == TEND_OP_DECIDE))
      a->ext->msg_start = uv_hrtime();
    int status = lua_pcallk(L, nargs, 1, W_MSGH, 0, after_call);
    nargs = finish(L, h, status);
  }
}

static int after_idle(lua_State *L, int status, lua_KContext k) {
  (void)status;
  (void)k;
  return worker_loop(L, tend_host_of(L));
}

static int worker_loop(lua_State *L, tend_host *h) {
  for (;;) {
    tend_actor *a = h->current;
    if (a == NULL) {
      a = h->runq_head;
      if (a == NULL || h->quantum <= 0) break;
      if (a->wait == TEND_WAIT_WOKEN) {
        if (h->nested) break; /* the worker that resumed this one goes on */
        resume_woken(L, h, a);
        continue;
      }
      tend_runq_pop(h);
      h->current = a;
      h->turn_left = TEND_TURN_BUDGET;
      lua_settop(L, W_VALUES);          /* what the last turn left */
      lua_rawgeti(L, W_ANCHORS, a->id); /* W_CTX: anchors a during its turn */
      lua_pushnil(L);                   /* W_MSG */
    }
    int nargs = step(L, h, a);
    if (nargs == -2) { /* turn over */
      h->current = NULL;
      if (tend_actor_has_work(a)) tend_runq_push(h, a);
      continue; /* the next turn or the end clears the stack */
    }
    h->quantum--;
    /* the watchdog reads it from its thread: an atomic store, still a
       plain add (this thread is its only writer) */
    __atomic_store_n(&h->steps, h->steps + 1, __ATOMIC_RELAXED);
    run_calls(L, h, nargs);
  }
  lua_settop(L, W_VALUES);
  h->yield = TEND_YIELD_IDLE;
  return lua_yieldk(L, 0, 0, after_idle);
}

static int worker_main(lua_State *L) {
  tend_host *h = tend_host_of(L);
  lua_settop(L, 0);
  tend_error_push_handler(L);                        /* W_MSGH */
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->anchors_ref); /* W_ANCHORS */
  tend_value_push_store(L, h);                       /* W_VALUES */
  return worker_loop(L, h);
}

/* ------------------------------------------------------------ the loop */

/* Pushes an idle worker thread (from the pool, or new). */
static lua_State *worker_get(lua_State *L, tend_host *h) {
  if (h->pool_n > 0) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, h->pool_ref);
    lua_rawgeti(L, -1, h->pool_n);
    lua_pushnil(L);
    lua_rawseti(L, -3, h->pool_n--);
    lua_remove(L, -2);
    return lua_tothread(L, -1);
  }
  lua_State *co = lua_newthread(L);
  lua_pushcfunction(co, worker_main);
  return co;
}

/* Takes the thread at the top of the stack back into the pool (popped). */
static void worker_put(lua_State *L, tend_host *h) {
  if (h->pool_n >= POOL_MAX) {
    lua_pop(L, 1);
    return;
  }
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->pool_ref);
  lua_insert(L, -2);
  lua_rawseti(L, -2, ++h->pool_n);
  lua_pop(L, 1);
}

/* a's code yielded through lua_yield from a C module (coroutine.yield
 * itself raises BadYield, see the API): its coroutine is abandoned
 * mid-call, so the actor fails with BadYield where a failure can be
 * handled, and dies where it cannot (a hook of a restart or a stop). */
static void foreign_yield(lua_State *L, tend_host *h, tend_actor *a) {
  tend_actor_op op = (tend_actor_op)a->op;
  a->op = TEND_OP_NONE;
  tend_error_new(L, TEND_ERR_NAME(BAD_YIELD), "a yield that tend did not make");
  tend_op_fn done = h->on_op[op_key(a, op)];
  if (done) {
    done(L, h, a, TEND_OP_ABANDONED, lua_gettop(L));
    lua_pop(L, 1);
    return;
  }
  switch (op) {
    case TEND_OP_NONE:
    case TEND_OP_RECEIVE:
    case TEND_OP_TASK: tend_actor_fail(L, h, a); return;
    case TEND_OP_FACTORY:
    case TEND_OP_PRE_START:
      tend_actor_init_failed(L, h, a, op, lua_gettop(L));
      break;
    default: tend_actor_die(L, h, a); break;
  }
  lua_pop(L, 1);
}

/* Takes the parked coroutine of a, the run queue's head, WOKEN: pushes it
 * on L and returns it, a being current and its turn begun. */
static lua_State *unpark(lua_State *L, tend_host *h, tend_actor *a) {
  tend_runq_pop(h);
  a->wait = TEND_WAIT_NONE;
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->parked_ref);
  lua_rawgeti(L, -1, a->id); /* on the stack while it runs */
  lua_pushnil(L);
  lua_rawseti(L, -3, a->id); /* parked[id] = nil */
  lua_remove(L, -2);
  a->flags &= ~TEND_AF_PARKED;
  h->current = a;
  h->turn_left = TEND_TURN_BUDGET;
  return lua_tothread(L, -1);
}

/* co (at the top of L, popped) gave control back with status and nres
 * results: parked when its actor waits, pooled when it is idle. */
static void resumed(lua_State *L, tend_host *h, lua_State *co, int status,
                    int nres) {
  if (status == LUA_YIELD && h->yield == TEND_YIELD_BLOCK) {
    lua_pop(co, nres);
    tend_actor *w = h->current; /* the actor that waits owns co now */
    h->current = NULL;
    w->flags |= TEND_AF_PARKED;
    lua_rawgeti(L, LUA_REGISTRYINDEX, h->parked_ref);
    lua_insert(L, -2);
    lua_rawseti(L, -2, w->id); /* parked[id] = co */
    lua_pop(L, 1);
    if (w->wait == TEND_WAIT_WOKEN) tend_runq_push(h, w); /* answered */
    if (w->wait == TEND_WAIT_FOREVER && w->state == TEND_ACTOR_STOPPING) {
      tend_actor_end_wait(L, h, w); /* stopped itself: it stops now */
      tend_runq_push(h, w);
    }
  } else if (status == LUA_YIELD && h->yield == TEND_YIELD_IDLE) {
    lua_pop(co, nres);
    worker_put(L, h);
  } else if (status == LUA_YIELD) { /* a yield tend did not make */
    lua_pop(L, 1);                  /* the coroutine is abandoned */
    tend_actor *w = h->current;
    h->current = NULL;
    if (w) foreign_yield(L, h, w);
  } else {
    /* the worker itself broke (memory error outside any pcall) */
    const char *msg = lua_tostring(co, -1);
    luaL_traceback(L, co, msg, 0);
    tend_host_log(h, TEND_LOG_ERROR, NULL, "scheduler: worker ended: %s",
                  lua_tostring(L, -1));
    lua_pop(L, 1);
    tend_actor *w = h->current;
    h->current = NULL;
    lua_pop(L, 1);
    if (w) {
      tend_error_new(L, TEND_ERR_NAME(ERROR), msg ? msg : "worker ended");
      tend_actor_fail(L, h, w);
    }
  }
}

/* Resumes co (at the top of L) from L, which runs it; handles its return
 * (resumed). `back`: the coroutine the watchdog sees running after. */
static void run_co(lua_State *L, tend_host *h, lua_State *co, lua_State *back) {
  h->yield = TEND_YIELD_NONE;
  h->quantum--; /* every resume counts: the loop always gets its turn */
  int nres;
  tend_preempt_running(h, co);
  h->resumed = co;
  int status = lua_resume(co, L, 0, &nres);
  h->resumed = back;
  tend_preempt_running(h, back);
  resumed(L, h, co, status, nres);
}

/* A worker between turns whose next actor is WOKEN resumes that actor's
 * coroutine itself, as the loop would next (the same actor, the same
 * order), sparing its own yield and resume: an ask's round trip. Only
 * one deep: the coroutine resumed so, once its actor's call is over, is
 * a worker that yields to this one when it is idle. */
static void resume_woken(lua_State *L, tend_host *h, tend_actor *a) {
  h->nested = 1;
  lua_State *co = unpark(L, h, a);
  run_co(L, h, co, L);
  h->nested = 0;
}

void tend_sched_run(tend_host *h) {
  lua_State *L = h->L;
  h->quantum = TEND_QUANTUM;
  while (h->runq_head && h->quantum > 0) {
    tend_actor *a = h->runq_head;
    lua_State *co =
        a->wait == TEND_WAIT_WOKEN ? unpark(L, h, a) : worker_get(L, h);
    run_co(L, h, co, NULL);
  }
  tend_value_sweep(L, h); /* the messages taken in this pass */
}

int tend_sched_wait(lua_State *L, tend_host *h, tend_actor_wait wait,
                    lua_KFunction k) {
  tend_actor *a = h->current;
  if (L == h->fiber && wait == TEND_WAIT_ASK) { /* a fiber waits alone */
    int yielded;
    int n = tend_fiber_wait(L, h, k, &yielded);
    if (yielded) return n;
  }
  if (a->ext && a->ext->on_wait_ref > 0) { /* tend_actor_set_on_wait */
    lua_rawgeti(L, LUA_REGISTRYINDEX, a->ext->on_wait_ref);
    if (lua_pcall(L, 0, 0, 0) != LUA_OK) lua_pop(L, 1);
  }
  a->wait = (uint8_t)wait;
  if (a->ext)
    a->ext->busy_since = 0; /* waiting, not busy (a task's loop,
                               the REPL's, never ends its call) */
  h->yield = TEND_YIELD_BLOCK;
  return lua_yieldk(L, 0, 0, k);
}

void tend_sched_interrupt(lua_State *L, tend_host *h, tend_actor *a) {
  h->interrupt = a;
  if (a->wait == TEND_WAIT_SLEEP || a->wait == TEND_WAIT_ASK ||
      a->wait == TEND_WAIT_RECEIVE) {
    tend_promise_cancel(L, h, a);
    a->wait_seq++; /* its WAKE timer is stale now */
    tend_runq_wake(h, a, TEND_WAKE_INTERRUPTED);
  } else if (a->flags & TEND_AF_PARKED) { /* preempted: the hook fires */
    lua_rawgeti(L, LUA_REGISTRYINDEX, h->parked_ref); /* when it resumes */
    lua_rawgeti(L, -1, a->id);
    lua_sethook(lua_tothread(L, -1), tend_preempt_hook, LUA_MASKCOUNT, 1);
    lua_pop(L, 2);
  }
}

int tend_sched_woken(lua_State *L, tend_host *h) {
  tend_actor *a = h->current;
  if (a && a->wake == TEND_WAKE_INTERRUPTED) {
    a->wake = TEND_WAKE_OK;
    if (h->interrupt == a) h->interrupt = NULL;
    return tend_error_interrupted(L);
  }
  return a ? a->wake : TEND_WAKE_OK;
}

tend_actor *tend_sched_check_wait(lua_State *L, tend_host *h, const char *fn) {
  tend_actor *a = h->current;
  if (a == NULL)
    luaL_error(L,
               "%s: can only wait inside an actor (the main chunk, a "
               "behavior, a hook or a task)",
               fn);
  if (!lua_isyieldable(L) || h->no_wait > 0)
    luaL_error(L,
               "%s: cannot wait here: this code runs inside a C call "
               "that cannot yield (a require'd chunk, a metamethod such as "
               "__tostring, a table.sort comparator or a gsub callback)",
               fn);
  return a;
}
