/* lifecycle: start, stop, death and system-message dispatch (see
 * lifecycle.h). */
#include "runtime/core/lifecycle.h"

#include <lauxlib.h>
#include <stdio.h>
#include <string.h>

#include "runtime/core/advice.h"
#include "runtime/core/error.h"
#include "runtime/core/event.h"
#include "runtime/core/failure.h"
#include "runtime/core/promise.h"
#include "runtime/core/ref.h"
#include "runtime/core/runq.h"
#include "runtime/core/send.h"
#include "runtime/core/timers.h"
#include "runtime/core/value.h"
#include "runtime/core/watch.h"

/* ------------------------------------------------------------ spawn */

void tend_spawn_opts_init(tend_spawn_opts *o) {
  memset(o, 0, sizeof *o);
  o->shutdown_ns = TEND_SHUTDOWN_NS;
  o->restart = TEND_TRANSIENT;
  o->scheduler = TEND_SCHED_HERE;
}

static void link_child(tend_actor *parent, tend_actor *a) {
  a->prev_sibling = parent->last_child;
  if (parent->last_child)
    parent->last_child->next_sibling = a;
  else
    parent->first_child = a;
  parent->last_child = a;
}

void tend_actor_adopt(tend_actor *parent, tend_actor *a) {
  a->parent = parent;
  link_child(parent, a);
}

/* Pushes the path a child named (stack index name) of parent would have;
 * raises (naming fn) if the name is taken. */
static void push_child_path(lua_State *L, tend_host *h, tend_actor *parent,
                            int name, const char *fn) {
  size_t n = 0;
  const char *s =
      lua_type(L, name) == LUA_TSTRING ? lua_tolstring(L, name, &n) : NULL;
  int same = s && n < sizeof h->child_path_name &&
             h->child_path_id == parent->id &&
             h->child_path_gen == parent->gen && h->child_path_len == n &&
             memcmp(h->child_path_name, s, n) == 0;
  if (same && h->child_path_kept) { /* the last one again: no concat */
    lua_rawgeti(L, LUA_REGISTRYINDEX, h->child_path_ref);
  } else {
    tend_actor_push_path(L, h, parent);
    lua_pushliteral(L, "/");
    lua_pushvalue(L, name);
    lua_concat(L, 3); /* push child path */
    if (same) {       /* asked twice: kept (a parent's path never changes) */
      lua_pushvalue(L, -1);
      if (h->child_path_ref)
        lua_rawseti(L, LUA_REGISTRYINDEX, h->child_path_ref);
      else
        h->child_path_ref = luaL_ref(L, LUA_REGISTRYINDEX);
      h->child_path_kept = 1;
    } else if (s && n < sizeof h->child_path_name) { /* remembered */
      h->child_path_id = parent->id;
      h->child_path_gen = parent->gen;
      h->child_path_len = (uint32_t)n;
      memcpy(h->child_path_name, s, n);
      h->child_path_kept = 0;
    }
  }
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->names_ref);
  lua_pushvalue(L, -2);
  if (lua_rawget(L, -2) != LUA_TNIL)
    luaL_error(L, "%s: name '%s' is already taken: %s exists", fn,
               lua_tostring(L, name), lua_tostring(L, -3));
  lua_pop(L, 2);
}

void tend_actor_check_spawn(lua_State *L, tend_host *h, tend_actor *parent,
                            int name, const char *fn) {
  if (h->shutdown)
    luaL_error(L, "%s: the host is shutting down; nothing can be spawned", fn);
  if (parent->state >= TEND_ACTOR_STOPPING)
    luaL_error(L, "%s: the parent is stopping; it cannot take new children",
               fn);
  if (name) {
    push_child_path(L, h, parent, lua_absindex(L, name), fn);
    lua_pop(L, 1);
  }
}

