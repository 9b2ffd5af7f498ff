/* face: the small calls of runtime/tend.h that read or set a field of a
 * private struct for the layers above. Each is one line; with -flto they
 * inline where they are called. This file also includes every private
 * header the face repeats a declaration of, so the compiler checks that
 * the face and the private headers agree. */
#include "runtime/tend.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/core/actor.h"
#include "runtime/core/copy.h"
#include "runtime/core/error.h"
#include "runtime/core/event.h"
#include "runtime/core/fiber.h"
#include "runtime/core/host.h"
#include "runtime/core/inbox.h"
#include "runtime/core/lifecycle.h"
#include "runtime/core/preempt.h"
#include "runtime/core/promise.h"
#include "runtime/core/ref.h"
#include "runtime/core/runq.h"
#include "runtime/core/sched.h"
#include "runtime/core/send.h"
#include "runtime/core/timers.h"
#include "runtime/core/value.h"
#include "runtime/core/watch.h"
#include "runtime/io/http/http.h"
#include "runtime/io/http/server.h"
#include "runtime/io/process/process.h"
#include "runtime/io/tcp/tcp.h"
#include "runtime/nodes/codec.h"
#include "runtime/nodes/nats.h"
#include "runtime/nodes/remote.h"
#include "runtime/nodes/schedulers.h"
#include "runtime/nodes/simnodes.h"
#include "runtime/supervision/backoff_sup.h"
#include "runtime/supervision/names.h"
#include "runtime/supervision/rtimeout.h"
#include "runtime/supervision/stash.h"
#include "runtime/supervision/supervise.h"
#include "runtime/supervision/typed.h"

/* ---- host */
lua_State *tend_host_state(const tend_host *h) {
  return h->L;
}
uv_loop_t *tend_host_loop(tend_host *h) {
  return &h->loop;
}
uint64_t tend_host_seed(const tend_host *h) {
  return h->seed;
}
tend_front *tend_host_front(tend_host *h) {
  return &h->front;
}
int tend_host_stopping(const tend_host *h) {
  return h->shutdown != TEND_SHUTDOWN_NONE;
}
tend_actor *tend_host_user(const tend_host *h) {
  return h->user;
}
tend_actor *tend_host_main(const tend_host *h) {
  return h->main;
}
tend_actor *tend_host_current(const tend_host *h) {
  return h->current;
}
void tend_host_set_interrupt(tend_host *h, tend_actor *a) {
  h->interrupt = a;
}

/* ---- actors */
uint32_t tend_actor_id(const tend_actor *a) {
  return a->id;
}
uint32_t tend_actor_gen(const tend_actor *a) {
  return a->gen;
}

/* ---- waits */
void tend_sched_take_reply(lua_State *L, tend_host *h) {
  tend_actor *a = h->current;
  tend_value v = tend_actor_wake_value(a);
  tend_value_take(L, h, &v);
  tend_actor_set_wake_value(a, v);
}

/* ---- fibers */
int tend_sched_fiber_resume(lua_State *L, tend_host *h, int nargs) {
  return tend_fiber_resume(L, h, nargs);
}
int tend_sched_nested_begin(lua_State *L, tend_host *h) {
  return tend_fiber_nested_begin(L, h);
}
int tend_sched_nested_end(tend_host *h, int yieldable) {
  return tend_fiber_nested_end(h, yieldable);
}
int tend_sched_nested_wait(lua_State *L, tend_host *h, lua_KContext ctx,
                           lua_KFunction k) {
  return tend_fiber_nested_wait(L, h, ctx, k);
}
int tend_sched_in_fiber(const tend_host *h, const lua_State *L) {
  return h->fiber != NULL && h->fiber == L;
}
const void *tend_fiber_key(int ready) {
  return ready ? &tend_fiber_ready_key : &tend_fiber_wait_key;
}
int tend_actor_fiber_ready(const tend_actor *a) {
  return tend_promise_fiber_ready(a);
}
uint32_t tend_actor_fiber_take(lua_State *L, tend_host *h, tend_actor *a) {
  return tend_promise_fiber_take(L, h, a);
}
void tend_actor_fiber_drop(lua_State *L, tend_host *h, tend_actor *a,
                           uint32_t tag) {
  tend_promise_fiber_drop(L, h, a, tag);
}

