/* watch: DeathWatch records and notifications (see watch.h). */
#include "runtime/core/watch.h"

#include <lauxlib.h>
#include <stdlib.h>

#include "runtime/core/promise.h"
#include "runtime/core/ref.h"
#include "runtime/core/runq.h"
#include "runtime/core/value.h"

/* The list of w's watches that r is on: `watching` while its target is
 * live, `gone` once unlinked from it. */
static tend_watch **held_list(tend_watch *r) {
  return r->target ? &r->watcher->ext->watching : &r->watcher->ext->gone;
}

static void unlink_watcher(tend_watch *r) {
  if (r->w_prev)
    r->w_prev->w_next = r->w_next;
  else
    *held_list(r) = r->w_next;
  if (r->w_next) r->w_next->w_prev = r->w_prev;
  r->w_prev = r->w_next = NULL;
}

static void link_watcher(tend_watch *r) {
  tend_watch **head = held_list(r);
  r->w_prev = NULL;
  r->w_next = *head;
  if (*head) (*head)->w_prev = r;
  *head = r;
}

/* r's target is gone (or r is being freed): off its watchers, and from its
 * watcher's `watching` to its `gone` */
static void unlink_target(tend_watch *r) {
  tend_actor *t = r->target;
  if (t == NULL) return;
  if (r->restarts) t->ext->restart_watches--;
  if (r->t_prev)
    r->t_prev->t_next = r->t_next;
  else
    t->ext->watchers = r->t_next;
  if (r->t_next) r->t_next->t_prev = r->t_prev;
  unlink_watcher(r);
  r->target = NULL;
  r->t_prev = r->t_next = NULL;
  link_watcher(r);
}

static void free_record(lua_State *L, tend_host *h, tend_watch *r) {
  unlink_target(r);
  unlink_watcher(r);
  tend_value_drop(L, h, &r->msg);
  free(r);
}

/* w's watch of (id, gen), or NULL. A watch of a live target is on both
 * w's `watching` and the target's `watchers`: the two are walked in step,
 * so the cost is the shorter of them (an actor watching 10^5 others, or
 * watched by 10^5, finds a watch between the two of them at once); a
 * watch whose target is gone is on `gone` (notices not yet taken). */
static tend_watch *find(tend_host *h, tend_actor *w, uint32_t id,
                        uint32_t gen) {
  if (w->ext == NULL) return NULL;
  for (tend_watch *r = w->ext->gone; r; r = r->w_next)
    if (r->target_id == id && r->target_gen == gen) return r;
  tend_actor *t = tend_slots_get(&h->ids, id, gen);
  if (t == NULL || t->kind != TEND_ENTITY_ACTOR || t->ext == NULL) return NULL;
  tend_watch *a = w->ext->watching, *b = t->ext->watchers;
  while (a && b) {
    if (a->target == t) return a;
    if (b->watcher == w) return b;
    a = a->w_next;
    b = b->t_next;
  }
  return NULL;
}

/* Queues r's notification among its watcher's notices (it reaches the
 * user queue at the watcher's next step outside a wait: a message sent
 * before then comes first, so an unwatch sent while the watcher was busy
 * still drops it, as Akka). Stack: the terminated table at `table`. */
static void notify(lua_State *L, tend_host *h, tend_watch *r, int table) {
  tend_actor *w = r->watcher;
  tend_msg *m = tend_msg_alloc(&h->msgs);
  if (m == NULL) return;
  m->kind = TEND_MSG_TERMINATED;
  m->sender_id = r->target_id;
  m->sender_gen = r->target_gen;
  if (r->custom) {
    tend_value_push(L, h, &r->msg);
    tend_value_store(L, h, -1, &m->value);
    lua_pop(L, 1);
  } else {
    tend_value_store(L, h, table, &m->value);
  }
  r->fired = 1;
  tend_queue_push(&w->ext->notices, m);
  w->flags |= TEND_AF_NOTICES;
  if (w->wait == TEND_WAIT_RECEIVE) { /* a task taking its mail now */
    tend_watch_deliver(w);
    tend_promise_mail(L, h, w);
  } else if (w->wait == TEND_WAIT_NONE && h->current != w) {
    tend_runq_push(h, w);
  }
}

void tend_watch_deliver(tend_actor *w) {
  tend_msg *m;
  w->flags &= ~TEND_AF_NOTICES;
  while ((m = tend_queue_pop(&w->ext->notices)) != NULL) {
    tend_queue_push(&w->mbox.user, m);
    w->mbox.n_user++;
  }
}

/* Pushes {tend="terminated", ref=..., reason=..., existence_confirmed=...}. */
static void push_terminated(lua_State *L, int ref, int reason, int confirmed) {
  lua_createtable(L, 0, 4);
  lua_pushliteral(L, "terminated");
  lua_setfield(L, -2, "tend");
  lua_pushvalue(L, ref);
  lua_setfield(L, -2, "ref");
  lua_pushvalue(L, reason);
  lua_setfield(L, -2, "reason");
  lua_pushboolean(L, confirmed);
  lua_setfield(L, -2, "existence_confirmed");
}