tend_actor *tend_actor_spawn(lua_State *L, tend_host *h, tend_actor *parent,
                             int factory, const tend_spawn_opts *o) {
  factory = lua_absindex(L, factory);
  if (o->name) /* unique among siblings; the path is kept */
    push_child_path(L, h, parent, lua_absindex(L, o->name), "spawn");
  tend_actor *a = tend_actor_new(L, h, parent);
  if (o->name) { /* stack: path udata */
    lua_rawgeti(L, LUA_REGISTRYINDEX, h->names_ref);
    lua_pushvalue(L, -3);
    lua_pushlightuserdata(L, a);
    lua_rawset(L, -3); /* names[path] = a (gone at its death) */
    lua_pop(L, 1);
    lua_insert(L, -2);
    tend_actor_set_path(L, a, -2);
    a->flags |= TEND_AF_NAMED;
  }
  lua_pushvalue(L, factory);
  lua_setiuservalue(L, -2, TEND_UV_FACTORY);
  if (o->args) {
    lua_pushvalue(L, o->args);
    tend_actor_set_ext(L, a, TEND_EXT(args_ref));
  }
  if (o->strategy) {
    tend_actor_set_strategy(L, a, o->strategy, o->decider);
    tend_advice_spawned(h, a); /* a leaf with a strategy gets a warning */
  }
  a->restart_type = (uint8_t)o->restart;
  if (o->max_message_ns) {
    tend_actor_ext *x = tend_actor_ext_get(a);
    if (x) {
      x->max_ns = o->max_message_ns;
      tend_actor_push_path(L, h, a);
      x->max_path = lua_tostring(L, -1);
      lua_pop(L, 1);
    }
  }
  a->capacity = o->capacity;
  a->overflow = (uint8_t)o->overflow;
  tend_actor_set_shutdown_ns(a, o->shutdown_ns); /* no memory: the default */
  if (o->task)
    a->role = TEND_ROLE_TASK;
  else
    h->stats.spawned++;
  if (o->internal || (parent->flags & TEND_AF_INTERNAL))
    a->flags |= TEND_AF_INTERNAL;
  tend_advice_child(L, h, parent);
  link_child(parent, a);
  tend_actor_post(h, a, TEND_MSG_START, NULL);
  if (tend_event_on(h)) {
    tend_event e = TEND_EVENT_INIT(TEND_EV_SPAWN, a);
    tend_event_emit(L, h, &e);
  }
  if (!o->record) tend_actor_record_to_ref(L, a); /* udata -> its ref */
  return a;
}

/* ------------------------------------------------------------ start */

int tend_lifecycle_push_factory(lua_State *L, tend_host *h, tend_actor *a) {
  if (a->state == TEND_ACTOR_RESTARTING) /* a new instance: the drivers' */
    for (uint32_t i = 0; i < h->at[TEND_AT_REBUILD].n; i++) /* (stash, */
      h->at[TEND_AT_REBUILD].v[i]->rebuild(L, h, a); /* receive timeout) */
  tend_actor_push_ctx(L, h, a);
  int ctx = lua_gettop(L);
  lua_getiuservalue(L, ctx, TEND_UV_FACTORY);
  int nargs = 0;
  if (a->role != TEND_ROLE_TASK) {
    lua_pushvalue(L, ctx);
    nargs++;
  }
  if (a->ext) { /* spawn's args are kept there */
    tend_actor_push_ext(L, a, TEND_EXT(args_ref));
    if (lua_istable(L, -1)) {
      int args = lua_gettop(L);
      lua_Integer n = luaL_len(L, args);
      luaL_checkstack(L, (int)n + 2, "too many spawn args");
      for (lua_Integer i = 1; i <= n; i++) lua_rawgeti(L, args, i);
      lua_remove(L, args);
      nargs += (int)n;
    } else {
      lua_pop(L, 1);
    }
  }
  lua_remove(L, ctx);
  a->op = a->role == TEND_ROLE_TASK ? TEND_OP_TASK : TEND_OP_FACTORY;
  return nargs;
}

void tend_lifecycle_started(lua_State *L, tend_host *h, tend_actor *a) {
  if (a->state != TEND_ACTOR_STARTING) return;
  a->state = TEND_ACTOR_RUNNING;
  if (tend_event_on(h)) {
    tend_event e = TEND_EVENT_INIT(TEND_EV_START, a);
    e.incarnation = 1;
    const tend_driver *d = a->parent ? tend_driver_of(h, a->parent) : NULL;
    if (d && d->child_incarnation) /* a backoff supervisor's child */
      e.incarnation = d->child_incarnation(a->parent);
    tend_event_emit(L, h, &e);
  }
}

