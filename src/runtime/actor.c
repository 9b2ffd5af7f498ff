/* actor: records, paths, refs, spawn and send (see actor.h). */
#include "runtime/actor.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/error.h"
#include "runtime/event.h"
#include "runtime/host.h"
#include "runtime/promise.h"
#include "runtime/ref.h"
#include "runtime/sched.h"
#include "runtime/supervise.h"
#include "runtime/typed.h"
#include "runtime/value.h"

/* ------------------------------------------------------------ lookups */

void tend_actor_push_ctx(lua_State *L, const tend_host *h,
                         const tend_actor *a) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->anchors_ref);
  lua_rawgeti(L, -1, a->id);
  lua_replace(L, -2);
}

tend_actor *tend_actor_live(tend_host *h, uint32_t id, uint32_t gen) {
  tend_actor *a = id ? tend_slots_get(&h->ids, id, gen) : NULL;
  if (a == NULL || a->kind != TEND_ENTITY_ACTOR || a->state == TEND_ACTOR_DEAD)
    return NULL;
  return a;
}

void tend_actor_push_path(lua_State *L, const tend_host *h, tend_actor *a) {
  tend_actor_push_ctx(L, h, a);
  if (lua_isnil(L, -1)) { /* dead and no longer anchored: rebuilt */
    lua_pop(L, 1);
    if (a->parent)
      tend_actor_push_path(L, h, a->parent);
    else
      lua_pushliteral(L, "");
    lua_pushfstring(L, "/$%I", (lua_Integer)a->seq);
    lua_concat(L, 2);
    return;
  }
  if (lua_getiuservalue(L, -1, TEND_UV_PATH) == LUA_TNIL) {
    lua_pop(L, 1); /* anonymous, first use: parent path + "/$seq" */
    tend_actor_push_path(L, h, a->parent);
    lua_pushfstring(L, "/$%I", (lua_Integer)a->seq);
    lua_concat(L, 2);
    lua_pushvalue(L, -1);
    lua_setiuservalue(L, -3, TEND_UV_PATH);
  }
  lua_replace(L, -2); /* leave the path */
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

/* ------------------------------------------------------------ ext */

static const size_t ext_refs[] = {
    TEND_EXT(decider_ref), TEND_EXT(args_ref), TEND_EXT(error_ref),
    TEND_EXT(failed_msg_ref), TEND_EXT(cause_ref)};

static int *ref_field(tend_actor_ext *x, size_t field) {
  return (int *)(void *)((char *)x + field);
}

tend_actor_ext *tend_actor_ext_get(tend_actor *a) {
  if (a->ext) return a->ext;
  a->ext = calloc(1, sizeof *a->ext);
  if (a->ext)
    for (size_t i = 0; i < sizeof ext_refs / sizeof ext_refs[0]; i++)
      *ref_field(a->ext, ext_refs[i]) = LUA_NOREF;
  return a->ext;
}

void tend_actor_ext_free(lua_State *L, tend_host *h, tend_actor *a) {
  (void)h;
  tend_actor_ext *x = a->ext;
  if (x == NULL) return;
  for (size_t i = 0; i < sizeof ext_refs / sizeof ext_refs[0]; i++)
    luaL_unref(L, LUA_REGISTRYINDEX, *ref_field(x, ext_refs[i]));
  tend_window_free(&x->child_window);
  tend_window_free(&x->group_window);
  free(x);
  a->ext = NULL;
}

void tend_actor_push_ext(lua_State *L, const tend_actor *a, size_t field) {
  if (a->ext == NULL)
    lua_pushnil(L);
  else
    lua_rawgeti(L, LUA_REGISTRYINDEX, *ref_field(a->ext, field));
}

void tend_actor_set_ext(lua_State *L, tend_actor *a, size_t field) {
  tend_actor_ext *x = tend_actor_ext_get(a);
  if (x == NULL) {
    lua_pop(L, 1);
    return;
  }
  int *r = ref_field(x, field);
  luaL_unref(L, LUA_REGISTRYINDEX, *r);
  *r = luaL_ref(L, LUA_REGISTRYINDEX); /* nil: LUA_REFNIL */
}

void tend_actor_set_strategy(lua_State *L, tend_actor *a,
                             const tend_strategy *s, int decider) {
  if (decider) decider = lua_absindex(L, decider);
  tend_actor_ext *x = tend_actor_ext_get(a);
  if (x == NULL) luaL_error(L, "out of memory");
  x->strategy = *s;
  x->has_strategy = 1;
  if (decider)
    lua_pushvalue(L, decider);
  else
    lua_pushnil(L);
  tend_actor_set_ext(L, a, TEND_EXT(decider_ref));
}

/* ------------------------------------------------------------ spawn */

void tend_spawn_opts_init(tend_spawn_opts *o) {
  memset(o, 0, sizeof *o);
  o->shutdown_ns = tend_clock_ns(5.0);
  o->restart = TEND_TRANSIENT;
}

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

/* Pushes the path a child named (stack index name) of parent would have;
 * raises (naming fn) if the name is taken. */
static void push_child_path(lua_State *L, tend_host *h, tend_actor *parent,
                            int name, const char *fn) {
  tend_actor_push_path(L, h, parent);
  lua_pushliteral(L, "/");
  lua_pushvalue(L, name);
  lua_concat(L, 3); /* push child path */
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
  tend_actor *a = new_record(L, h, parent);
  if (register_record(L, h, a) != 0) luaL_error(L, "too many actors");
  if (o->name) { /* stack: path udata */
    lua_rawgeti(L, LUA_REGISTRYINDEX, h->names_ref);
    lua_pushvalue(L, -3);
    lua_pushboolean(L, 1);
    lua_rawset(L, -3); /* names[path] = true */
    lua_pop(L, 1);
    lua_insert(L, -2);
    lua_setiuservalue(L, -2, TEND_UV_PATH);
    a->flags |= TEND_AF_NAMED;
  }
  lua_pushvalue(L, factory);
  lua_setiuservalue(L, -2, TEND_UV_FACTORY);
  if (o->args) {
    lua_pushvalue(L, o->args);
    tend_actor_set_ext(L, a, TEND_EXT(args_ref));
  }
  if (o->strategy) tend_actor_set_strategy(L, a, o->strategy, o->decider);
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
    tend_event e = TEND_EVENT_INIT(TEND_EV_SPAWN, a);
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
  lua_pushfstring(L, "/%s", name);
  lua_setiuservalue(L, -2, TEND_UV_PATH);
  lua_pop(L, 1);
  return a;
}

/* ------------------------------------------------------------ send */

void tend_actor_dead_letter(lua_State *L, tend_host *h, tend_actor *to,
                            tend_value *v) {
  h->stats.dead_letters++;
  if (v) tend_value_drop(L, h, v);
  if (tend_event_on(h)) {
    tend_event e = TEND_EVENT_INIT(TEND_EV_DEAD_LETTER, to);
    if (to == NULL) e.path = "/deadLetters";
    tend_event_emit(L, h, &e);
  }
}

/* a's mailbox is full: makes room by its overflow rule. Returns 1 when the
 * new message may go in, 0 when it was taken (dead letter or failure). */
static int overflow(lua_State *L, tend_host *h, tend_actor *a, tend_value *v,
                    tend_overflow rule) {
  switch (rule) {
    case TEND_OVERFLOW_DROP_NEW: tend_actor_dead_letter(L, h, a, v); return 0;
    case TEND_OVERFLOW_DROP_OLD: {
      tend_msg *old = tend_queue_pop(&a->mbox.user);
      a->mbox.n_user--;
      tend_actor_dead_letter(L, h, a, &old->value);
      tend_msg_release(&h->msgs, old);
      return 1;
    }
    case TEND_OVERFLOW_FAIL:
      tend_actor_dead_letter(L, h, a, v);
      if (a->state < TEND_ACTOR_STOPPING) {
        lua_pushfstring(L, "mailbox full (capacity %d)", (int)a->capacity);
        tend_error_new(L, "MailboxOverflow", lua_tostring(L, -1));
        lua_remove(L, -2);
        tend_actor_fail(L, h, a);
      }
      return 0;
  }
  return 0;
}

void tend_actor_send_value(lua_State *L, tend_host *h, uint32_t id,
                           uint32_t gen, tend_value v, uint32_t sender_id,
                           uint32_t sender_gen) {
  tend_actor *a = tend_slots_get(&h->ids, id, gen);
  if (a && a->kind == TEND_ENTITY_PROMISE) {
    tend_promise_resolve(L, h, (tend_promise *)(void *)a, v);
    return;
  }
  if (a == NULL || a->state == TEND_ACTOR_DEAD ||
      (a->flags & TEND_AF_GUARDIAN)) {
    tend_actor_dead_letter(L, h, NULL, &v);
    return;
  }
  if (h->send_filter && h->send_filter(L, h, a, &v, sender_id, sender_gen))
    return; /* dropped or held back by tend.chaos */
  uint32_t capacity = a->capacity;
  tend_overflow rule = (tend_overflow)a->overflow;
  if ((a->flags & TEND_AF_TYPED) && tend_typed_stash(a)) {
    capacity = tend_typed_stash(a); /* waiting for a backoff restart */
    rule = TEND_OVERFLOW_DROP_OLD;
  }
  if (capacity && a->mbox.n_user >= capacity &&
      !overflow(L, h, a, &v, rule))
    return;
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
