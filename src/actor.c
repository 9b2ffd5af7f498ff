/* actor: spawn, send, stop and death of actors (see actor.h). */
#include "actor.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"
#include "lbind.h"
#include "backoff_sup.h"
#include "lbind.h"
#include "event.h"
#include "sched.h"
#include "supervise.h"
#include "value.h"
#include "watch.h"

/* ------------------------------------------------------------ names, paths */

void tend_actor_push_name(lua_State *L, const tend_actor *a) {
  if (a->flags & TEND_AF_NAMED) {
    tend_host *h = tend_host_of(L);
    tend_actor_push_ctx(L, h, a);
    lua_getiuservalue(L, -1, TEND_UV_EXTRAS);
    lua_getfield(L, -1, "name");
    lua_replace(L, -3);
    lua_pop(L, 1);
  } else {
    lua_pushfstring(L, "$%I", (lua_Integer)a->seq);
  }
}

void tend_actor_push_path(lua_State *L, const tend_host *h,
                          const tend_actor *a) {
  (void)h;
  if (a->parent == NULL) {
    lua_pushliteral(L, "/");
    tend_actor_push_name(L, a);
    lua_concat(L, 2);
    return;
  }
  tend_actor_push_path(L, h, a->parent);
  lua_pushliteral(L, "/");
  tend_actor_push_name(L, a);
  lua_concat(L, 3);
}

void tend_actor_push_ctx(lua_State *L, const tend_host *h,
                         const tend_actor *a) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->anchors_ref);
  lua_rawgeti(L, -1, a->id);
  lua_replace(L, -2);
}

void tend_actor_push_ref(lua_State *L, tend_host *h, tend_actor *a) {
  if (a->state == TEND_ACTOR_DEAD) { /* no anchor any more */
    tend_ref_new(L, a->id, a->gen);
    return;
  }
  tend_actor_push_ctx(L, h, a);
  if (lua_getiuservalue(L, -1, TEND_UV_REF) == LUA_TNIL) {
    lua_pop(L, 1);
    tend_ref_new(L, a->id, a->gen);
    lua_pushvalue(L, -1);
    lua_setiuservalue(L, -3, TEND_UV_REF); /* cache it */
  }
  lua_replace(L, -2); /* leave the ref */
}

/* Pushes a's extras table, creating it if asked. Pushes nil otherwise. */
static void push_extras(lua_State *L, int ctx, int create) {
  ctx = lua_absindex(L, ctx);
  if (lua_getiuservalue(L, ctx, TEND_UV_EXTRAS) == LUA_TNIL && create) {
    lua_pop(L, 1);
    lua_createtable(L, 0, 2);
    lua_pushvalue(L, -1);
    lua_setiuservalue(L, ctx, TEND_UV_EXTRAS);
  }
}

/* ------------------------------------------------------------ spawn */

static tend_actor *new_record(lua_State *L, tend_host *h, tend_actor *parent) {
  tend_actor *a = lua_newuserdatauv(L, sizeof *a, TEND_UV_COUNT);
  memset(a, 0, sizeof *a);
  a->magic = TEND_ACTOR_MAGIC;
  a->kind = TEND_ENTITY_ACTOR;
  a->parent = parent;
  a->seq = ++h->next_seq;
  a->shutdown_ns = tend_clock_ns(5.0);
  luaL_setmetatable(L, TEND_CTX_MT);
  return a;
}

/* Gives a its id and anchors its userdata (at the top of the stack). */
static int register_record(lua_State *L, tend_host *h, tend_actor *a) {
  a->id = tend_slots_alloc(&h->ids, a, &a->gen);
  if (a->id == 0) return -1;
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->anchors_ref);
  lua_pushvalue(L, -2);
  lua_rawseti(L, -2, a->id); /* anchors[id] = udata */
  lua_pop(L, 1);
  return 0;
}