void tend_lifecycle_count_restart(lua_State *L, tend_host *h, tend_actor *a) {
  a->restarts++;
  h->stats.restarts++;
  tend_watch_target_restarted(L, h, a); /* its incarnation ended */
  if (!tend_event_on(h)) return;
  tend_event e = TEND_EVENT_INIT(TEND_EV_RESTART, a);
  e.count = a->restarts;
  e.incarnation = a->restarts + 1;
  tend_actor *cause =
      a->ext ? tend_actor_live(h, a->ext->cause_id, a->ext->cause_gen) : NULL;
  if (cause && cause != a) { /* whose failure: a sibling, the parent */
    tend_actor_push_path(L, h, cause);
    e.detail = lua_pushfstring(L, "for %s", lua_tostring(L, -1));
  }
  tend_event_emit(L, h, &e);
  if (e.detail) lua_pop(L, 2);
}

int tend_lifecycle_built(lua_State *L, tend_host *h, tend_actor *a) {
  if (tend_actor_push_hook(L, h, a, "pre_start")) {
    tend_actor_push_ctx(L, h, a);
    a->op = TEND_OP_PRE_START;
    return 2;
  }
  tend_lifecycle_started(L, h, a);
  return -1;
}

static int start(lua_State *L, tend_host *h, tend_actor *a) {
  /* An actor stopped before it started still starts, so that its
   * post_stop runs (as Akka); a task stopped before it ran is dropped. */
  if (a->state == TEND_ACTOR_DEAD ||
      (a->role == TEND_ROLE_TASK && a->state != TEND_ACTOR_STARTING))
    return -1;
  const tend_driver *d = tend_driver_of(h, a);
  if (d && d->start) { /* run in C (a backoff supervisor) */
    d->start(L, h, a);
    return -1;
  }
  return tend_lifecycle_push_factory(L, h, a);
}

/* ------------------------------------------------------------ stop */

void tend_actor_end_wait(lua_State *L, tend_host *h, tend_actor *a) {
  tend_promise_cancel(L, h, a);
  tend_promise_fiber_end(L, h, a);
  tend_value reply = tend_actor_wake_value(a);
  tend_value_drop(L, h, &reply);
  tend_actor_set_wake_value(a, reply);
  if (a->flags & TEND_AF_PARKED) tend_runq_unpark(L, h, a);
  a->wait = TEND_WAIT_NONE;
  a->wait_seq++; /* any WAKE timer still armed is now stale */
}

void tend_actor_stop(lua_State *L, tend_host *h, tend_actor *a,
                     tend_stop_reason why) {
  if (a->state >= TEND_ACTOR_STOPPING) return;
  if (a->flags & TEND_AF_SCHED) { /* its actor is on another scheduler */
    if (a->parent) /* a stand-in's (tend_actor_adopt): it waits for the end */
      a->state = TEND_ACTOR_STOPPING;
    h->sched_control(h, a, -1);
    return;
  }
  if (why == TEND_STOP_NORMAL && tend_actor_exited(L, h, a)) return;
  a->state = TEND_ACTOR_STOPPING;
  a->restart = TEND_RESTART_NONE;
  a->stop_reason = (uint8_t)why;
  if (tend_event_on(h)) {
    tend_event e = TEND_EVENT_INIT(TEND_EV_STOP, a);
    e.reason = tend_actor_reason_name(L, a);
    tend_event_emit(L, h, &e);
  }
  if (h->busy_end && tend_actor_busy_in_call(a)) {
    /* the host ends because only long calls were left: this one may
     * finish in a's shutdown time, after which on_kill ends it (OTP's
     * shutdown timeout, then kill) */
    int64_t allowed = tend_actor_shutdown_ns(a);
    if (allowed < INT64_MAX / 4)
      tend_timer_arm(L, h, TEND_TIMER_KILL, a, allowed, 0, 0);
  } else if (a->wait != TEND_WAIT_NONE) {
    tend_actor_end_wait(L, h, a);
    a->op = TEND_OP_NONE;
  }
  tend_actor_post(h, a, TEND_MSG_STOP, NULL);
}

/* Stopping goes on: the youngest child first, then post_stop, then death.
 * Returns the arguments pushed for post_stop, or -1. */