/* ---- promises */
tend_promise *tend_promise_live(tend_host *h, uint32_t id, uint32_t gen) {
  tend_promise *p = tend_slots_get(&h->ids, id, gen);
  return p && p->kind == TEND_ENTITY_PROMISE ? p : NULL;
}
uint32_t tend_promise_id(const tend_promise *p) {
  return p->id;
}
uint32_t tend_promise_gen(const tend_promise *p) {
  return p->gen;
}

/* ---- trace */
void tend_trace_set_internal(tend_host *h, int on) {
  h->trace_internal = on;
}

void tend_host_set_main(tend_host *h, tend_actor *a) {
  h->main = a;
}
void tend_host_hold(tend_host *h, int on) {
  h->clock_held = on != 0;
  h->clock_steps = 0;
}
int tend_host_held(const tend_host *h) {
  return h->clock_held;
}
void tend_host_step(tend_host *h) {
  if (h->clock_held) h->clock_steps++;
}
int tend_host_virtual(const tend_host *h) {
  return h->clock.is_virtual;
}
int64_t tend_host_now(tend_host *h) {
  return tend_clock_now(&h->clock);
}

void tend_host_set_metatable(tend_host *h, tend_metatable mt, int ref) {
  int *slot[] = {&h->ctx_mt_ref, &h->ref_mt_ref, &h->error_mt_ref};
  *slot[mt] = ref;
}

/* ---- what an actor is */
int tend_actor_is_task(const tend_actor *a) {
  return a->role == TEND_ROLE_TASK;
}
int tend_actor_is_guardian(const tend_actor *a) {
  return a->role == TEND_ROLE_GUARDIAN;
}
int tend_actor_is_backoff(const tend_actor *a) {
  return a->role == TEND_ROLE_BACKOFF;
}
int tend_actor_is_remote(const tend_actor *a) {
  return a->role == TEND_ROLE_REMOTE;
}
int tend_actor_is_internal(const tend_actor *a) {
  return (a->flags & TEND_AF_INTERNAL) != 0;
}
int tend_actor_is_disconnected(const tend_actor *a) {
  return (a->flags & TEND_AF_DISCONNECTED) != 0;
}

tend_actor_state tend_actor_state_of(const tend_actor *a) {
  return (tend_actor_state)a->state;
}

/* ---- supervision */
tend_backoff_sup *tend_backoff_of(const tend_actor *a) {
  return a->role == TEND_ROLE_BACKOFF && a->ext ? a->ext->backoff : NULL;
}
tend_actor *tend_backoff_current_child(tend_host *h,
                                       const tend_backoff_sup *b) {
  tend_actor *c = tend_actor_live(h, b->child_id, b->child_gen);
  return c && c->state < TEND_ACTOR_STOPPING ? c : NULL;
}
uint32_t tend_backoff_restarts(const tend_backoff_sup *b) {
  return b->restarts;
}

tend_actor *tend_host_entity(tend_host *h, uint32_t id, uint32_t gen,
                             int *found) {
  void *e = tend_slots_get(&h->ids, id, gen);
  *found = e != NULL;
  return e && ((tend_actor *)e)->kind == TEND_ENTITY_ACTOR ? e : NULL;
}
int tend_actor_has_promise(const tend_actor *a) {
  return a->promise != NULL;
}

int tend_host_copies(const tend_host *h) {
  return h->copy_messages;
}
void tend_sched_next_wait(tend_actor *a) {
  a->wait_seq++;
}

tend_actor *tend_host_system(const tend_host *h) {
  return h->system;
}