static void link_child(tend_actor *parent, tend_actor *a) {
  a->prev_sibling = parent->last_child;
  if (parent->last_child)
    parent->last_child->next_sibling = a;
  else
    parent->first_child = a;
  parent->last_child = a;
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

void tend_actor_post(tend_host *h, tend_actor *a, tend_msg_kind kind,
                     const tend_actor *about) {
  tend_msg *m = tend_msg_alloc(&h->msgs);
  if (m == NULL) return; /* out of memory: the signal is lost */
  m->kind = kind;
  m->sender_id = about ? about->id : 0;
  m->sender_gen = about ? about->gen : 0;
  m->value.type = TEND_VALUE_NIL;
  tend_queue_push(&a->mbox.sys, m);
  tend_sched_enqueue(h, a);
}

tend_actor *tend_actor_live(tend_host *h, uint32_t id, uint32_t gen) {
  tend_actor *a = id ? tend_slots_get(&h->ids, id, gen) : NULL;
  if (a == NULL || a->kind != TEND_ENTITY_ACTOR || a->state == TEND_ACTOR_DEAD)
    return NULL;
  return a;
}

void tend_actor_push_extra(lua_State *L, const tend_host *h, tend_actor *a,
                           const char *k) {
  tend_actor_push_extras(L, h, a);
  lua_getfield(L, -1, k);
  lua_replace(L, -2);
}

tend_actor_ext *tend_actor_ext_get(tend_actor *a) {
  if (a->ext == NULL) a->ext = calloc(1, sizeof *a->ext);
  return a->ext;
}

void tend_actor_push_extras(lua_State *L, const tend_host *h, tend_actor *a) {
  tend_actor_push_ctx(L, h, a);
  push_extras(L, -1, 1);
  lua_replace(L, -2);
}

/* Pushes the path a child named (stack index name) of parent would have,
 * and the names table; raises if the name is taken. */
static void push_child_path(lua_State *L, tend_host *h, tend_actor *parent,
                            int name) {
  tend_actor_push_path(L, h, parent);
  lua_pushliteral(L, "/");
  lua_pushvalue(L, name);
  lua_concat(L, 3); /* push child path */
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->names_ref);
  lua_pushvalue(L, -2);
  if (lua_rawget(L, -2) != LUA_TNIL)
    luaL_error(L, "name '%s' is already taken: %s exists",
               lua_tostring(L, name), lua_tostring(L, -3));
  lua_pop(L, 1);
}

void tend_actor_check_name(lua_State *L, tend_host *h, tend_actor *parent,
                           int name) {
  name = lua_absindex(L, name);
  push_child_path(L, h, parent, name);
  lua_pop(L, 2);
}

tend_actor *tend_actor_spawn(lua_State *L, tend_host *h, tend_actor *parent,
                             int factory, const tend_spawn_opts *o) {
  factory = lua_absindex(L, factory);
  if (o->name)
    push_child_path(L, h, parent, o->name); /* unique among siblings */
  tend_actor *a = new_record(L, h, parent);
  if (register_record(L, h, a) != 0) luaL_error(L, "too many actors");
  if (o->name) { /* stack: path names udata */
    lua_pushvalue(L, -3);
    lua_pushboolean(L, 1);
    lua_rawset(L, -4); /* names[path] = true */
    lua_replace(L, -3);
    lua_pop(L, 1); /* stack: udata */
    a->flags |= TEND_AF_NAMED;
    push_extras(L, -1, 1);
    lua_pushvalue(L, o->name);
    lua_setfield(L, -2, "name");
    lua_pop(L, 1);
  }
  if (o->args) {
    push_extras(L, lua_gettop(L), 1);
    lua_pushvalue(L, o->args);
    lua_setfield(L, -2, "args");
    lua_pop(L, 1);
  }
  lua_pushvalue(L, factory);
  lua_setiuservalue(L, -2, TEND_UV_FACTORY);
  if (o->supervisor) {
    push_extras(L, lua_gettop(L), 1);
    lua_pushvalue(L, o->supervisor);
    lua_setfield(L, -2, "supervisor");
    lua_pop(L, 1);
  }
  a->restart_type = (uint8_t)o->restart;
  if (o->max_message_ns) {
    tend_actor_ext *x = tend_actor_ext_get(a);
    if (x) x->max_ns = o->max_message_ns;
  }
  a->capacity = o->capacity;
  a->overflow = (uint8_t)o->overflow;
  a->shutdown_ns = o->shutdown_ns;
  if (o->task)
    a->flags |= TEND_AF_TASK;
  else
    h->stats.spawned++;
  link_child(parent, a);
  tend_actor_post(h, a, TEND_MSG_START, NULL);
  if (tend_event_on(h)) {
    tend_event e = TEND_EVENT_INIT("spawn", a);
    tend_event_emit(L, h, &e);
  }
  lua_pop(L, 1); /* udata */
  tend_actor_push_ref(L, h, a);
  return a;
}