void tend_watch_add(lua_State *L, tend_host *h, tend_actor *w, uint32_t id,
                    uint32_t gen, int ref_idx, int msg_idx) {
  if (msg_idx) msg_idx = lua_absindex(L, msg_idx);
  if (ref_idx) ref_idx = lua_absindex(L, ref_idx);
  tend_actor_ext *wx = tend_actor_ext_get(w);
  if (wx == NULL) luaL_error(L, "watch: out of memory");
  tend_watch *r = find(h, w, id, gen);
  if (r && r->fired) return; /* its notice is on its way: no second one */
  if (r) {                   /* watching already: the new message replaces */
    tend_value_drop(L, h, &r->msg);
    r->custom = msg_idx != 0;
    if (msg_idx) tend_value_store(L, h, msg_idx, &r->msg);
    return;
  }
  tend_actor *t = tend_slots_get(&h->ids, id, gen);
  if (t && (t->kind != TEND_ENTITY_ACTOR || t->state == TEND_ACTOR_DEAD))
    t = NULL;
  /* a proxy whose node is not connected: noconnection at once (Erlang) */
  int unreachable = t && (t->flags & TEND_AF_DISCONNECTED);
  if (unreachable) t = NULL;
  tend_actor_ext *tx = t ? tend_actor_ext_get(t) : NULL;
  if (t && tx == NULL) luaL_error(L, "watch: out of memory");
  r = calloc(1, sizeof *r);
  if (r == NULL) luaL_error(L, "watch: out of memory");
  r->watcher = w;
  r->target_id = id;
  r->target_gen = gen;
  r->custom = msg_idx != 0;
  if (msg_idx) tend_value_store(L, h, msg_idx, &r->msg);
  r->target = t;
  link_watcher(r);
  if (t) {
    r->t_next = tx->watchers;
    if (tx->watchers) tx->watchers->t_prev = r;
    tx->watchers = r;
    return;
  }
  /* already dead: notify at once, with the very ref the caller gave (it
   * keeps the path; the notice's ref is the one the watcher holds) */
  if (ref_idx)
    lua_pushvalue(L, ref_idx);
  else
    tend_ref_push(L, h, id, gen);
  if (unreachable)
    lua_pushliteral(L, "noconnection");
  else
    lua_pushliteral(L, "unknown");
  push_terminated(L, lua_gettop(L) - 1, lua_gettop(L), 0);
  notify(L, h, r, lua_gettop(L));
  lua_pop(L, 3);
}

void tend_watch_remove(lua_State *L, tend_host *h, tend_actor *w, uint32_t id,
                       uint32_t gen) {
  tend_watch *r = find(h, w, id, gen);
  if (r) free_record(L, h, r);
}

void tend_watch_target_died(lua_State *L, tend_host *h, tend_actor *t, int ref,
                            int reason) {
  if (t->ext == NULL || t->ext->watchers == NULL) return;
  ref = lua_absindex(L, ref);
  reason = lua_absindex(L, reason);
  push_terminated(L, ref, reason, 1);
  int table = lua_gettop(L);
  /* notify in the order the watches were made (the list is newest first) */
  tend_watch *r = t->ext->watchers;
  while (r->t_next) r = r->t_next;
  while (r) {
    tend_watch *prev = r->t_prev;
    unlink_target(r);
    if (r->watcher->state != TEND_ACTOR_DEAD) notify(L, h, r, table);
    r = prev;
  }
  t->ext->watchers = NULL;
  lua_pop(L, 1);
}

void tend_watch_also_restarts(tend_host *h, tend_actor *w, uint32_t id,
                              uint32_t gen) {
  tend_watch *r = find(h, w, id, gen);
  if (r && r->custom && r->target && !r->restarts) {
    r->restarts = 1;
    r->target->ext->restart_watches++;
  }
}

void tend_watch_target_restarted(lua_State *L, tend_host *h, tend_actor *t) {
  if (t->ext == NULL || t->ext->restart_watches == 0) return;
  tend_watch *r = t->ext->watchers;
  while (r && t->ext->restart_watches > 0) { /* (unlinking counts down) */
    tend_watch *next = r->t_next;
    if (r->restarts && r->custom) { /* (a watch made again without one
                                        keeps only its death notice) */
      unlink_target(r);
      if (r->watcher->state != TEND_ACTOR_DEAD) notify(L, h, r, 0);
    }
    r = next;
  }
}

void tend_watch_watcher_died(lua_State *L, tend_host *h, tend_actor *w) {
  if (w->ext == NULL) return;
  tend_msg *m;
  while ((m = tend_queue_pop(&w->ext->notices)) != NULL) {
    tend_value_drop(L, h, &m->value);
    tend_msg_release(&h->msgs, m);
  }
  w->flags &= ~TEND_AF_NOTICES;
  while (w->ext->watching) free_record(L, h, w->ext->watching);
  while (w->ext->gone) free_record(L, h, w->ext->gone);
  while (w->ext->watchers) unlink_target(w->ext->watchers);
}

int tend_watch_take(lua_State *L, tend_host *h, tend_actor *w, uint32_t id,
                    uint32_t gen) {
  tend_watch *r = find(h, w, id, gen);
  if (r == NULL || !r->fired) return 0;
  int custom = r->custom;
  free_record(L, h, r);
  return custom ? 2 : 1;
}