/* ---- nodes */
int tend_node_set_identity(tend_host *h, const char *name, size_t n,
                           uint64_t inc) {
  char *copy = malloc(n + 1);
  if (copy == NULL) return -1;
  memcpy(copy, name, n);
  copy[n] = '\0';
  free(h->node_name);
  h->node_name = copy;
  h->node_inc = inc;
  return 0;
}
void tend_node_set_hooks(lua_State *L, tend_host *h, int send, int decode,
                         tend_remote_send_fn fn) {
  luaL_unref(L, LUA_REGISTRYINDEX, h->remote_send_ref);
  luaL_unref(L, LUA_REGISTRYINDEX, h->remote_decode_ref);
  lua_pushvalue(L, send);
  h->remote_send_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pushvalue(L, decode);
  h->remote_decode_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  h->remote_send = fn;
}
void tend_node_push_router(lua_State *L, const tend_host *h) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->remote_send_ref);
}

tend_actor *tend_actor_parent(const tend_actor *a) {
  return a->parent;
}
tend_actor *tend_actor_first_child(const tend_actor *a) {
  return a->first_child;
}
tend_actor *tend_actor_next_sibling(const tend_actor *a) {
  return a->next_sibling;
}
uint32_t tend_actor_restarts(const tend_actor *a) {
  return a->restarts;
}
uint32_t tend_actor_mailbox_size(const tend_actor *a) {
  return a->mbox.n_user;
}
tend_restart_type tend_actor_restart_type(const tend_actor *a) {
  return (tend_restart_type)a->restart_type;
}
int tend_actor_has_strategy(const tend_actor *a) {
  return a->ext && a->ext->has_strategy;
}
const tend_strategy *tend_actor_strategy(const tend_actor *a) {
  return tend_actor_has_strategy(a) ? &a->ext->strategy : NULL;
}

void tend_host_push_sentinel(lua_State *L, const tend_host *h,
                             tend_sentinel s) {
  tend_push_sentinel(L, h, s);
}
tend_rng *tend_host_rng(tend_host *h) {
  return &h->rng;
}
void tend_host_reseed(tend_host *h, uint64_t seed) {
  h->seed = seed;
  tend_rng_seed(&h->rng, seed);
}
tend_log_level tend_host_log_level(const tend_host *h) {
  return h->log_level;
}
lua_State *tend_host_resumed(const tend_host *h) {
  return h->resumed;
}
tend_host *tend_host_world(const tend_host *h) {
  return h->world;
}
void tend_host_counts(const tend_host *h, tend_counts *c) {
  uint32_t actors = 0;
  for (uint32_t i = 1; i < h->ids.n; i++) {
    tend_actor *a = h->ids.v[i].ptr;
    if (a && a->kind == TEND_ENTITY_ACTOR && a->role != TEND_ROLE_GUARDIAN)
      actors++;
  }
  c->spawned = h->stats.spawned;
  c->messages = h->stats.messages;
  c->dead_letters = h->stats.dead_letters;
  c->failures = h->stats.failures;
  c->restarts = h->stats.restarts;
  c->unhandled = h->stats.unhandled;
  c->actors = actors;
  c->timers = h->timers.n;
  c->runnable = h->runq_len;
  c->lua_bytes = h->lua_bytes;
  c->c_bytes = (uint64_t)h->ids.cap * sizeof(tend_slot) +
               h->timers.records.carved * sizeof(tend_timer) +
               (uint64_t)h->timers.cap * sizeof(tend_timer *) +
               h->msgs.carved * sizeof(tend_msg) +
               (uint64_t)h->cap_free_values * sizeof(uint32_t);
}

void tend_trace_listen(lua_State *L, tend_host *h, int idx) {
  idx = lua_absindex(L, idx);
  if (h->trace_fn_ref <= 0) {
    lua_newtable(L);
    h->trace_fn_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  }
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->trace_fn_ref);
  lua_pushvalue(L, idx);
  lua_rawseti(L, -2, luaL_len(L, -2) + 1);
  lua_pop(L, 1);
}
void tend_trace_set_stderr(lua_State *L, tend_host *h, int on) {
  h->trace_stderr = on;
  if (!on) {
    luaL_unref(L, LUA_REGISTRYINDEX, h->trace_fn_ref);
    h->trace_fn_ref = LUA_NOREF;
  }
}