static int continue_stop(lua_State *L, tend_host *h, tend_actor *a) {
  if (a->last_child) {
    tend_actor_stop(L, h, a->last_child, TEND_STOP_SHUTDOWN);
    return -1; /* CHILD_GONE brings us back */
  }
  if (a->flags & TEND_AF_POST_STOP) return -1;
  a->flags |= TEND_AF_POST_STOP;
  int from_above = a->stop_reason == TEND_STOP_SHUTDOWN ||
                   a->stop_reason == TEND_STOP_BY_PARENT;
  if (from_above && tend_actor_shutdown_ns(a) == 0) {
    a->stop_reason = TEND_STOP_KILLED; /* brutal_kill (OTP): no post_stop */
    tend_actor_die(L, h, a);
    return -1;
  }
  if (!(a->flags & TEND_AF_HELD) &&         /* else its post_stop ran already */
      a->stop_reason != TEND_STOP_KILLED && /* killed in its call */
      tend_actor_push_hook(L, h, a, "post_stop")) {
    tend_actor_push_ctx(L, h, a);
    for (tend_timer *t = a->timers, *next; t; t = next) {
      next = t->next; /* a kill armed for its last call is over */
      if (t->kind == TEND_TIMER_KILL) tend_timer_cancel(L, h, t);
    }
    int64_t allowed = tend_actor_shutdown_ns(a);
    if (allowed < INT64_MAX / 4)
      tend_timer_arm(L, h, TEND_TIMER_KILL, a, allowed, 0, 0);
    a->op = TEND_OP_POST_STOP;
    return 2;
  }
  tend_actor_die(L, h, a);
  return -1;
}

void tend_host_set_exit_code(tend_host *h, int code) {
  if (!h->shutdown) h->exit_code = code;
}

void tend_host_shutdown(tend_host *h, int code) {
  if (h->shutdown) return;
  h->shutdown = TEND_SHUTDOWN_GRACEFUL;
  h->stopping = 1; /* a signal from now on ends the process */
  h->exit_code = code;
  if (h->front.shutdown) h->front.shutdown(h);
  for (uint32_t i = 0; i < h->at[TEND_AT_SHUTDOWN].n; i++) /* simulated */
    h->at[TEND_AT_SHUTDOWN].v[i]->shutdown(h);             /* nodes stop too */
  tend_deadletter_flush(h); /* what the log suppressed so far */
  if (h->user)
    tend_actor_stop(h->L, h, h->user, TEND_STOP_SHUTDOWN);
  else if (h->system)
    tend_actor_stop(h->L, h, h->system, TEND_STOP_SHUTDOWN);
}

void tend_host_fatal(lua_State *L, tend_host *h, int err, const char *what) {
  if (tend_error_push_brief(L, err)) { /* one line says it all */
    fprintf(stderr, "tend: %s%s\n", what, lua_tostring(L, -1));
    lua_pop(L, 1);
  } else {
    tend_error_describe(L, err);
    lua_getfield(L, err, "traceback");
    if (!lua_isstring(L, -1)) {
      lua_pop(L, 1);
      lua_getfield(L, err, "cause");
      if (lua_istable(L, -1))
        lua_getfield(L, -1, "traceback");
      else
        lua_pushnil(L);
      lua_replace(L, -2);
    }
    if (lua_isstring(L, -1)) /* an error with no traceback is one line */
      fprintf(stderr, "tend: %s%s\n%s\n", what, lua_tostring(L, -2),
              lua_tostring(L, -1));
    else
      fprintf(stderr, "tend: %s%s\n", what, lua_tostring(L, -2));
    lua_pop(L, 2);
  }
  fflush(stderr);
  h->failed = 1;
  tend_host_shutdown(h, 1);
}

/* ------------------------------------------------------------ death */

/* Drops every message left in a queue; user ones become dead letters. */
static void drain(lua_State *L, tend_host *h, tend_actor *a, tend_queue *q,
                  int user) {
  tend_msg *m;
  while ((m = tend_queue_pop(q)) != NULL) {
    if (user) {
      tend_letter l = {.to = a,
                       .from_id = m->sender_id,
                       .from_gen = m->sender_gen,
                       .why = "its recipient stopped"};
      tend_actor_dead_letter_at(L, h, &l, &m->value);
    }
    tend_msg_release(&h->msgs, m);
  }
}