tend_actor *tend_actor_guardian(lua_State *L, tend_host *h, const char *name) {
  tend_actor *a = new_record(L, h, NULL);
  if (register_record(L, h, a) != 0) luaL_error(L, "too many actors");
  a->state = TEND_ACTOR_RUNNING;
  a->flags |= TEND_AF_GUARDIAN | TEND_AF_NAMED;
  push_extras(L, -1, 1);
  lua_pushstring(L, name);
  lua_setfield(L, -2, "name");
  lua_pop(L, 2);
  return a;
}

/* ------------------------------------------------------------ send */

void tend_actor_dead_letter(lua_State *L, tend_host *h, tend_actor *to,
                            tend_value *v) {
  h->stats.dead_letters++;
  if (v) tend_value_drop(L, h, v);
  if (tend_event_on(h)) {
    tend_event e = TEND_EVENT_INIT("dead_letter", to);
    if (to == NULL) e.path = "/deadLetters";
    tend_event_emit(L, h, &e);
  }
}

static void dead_letter(lua_State *L, tend_host *h, tend_value *v) {
  tend_actor_dead_letter(L, h, NULL, v);
}

static void resolve_promise(lua_State *L, tend_host *h, tend_promise *p,
                            tend_value v) {
  tend_actor *asker = p->asker;
  if (asker->state == TEND_ACTOR_DEAD || asker->promise != p) {
    dead_letter(L, h, &v);
    return;
  }
  tend_timer_cancel(L, h, p->timeout);
  asker->promise = NULL;
  tend_promise_free(h, p);
  asker->wake_value = v;
  tend_sched_wake(h, asker, 1);
}

void tend_actor_send_value(lua_State *L, tend_host *h, uint32_t id,
                           uint32_t gen, tend_value v, uint32_t sender_id,
                           uint32_t sender_gen) {
  tend_actor *a = tend_slots_get(&h->ids, id, gen);
  if (a && a->kind == TEND_ENTITY_PROMISE) {
    resolve_promise(L, h, (tend_promise *)(void *)a, v);
    return;
  }
  if (a == NULL || a->state == TEND_ACTOR_DEAD ||
      (a->flags & TEND_AF_GUARDIAN)) {
    dead_letter(L, h, &v);
    return;
  }
  if (h->chaos_send_ref > 0 && !h->chaos_bypass &&
      tend_chaos_intercept(L, h, a, &v, sender_id, sender_gen))
    return; /* dropped or held back by tend.chaos */
  uint32_t capacity = a->capacity;
  tend_overflow overflow = (tend_overflow)a->overflow;
  if ((a->flags & TEND_AF_TYPED) && a->ext->typed->waiting &&
      a->ext->typed->stash) { /* waiting for a backoff restart: a stash */
    capacity = a->ext->typed->stash;
    overflow = TEND_OVERFLOW_DROP_OLD;
  }
  if (capacity && a->mbox.n_user >= capacity) {
    switch (overflow) {
      case TEND_OVERFLOW_DROP_NEW: tend_actor_dead_letter(L, h, a, &v); return;
      case TEND_OVERFLOW_DROP_OLD: {
        tend_msg *old = tend_queue_pop(&a->mbox.user);
        a->mbox.n_user--;
        tend_actor_dead_letter(L, h, a, &old->value);
        tend_msg_release(&h->msgs, old);
        break;
      }
      case TEND_OVERFLOW_FAIL:
        tend_actor_dead_letter(L, h, a, &v);
        if (a->state < TEND_ACTOR_STOPPING) {
          lua_pushfstring(L, "mailbox full (capacity %d)", (int)a->capacity);
          tend_error_new(L, "MailboxOverflow", lua_tostring(L, -1));
          lua_remove(L, -2);
          tend_actor_fail(L, h, a);
        }
        return;
    }
  }
  tend_msg *m = tend_msg_alloc(&h->msgs);
  if (m == NULL) {
    tend_actor_dead_letter(L, h, a, &v);
    return;
  }
  m->kind = TEND_MSG_USER;
  m->sender_id = sender_id;
  m->sender_gen = sender_gen;
  m->value = v;
  tend_queue_push(&a->mbox.user, m);
  a->mbox.n_user++;
  if (tend_actor_takes_mail(a)) tend_sched_enqueue(h, a);
}

void tend_actor_send(lua_State *L, tend_host *h, uint32_t id, uint32_t gen,
                     int idx, uint32_t sender_id, uint32_t sender_gen) {
  tend_actor_send_in(L, h, id, gen, idx, sender_id, sender_gen, 0);
}