tend_actor *tend_actor_test(lua_State *L, int idx) {
  tend_actor *a = lua_touserdata(L, idx);
  if (a == NULL || lua_islightuserdata(L, idx) ||
      lua_rawlen(L, idx) != sizeof *a || a->magic != TEND_ACTOR_MAGIC)
    return NULL;
  return a;
}
int tend_actor_push_cached_ref(lua_State *L, int ctx) {
  if (lua_getiuservalue(L, ctx, TEND_UV_REF) != LUA_TNIL) return 1;
  lua_pop(L, 1);
  return 0;
}
uint32_t tend_actor_sender_id(const tend_actor *a) {
  return a->sender_id;
}
uint32_t tend_actor_sender_gen(const tend_actor *a) {
  return a->sender_gen;
}
const char **tend_host_ctx_keys(tend_host *h) {
  return h->ctx_keys;
}
void tend_host_push_anchors(lua_State *L, const tend_host *h) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->anchors_ref);
}

int tend_event_wanted(const tend_host *h) {
  return tend_event_on(h);
}

lua_CFunction tend_host_opener(const tend_host *h) {
  return h->open;
}
void tend_host_jump(tend_host *h, int64_t t) {
  tend_clock_jump(&h->clock, t);
}

/* ---- tend.chaos */
void tend_host_set_filters(tend_host *h, tend_receive_filter receive,
                           tend_send_filter send) {
  h->receive_filter = receive;
  h->send_filter = send;
}
void tend_host_set_pass_hook(tend_host *h, tend_pass_hook hook) {
  h->pass_hook = hook;
  h->pass_at = tend_clock_now(&h->clock);
}
tend_actor *tend_host_endpoint(tend_host *h, uint32_t id, uint32_t gen) {
  void *e = id ? tend_slots_get(&h->ids, id, gen) : NULL;
  if (e && ((tend_actor *)e)->kind == TEND_ENTITY_PROMISE)
    return ((tend_promise *)e)->asker;
  return e;
}
void tend_actor_freeze(tend_actor *a) {
  if ((a->flags & TEND_AF_FROZEN) || a->role == TEND_ROLE_GUARDIAN) return;
  a->flags |= TEND_AF_FROZEN;
  a->suspends++;
}
void tend_actor_thaw(tend_host *h, tend_actor *a) {
  if (!(a->flags & TEND_AF_FROZEN)) return;
  a->flags &= ~TEND_AF_FROZEN;
  if (a->suspends) a->suspends--;
  if (tend_actor_has_work(a)) tend_runq_push(h, a);
}
void tend_actor_dead_letter_from(lua_State *L, tend_host *h, tend_actor *to,
                                 uint32_t sid, uint32_t sgen, tend_value *v,
                                 const char *why) {
  tend_letter l = {.to = to, .from_id = sid, .from_gen = sgen, .why = why};
  tend_actor_dead_letter_at(L, h, &l, v);
}