const char *tend_actor_reason_name(lua_State *L, tend_actor *a) {
  switch ((tend_stop_reason)a->stop_reason) {
    case TEND_STOP_NORMAL: return "normal";
    case TEND_STOP_BY_PARENT:
    case TEND_STOP_SHUTDOWN: return "shutdown";
    case TEND_STOP_KILLED: return "killed";
    case TEND_STOP_FAILURE: break;
  }
  tend_actor_push_ext(L, a, TEND_EXT(error_ref));
  const char *kind = NULL;
  if (lua_istable(L, -1)) {
    lua_getfield(L, -1, "kind");
    kind = lua_tostring(L, -1); /* kept alive by the error value */
    lua_pop(L, 1);
  } else if (lua_type(L, -1) == LUA_TSTRING) { /* a proxy's remote reason */
    kind = lua_tostring(L, -1);                /* kept alive by the ext ref */
  }
  lua_pop(L, 1);
  return kind ? kind : "failure";
}

/* Pushes what watchers see as the reason a stopped. */
static void push_reason(lua_State *L, tend_actor *a) {
  if (a->stop_reason == TEND_STOP_FAILURE) /* the error value itself */
    tend_actor_push_ext(L, a, TEND_EXT(error_ref));
  else /* the names of tend_actor_reason_name */
    lua_pushstring(L, tend_actor_reason_name(L, a));
}

static void unlink_child(tend_actor *a) {
  tend_actor *p = a->parent;
  if (p == NULL) return;
  if (a->prev_sibling)
    a->prev_sibling->next_sibling = a->next_sibling;
  else
    p->first_child = a->next_sibling;
  if (a->next_sibling)
    a->next_sibling->prev_sibling = a->prev_sibling;
  else
    p->last_child = a->prev_sibling;
  a->prev_sibling = a->next_sibling = NULL;
}

void tend_actor_die(lua_State *L, tend_host *h, tend_actor *a) {
  if (a->state == TEND_ACTOR_DEAD) return;
  int top = lua_gettop(L);
  tend_actor_push_ctx(L, h, a); /* keep the record alive while we work */
  int ctx = lua_gettop(L);
  tend_actor_end_wait(L, h, a);
  while (a->timers) tend_timer_cancel(L, h, a->timers);
  tend_runq_remove(h, a);
  /* a dead ref keeps saying where it was: the path is in it (an anonymous
   * actor's made when asked) */
  tend_actor_push_dead_ref(L, h, a, ctx);
  int ref = lua_gettop(L);
  push_reason(L, a);
  tend_promise_fail_held(L, h, a, TEND_PROMISE_DEATH, -1); /* asks to it */
  tend_advice_check(L, h, a);
  if (tend_event_on(h) && a->role != TEND_ROLE_REMOTE) { /* not a proxy */
    tend_event e = TEND_EVENT_INIT(TEND_EV_TERMINATED, a);
    e.reason = tend_actor_reason_name(L, a);
    tend_event_emit(L, h, &e);
  }
  tend_watch_target_died(L, h, a, -2, -1);
  tend_watch_watcher_died(L, h, a);
  /* its programs are killed, its supervision records, registered name,
   * stash, receive timeout, sockets and HTTP calls go */
  for (uint32_t i = 0; i < h->at[TEND_AT_DEATH].n; i++)
    h->at[TEND_AT_DEATH].v[i]->death(L, h, a);
  tend_actor_ext_free(L, h, a);
  if (a->flags & TEND_AF_NAMED && a->parent) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, h->names_ref);
    lua_getiuservalue(L, ref, 1); /* its path, set at its spawn */
    lua_pushnil(L);
    lua_rawset(L, -3); /* names[path] = nil */
  }
  lua_settop(L, ctx);
  a->state = TEND_ACTOR_DEAD;
  drain(L, h, a, &a->mbox.user, 1);
  drain(L, h, a, &a->mbox.sys, 0);
  a->mbox.n_user = 0;
  tend_actor *parent = a->parent;
  unlink_child(a);
  if (parent && (a->flags & TEND_AF_GROUP)) /* its group restart goes on */
    tend_actor_post(h, parent, TEND_MSG_GROUP_STEP, NULL);
  const tend_driver *pd = parent ? tend_driver_of(h, parent) : NULL;
  if (pd && pd->child_died) /* a backoff supervisor's child */
    pd->child_died(L, h, parent, a);
  if (parent && (parent->state == TEND_ACTOR_STOPPING ||
                 parent->state == TEND_ACTOR_RESTARTING))
    tend_actor_post(h, parent, TEND_MSG_CHILD_GONE, NULL);
  if (a == h->main) h->main = NULL;
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->anchors_ref);
  lua_pushnil(L);
  lua_rawseti(L, -2, a->id); /* anchors[id] = nil */
  tend_slots_release(&h->ids, a->id);
  if (a == h->user) { /* the user tree is gone: tasks next */
    h->user = NULL;
    if (h->system) tend_actor_stop(L, h, h->system, TEND_STOP_SHUTDOWN);
  } else if (a == h->system) {
    h->system = NULL;
    tend_timers_cancel_all(L, h);
    for (uint32_t i = 0; i < h->at[TEND_AT_TREE_GONE].n; i++) /* NATS */
      h->at[TEND_AT_TREE_GONE].v[i]->tree_gone(h); /* a task left open */
  }
  lua_settop(L, top);
}