void tend_actor_send_in(lua_State *L, tend_host *h, uint32_t id, uint32_t gen,
                        int idx, uint32_t sender_id, uint32_t sender_gen,
                        int store) {
  tend_value v;
  if (tend_value_store_in(L, h, idx, &v, store) != 0)
    luaL_error(L, "out of message slots");
  tend_actor_send_value(L, h, id, gen, v, sender_id, sender_gen);
}

/* ------------------------------------------------------------ stop, death */

void tend_promise_free(tend_host *h, tend_promise *p) {
  tend_slots_release(&h->ids, p->id);
  free(p);
}

void tend_actor_end_wait(lua_State *L, tend_host *h, tend_actor *a) {
  if (a->promise) {
    tend_timer_cancel(L, h, a->promise->timeout);
    tend_promise_free(h, a->promise);
    a->promise = NULL;
  }
  tend_value_drop(L, h, &a->wake_value);
  if (a->thread) tend_sched_unpark(L, h, a);
  a->wait = TEND_WAIT_NONE;
  a->wait_seq++; /* any WAKE timer still armed is now stale */
}

void tend_actor_stop(lua_State *L, tend_host *h, tend_actor *a,
                     tend_stop_reason why) {
  if (a->state >= TEND_ACTOR_STOPPING) return;
  if (why == TEND_STOP_NORMAL && tend_supervise_normal_exit(L, h, a)) return;
  a->state = TEND_ACTOR_STOPPING;
  a->stop_reason = (uint8_t)why;
  if (tend_event_on(h)) {
    tend_event e = TEND_EVENT_INIT("stop", a);
    e.reason = tend_actor_reason_name(L, h, a);
    tend_event_emit(L, h, &e);
  }
  if (a->wait != TEND_WAIT_NONE) {
    tend_actor_end_wait(L, h, a);
    a->op = TEND_OP_NONE;
  }
  tend_actor_post(h, a, TEND_MSG_STOP, NULL);
}

/* Drops every message left in a queue; user ones become dead letters. */
static void drain(lua_State *L, tend_host *h, tend_actor *a, tend_queue *q,
                  int user) {
  tend_msg *m;
  while ((m = tend_queue_pop(q)) != NULL) {
    if (user) tend_actor_dead_letter(L, h, a, &m->value);
    tend_msg_release(&h->msgs, m);
  }
}

const char *tend_actor_reason_name(lua_State *L, tend_host *h, tend_actor *a) {
  switch ((tend_stop_reason)a->stop_reason) {
    case TEND_STOP_NORMAL:
    case TEND_STOP_BY_PARENT: return "normal";
    case TEND_STOP_SHUTDOWN: return "shutdown";
    case TEND_STOP_FAILURE: break;
  }
  tend_actor_push_extras(L, h, a);
  lua_getfield(L, -1, "error");
  const char *kind = NULL;
  if (lua_istable(L, -1)) {
    lua_getfield(L, -1, "kind");
    kind = lua_tostring(L, -1); /* kept alive by the error value */
    lua_pop(L, 1);
  }
  lua_pop(L, 2);
  return kind ? kind : "failure";
}

/* Pushes what watchers see as the reason a stopped. */
static void push_reason(lua_State *L, tend_host *h, tend_actor *a) {
  switch ((tend_stop_reason)a->stop_reason) {
    case TEND_STOP_NORMAL:
    case TEND_STOP_BY_PARENT: lua_pushliteral(L, "normal"); return;
    case TEND_STOP_SHUTDOWN: lua_pushliteral(L, "shutdown"); return;
    case TEND_STOP_FAILURE:
      tend_actor_push_extras(L, h, a);
      lua_getfield(L, -1, "error");
      lua_replace(L, -2);
      return;
  }
}

void tend_actor_die(lua_State *L, tend_host *h, tend_actor *a) {
  if (a->state == TEND_ACTOR_DEAD) return;
  int top = lua_gettop(L);
  tend_actor_push_ctx(L, h, a); /* keep the record alive while we work */
  int ctx = lua_gettop(L);
  tend_actor_end_wait(L, h, a);
  while (a->timers) tend_timer_cancel(L, h, a->timers);
  tend_sched_dequeue(h, a);
  tend_actor_push_path(L, h, a);
  int path = lua_gettop(L);
  tend_actor_push_ref(L, h, a); /* a dead ref keeps saying where it was */
  lua_pushvalue(L, path);
  tend_ref_set_path(L, -2);
  push_reason(L, h, a);
  if (tend_event_on(h)) {
    tend_event e = TEND_EVENT_INIT("terminated", a);
    e.reason = tend_actor_reason_name(L, h, a);
    tend_event_emit(L, h, &e);
  }
  tend_watch_target_died(L, h, a, -2, -1);
  tend_watch_watcher_died(L, h, a);
  tend_backoff_free(L, h, a);
  tend_supervise_free(a);
  if (a->flags & TEND_AF_NAMED && a->parent) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, h->names_ref);
    lua_pushvalue(L, path);
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
  if (parent && (parent->flags & TEND_AF_BACKOFF))
    tend_backoff_child_died(L, h, parent, a);
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
  }
  lua_settop(L, top);
}