/* ---- inside an actor (tend.inspect, tend.reload) */
const char *tend_actor_op_name(const tend_actor *a) {
  switch ((tend_actor_op)a->op) {
    case TEND_OP_NONE: return "idle";
    case TEND_OP_FACTORY:
    case TEND_OP_RESTART_FACTORY: return "factory";
    case TEND_OP_PRE_START:
    case TEND_OP_RESTART_PRE_START: return "pre_start";
    case TEND_OP_RECEIVE: return "receive";
    case TEND_OP_POST_STOP: return "post_stop";
    case TEND_OP_TASK: return "task";
    case TEND_OP_DECIDE: return "decide";
    case TEND_OP_PRE_RESTART: return "pre_restart";
    case TEND_OP_RESTART_STOP: return "restart_stop";
    case TEND_OP_POST_RESTART: return "post_restart";
    case TEND_OP_KINDS: break;
  }
  return "?";
}
int tend_actor_in_receive(const tend_actor *a) {
  return a->op == TEND_OP_RECEIVE;
}
int tend_actor_has_hooks(const tend_actor *a) {
  return (a->flags & TEND_AF_HOOKS) != 0;
}
uint32_t tend_actor_timer_count(const tend_actor *a) {
  uint32_t n = 0;
  for (const tend_timer *t = a->timers; t; t = t->next) n++;
  return n;
}
static void push_uv(lua_State *L, const tend_host *h, tend_actor *a, int uv) {
  tend_actor_push_ctx(L, h, a);
  lua_getiuservalue(L, -1, uv);
  lua_remove(L, -2);
}
void tend_actor_push_behavior(lua_State *L, const tend_host *h, tend_actor *a) {
  push_uv(L, h, a, TEND_UV_BEHAVIOR);
}
void tend_actor_push_factory(lua_State *L, const tend_host *h, tend_actor *a) {
  push_uv(L, h, a, TEND_UV_FACTORY);
}
void tend_actor_push_args(lua_State *L, const tend_actor *a) {
  tend_actor_push_ext(L, a, TEND_EXT(args_ref));
}
void tend_actor_push_parked(lua_State *L, const tend_host *h, tend_actor *a) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->parked_ref);
  lua_rawgeti(L, -1, a->id);
  lua_remove(L, -2);
}
void tend_actor_push_watches(lua_State *L, tend_host *h, const tend_actor *a,
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
void tend_actor_install(lua_State *L, tend_host *h, tend_actor *a, int factory,
                        int mover) {
  factory = lua_absindex(L, factory);
  mover = lua_absindex(L, mover);
  tend_actor_push_ctx(L, h, a);
  lua_pushvalue(L, factory);
  lua_setiuservalue(L, -2, TEND_UV_FACTORY);
  lua_pushvalue(L, mover);
  lua_setiuservalue(L, -2, TEND_UV_BEHAVIOR);
  lua_pop(L, 1);
  a->flags &= ~TEND_AF_HOOKS; /* the mover is a function */
}
int tend_actor_requeue(lua_State *L, tend_host *h, tend_actor *a, int idx) {
  tend_msg *m = tend_msg_alloc(&h->msgs);
  if (m == NULL) return -1;
  if (tend_value_store(L, h, idx, &m->value) != 0) {
    tend_msg_release(&h->msgs, m);
    return -1;
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

double tend_actor_busy_seconds(const tend_actor *a) {
  if (a->ext == NULL || a->ext->busy_since == 0 || a->op == TEND_OP_NONE ||
      (a->wait != TEND_WAIT_NONE && a->wait != TEND_WAIT_WOKEN))
    return -1;
  uint64_t now = uv_hrtime();
  return now > a->ext->busy_since ? (double)(now - a->ext->busy_since) / 1e9
                                  : 0;
}
const char *tend_actor_state_name(const tend_actor *a) {
  if (a->failure == TEND_FAILURE_PENDING) return "failed";
  if (a->suspends) return "suspended";
  switch ((tend_actor_state)a->state) {
    case TEND_ACTOR_STARTING: /* a task runs its function as it starts */
      if (a->op != TEND_OP_TASK) return "starting";
      /* fall through */
    case TEND_ACTOR_RUNNING:
      if (tend_actor_busy_seconds(a) >= 0) return "busy";
      return a->wait != TEND_WAIT_NONE ? "waiting" : "running";
    case TEND_ACTOR_RESTARTING: return "restarting";
    case TEND_ACTOR_STOPPING: return "stopping";
    case TEND_ACTOR_DEAD: return "dead";
  }
  return "?";
}
int tend_trace_shows_internal(const tend_host *h) {
  return tend_event_internal_shown(h);
}