/* ------------------------------------------------------------ dispatch */

int tend_lifecycle_system(lua_State *L, tend_host *h, tend_actor *a,
                          tend_msg *m) {
  tend_msg about = *m;
  tend_msg_release(&h->msgs, m);
  switch (about.kind) {
    case TEND_MSG_START: return start(L, h, a);
    case TEND_MSG_STOP:
      if (a->state == TEND_ACTOR_STOPPING) return continue_stop(L, h, a);
      return -1;
    case TEND_MSG_CHILD_GONE:
      if (a->state == TEND_ACTOR_STOPPING) return continue_stop(L, h, a);
      break; /* a restart may wait for it */
    default: break;
  }
  tend_message_fn handle = h->on_message[about.kind]; /* the supervisor's */
  return handle ? handle(L, h, a, &about) : -1;
}

/* ------------------------------------------------------------ timers */

/* tend.after: the function runs as a task under /system (one of tend's
 * own when the timer's tag is TEND_TASK_INTERNAL). */
static void on_task(lua_State *L, tend_host *h, tend_timer *t, tend_actor *a) {
  (void)a;
  if (h->system == NULL || h->shutdown) return;
  tend_value v = tend_timer_value(t);
  t->vtype = TEND_VALUE_NIL;
  tend_value_take(L, h, &v);
  tend_spawn_opts o;
  tend_spawn_opts_init(&o);
  o.task = 1;
  o.internal = t->tag == TEND_TASK_INTERNAL;
  tend_actor_spawn(L, h, h->system, -1, &o);
  lua_pop(L, 2); /* ref, function */
}

/* A long call still runs at the end of the shutdown time of a stopping
 * actor: the call ends there; the actor stops without its post_stop, its
 * reason "killed" (its children stop first, as always). */
static void kill_call(lua_State *L, tend_host *h, tend_actor *a) {
  tend_actor_push_path(L, h, a);
  tend_host_log(h, TEND_LOG_WARN, lua_tostring(L, -1),
                "still in its call at the end of its shutdown time; killed");
  lua_pop(L, 1);
  tend_actor_end_wait(L, h, a);
  a->op = TEND_OP_NONE;
  a->stop_reason = TEND_STOP_KILLED; /* no post_stop: continue_stop skips it */
  if (tend_actor_has_work(a)) tend_runq_push(h, a); /* its STOP */
}

/* post_stop (or a call of a stopping actor) overran the actor's shutdown
 * time: it dies now. */
static void on_kill(lua_State *L, tend_host *h, tend_timer *t, tend_actor *a) {
  (void)t;
  if (a && a->state == TEND_ACTOR_STOPPING && a->op != TEND_OP_NONE &&
      a->op != TEND_OP_POST_STOP) {
    kill_call(L, h, a);
    return;
  }
  if (a == NULL || a->op != TEND_OP_POST_STOP) return;
  tend_actor_push_path(L, h, a);
  tend_host_log(h, TEND_LOG_WARN, lua_tostring(L, -1),
                "post_stop overran its shutdown time; killed");
  lua_pop(L, 1);
  a->op = TEND_OP_NONE;
  a->stop_reason = TEND_STOP_KILLED; /* what its watchers see (OTP) */
  tend_actor_die(L, h, a);
}

const tend_driver tend_lifecycle_driver = {
    .name = "lifecycle",
    .timers = (const tend_driver_timer[]){
        {TEND_TIMER_TASK, on_task}, {TEND_TIMER_KILL, on_kill}, {0}}};