void tend_actor_post_stop_done(lua_State *L, tend_host *h, tend_actor *a) {
  tend_actor_die(L, h, a);
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
  if (a->flags & TEND_AF_HOOKS) {
    tend_actor_push_ctx(L, h, a);
    lua_getiuservalue(L, -1, TEND_UV_BEHAVIOR);
    if (lua_getfield(L, -1, "post_stop") == LUA_TFUNCTION) {
      lua_insert(L, -3); /* fn ctx hooks */
      lua_insert(L, -2); /* fn hooks ctx */
      if (a->shutdown_ns < INT64_MAX / 4)
        tend_timer_arm(L, h, TEND_TIMER_KILL, a, a->shutdown_ns, 0, 0);
      a->op = TEND_OP_POST_STOP;
      return 2;
    }
    lua_pop(L, 3);
  }
  tend_actor_die(L, h, a);
  return -1;
}

int tend_actor_push_factory_call(lua_State *L, tend_host *h, tend_actor *a) {
  tend_actor_push_ctx(L, h, a);
  int ctx = lua_gettop(L);
  lua_getiuservalue(L, ctx, TEND_UV_FACTORY);
  int nargs = 0;
  if (!(a->flags & TEND_AF_TASK)) {
    lua_pushvalue(L, ctx);
    nargs++;
  }
  if (lua_getiuservalue(L, ctx, TEND_UV_EXTRAS) == LUA_TTABLE &&
      lua_getfield(L, -1, "args") == LUA_TTABLE) {
    int args = lua_gettop(L);
    lua_Integer n = luaL_len(L, args);
    luaL_checkstack(L, (int)n + 2, "too many spawn args");
    for (lua_Integer i = 1; i <= n; i++) lua_rawgeti(L, args, i);
    lua_remove(L, args);
    lua_remove(L, args - 1);
    nargs += (int)n;
  } else {
    lua_settop(L, ctx + 1 + nargs);
  }
  lua_remove(L, ctx);
  a->op = (a->flags & TEND_AF_TASK) ? TEND_OP_TASK : TEND_OP_FACTORY;
  return nargs;
}

static int start(lua_State *L, tend_host *h, tend_actor *a) {
  /* An actor stopped before it started still starts, so that its
   * post_stop runs (as Akka); a task stopped before it ran is dropped. */
  if (a->state == TEND_ACTOR_DEAD ||
      (a->flags & TEND_AF_TASK && a->state != TEND_ACTOR_STARTING))
    return -1;
  return tend_actor_push_factory_call(L, h, a);
}

int tend_actor_system(lua_State *L, tend_host *h, tend_actor *a, tend_msg *m) {
  tend_msg_kind kind = m->kind;
  tend_msg about = *m;
  tend_msg_release(&h->msgs, m);
  switch (kind) {
    case TEND_MSG_START:
      if (a->flags & TEND_AF_BACKOFF) {
        tend_backoff_start(L, h, a);
        return -1;
      }
      return start(L, h, a);
    case TEND_MSG_STOP:
      if (a->state == TEND_ACTOR_STOPPING) return continue_stop(L, h, a);
      return -1;
    case TEND_MSG_CHILD_GONE:
      if (a->state == TEND_ACTOR_STOPPING) return continue_stop(L, h, a);
      if (a->state == TEND_ACTOR_RESTARTING &&
          (a->flags & TEND_AF_RESTART_WAIT))
        return tend_supervise_restart_continue(L, h, a);
      return -1;
    case TEND_MSG_CHILD_FAILED:
      return tend_supervise_child_failed(L, h, a, &about);
    case TEND_MSG_RESTART:
      return tend_supervise_restart(L, h, a,
                                    about.value.type == TEND_VALUE_TRUE);
    case TEND_MSG_USER:
    case TEND_MSG_TERMINATED: break;
  }
  return -1;
}
