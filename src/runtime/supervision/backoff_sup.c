/* backoff_sup: backoff supervisors (see backoff_sup.h). */
#include "runtime/supervision/backoff_sup.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/core/event.h"
#include "runtime/core/lifecycle.h"
#include "runtime/core/ref.h"
#include "runtime/core/send.h"
#include "runtime/core/timers.h"
#include "runtime/core/value.h"

static tend_backoff_sup *B(const tend_actor *a) {
  return a->ext ? a->ext->backoff : NULL;
}

void tend_backoff_give_up(lua_State *L, tend_host *h, tend_actor *a,
                          int64_t count, const char *detail,
                          tend_stop_reason why) {
  tend_event e = TEND_EVENT_INIT(TEND_EV_GIVE_UP, a);
  e.count = count;
  e.detail = detail;
  tend_event_emit(L, h, &e);
  tend_actor_stop(L, h, a, why);
}

int64_t tend_backoff_next_delay(lua_State *L, tend_host *h, tend_actor *a,
                                const tend_delay_cfg *c, tend_delay_state *s,
                                int64_t n) {
  double draw;
  int64_t delay = tend_delay_next(c, s, &h->rng, &draw);
  tend_event e = TEND_EVENT_INIT(TEND_EV_BACKOFF, a);
  e.count = n;
  e.delay_ns = delay;
  e.draw = draw;
  e.algorithm = c->algorithm == TEND_ALG_SLOTTED ? "slotted" : "exponential";
  tend_event_emit(L, h, &e);
  return delay;
}

/* The delays start over: from the first, restarts 0, and the count of
 * its strategy's limit with them (Akka's restartCount is one count). */
static void reset(tend_actor *a) {
  tend_backoff_sup *b = B(a);
  tend_delay_reset(&b->cfg.delays, &b->delays);
  b->restarts = 0;
}

/* ------------------------------------------------------------ spawning */

/* A registry ref to the value at stack index idx (0: LUA_NOREF). */
static int ref_of(lua_State *L, int idx) {
  if (idx == 0) return LUA_NOREF;
  lua_pushvalue(L, idx);
  return luaL_ref(L, LUA_REGISTRYINDEX);
}

tend_actor *tend_backoff_spawn(lua_State *L, tend_host *h, tend_actor *parent,
                               const tend_backoff_cfg *cfg,
                               const tend_backoff_child *child,
                               const tend_spawn_opts *o, const char *fn) {
  tend_actor_check_spawn(L, h, parent, o->name, fn);
  tend_backoff_sup *b = calloc(1, sizeof *b);
  if (b == NULL) luaL_error(L, "%s: out of memory", fn);
  tend_actor *a = tend_actor_spawn(L, h, parent, child->factory, o);
  tend_actor_ext *x = tend_actor_ext_get(a);
  if (x == NULL) { /* cannot supervise: undo */
    free(b);
    tend_actor_stop(L, h, a, TEND_STOP_BY_PARENT);
    luaL_error(L, "%s: out of memory", fn);
  }
  a->role = TEND_ROLE_BACKOFF;
  x->backoff = b;
  b->cfg = *cfg;
  tend_delay_reset(&cfg->delays, &b->delays);
  b->factory_ref = ref_of(L, child->factory);
  b->args_ref = ref_of(L, child->args);
  if (child->name) {
    b->name_ref = ref_of(L, child->name);
  } else {
    lua_pushliteral(L, "child");
    b->name_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  }
  b->reply_ref = ref_of(L, child->reply);
  b->final_stop_ref = ref_of(L, child->final_stop);
  if (child->handler) { /* handler_while_stopped: checked to be a ref */
    const tend_ref *r = tend_ref_test(L, child->handler);
    b->handler_id = r->id;
    b->handler_gen = r->gen;
  }
  if (child->strategy) {
    tend_actor_set_strategy(L, a, child->strategy, child->decider);
  } else if (cfg->default_stopping) {
    tend_strategy stopping = tend_strategy_stopping();
    tend_actor_set_strategy(L, a, &stopping, 0);
  }
  return a;
}

/* Starts the next child of a (protected: called through lua_pcall). */
static int start_child_p(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_actor *a = lua_touserdata(L, 1);
  tend_backoff_sup *b = B(a);
  tend_spawn_opts o;
  tend_spawn_opts_init(&o);
  lua_rawgeti(L, LUA_REGISTRYINDEX, b->factory_ref);
  int f = lua_gettop(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, b->name_ref);
  o.name = lua_gettop(L);
  if (b->args_ref != LUA_NOREF) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, b->args_ref);
    o.args = lua_gettop(L);
  }
  tend_actor *c = tend_actor_spawn(L, h, a, f, &o);
  b->child_id = c->id;
  b->child_gen = c->gen;
  if (b->incarnation > 0) { /* a restart of the child: counted as one */
    c->restarts = b->incarnation - 1;
    tend_lifecycle_count_restart(L, h, c);
  }
  b->incarnation++;
  b->restart_pending = 0;
  b->final_stop_received = 0;
  tend_msg *m;
  while ((m = tend_queue_pop(&b->stash)) != NULL) { /* stashed, in order */
    b->n_stash--;
    tend_actor_send_value(L, h, c->id, c->gen, m->value, m->sender_id,
                          m->sender_gen);
    tend_msg_release(&h->msgs, m);
  }
  if (!b->cfg.manual_reset) { /* (the last child's went when it died) */
    tend_timer *t = tend_timer_arm(L, h, TEND_TIMER_BACKOFF_RESET, a,
                                   b->cfg.reset_after_ns, 0, 0);
    if (t) t->tag = b->incarnation;
    b->reset_timer = t;
  }
  return 0;
}

static void start_child(lua_State *L, tend_host *h, tend_actor *a) {
  int top = lua_gettop(L);
  lua_pushcfunction(L, start_child_p);
  lua_pushlightuserdata(L, a);
  if (lua_pcall(L, 1, 0, 0) != LUA_OK) { /* e.g. out of memory: give up */
    tend_actor_push_path(L, h, a);
    tend_host_log(h, TEND_LOG_ERROR, lua_tostring(L, -1),
                  "cannot start the child: %s", lua_tostring(L, -2));
    tend_actor_stop(L, h, a, TEND_STOP_BY_PARENT);
  }
  lua_settop(L, top);
}

int tend_backoff_allow(lua_State *L, tend_host *h, tend_actor *a,
                       const tend_limit *lim, int64_t *used) {
  tend_backoff_sup *b = B(a);
  if (b->restarts == 0 && lim->within != INT64_MAX) { /* Akka's */
    tend_timer *t = /* ResetRestartCount(1), `within` from now */
        tend_timer_arm(L, h, TEND_TIMER_BACKOFF_WINDOW, a, lim->within, 0, 0);
    if (t) t->tag = 1;
  }
  int ok = lim->max < 0 || b->restarts < (uint64_t)lim->max;
  *used = (int64_t)b->restarts + ok;
  return ok;
}

int tend_backoff_exhausted(const tend_actor *a) {
  const tend_backoff_sup *b = B(a);
  return b && b->cfg.max_retries >= 0 &&
         b->restarts >= (uint64_t)b->cfg.max_retries;
}

int tend_backoff_on_failure(const tend_actor *a) {
  const tend_backoff_sup *b = B(a);
  return b && b->cfg.mode == TEND_BACKOFF_ON_FAILURE;
}

uint32_t tend_backoff_incarnation(const tend_actor *a) {
  const tend_backoff_sup *b = B(a);
  return b ? b->incarnation : 0;
}

void tend_backoff_start(lua_State *L, tend_host *h, tend_actor *a) {
  if (a->state != TEND_ACTOR_STARTING) return; /* stopped before it started */
  a->state = TEND_ACTOR_RUNNING;
  start_child(L, h, a);
}

/* ------------------------------------------------------------ messages */

/* Calls the final-stop predicate on the value at msg. */
static int is_final_stop(lua_State *L, tend_host *h, tend_actor *a, int msg) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, B(a)->final_stop_ref);
  lua_pushvalue(L, msg);
  if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
    tend_actor_push_path(L, h, a);
    tend_host_log(h, TEND_LOG_WARN, lua_tostring(L, -1),
                  "final_stop_message predicate failed: %s",
                  lua_tostring(L, -2));
    lua_pop(L, 2);
    return 0;
  }
  int yes = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return yes;
}

/* Keeps the message at msg in a's stash (the oldest goes when full). */
static void stash(lua_State *L, tend_host *h, tend_actor *a, int msg,
                  uint32_t sid, uint32_t sgen) {
  tend_backoff_sup *b = B(a);
  tend_msg *m = tend_msg_alloc(&h->msgs);
  if (m == NULL || tend_value_store(L, h, msg, &m->value) != 0) {
    if (m) tend_msg_release(&h->msgs, m);
    tend_actor_dead_letter_msg(L, h, a, msg, sid, sgen, "out of memory");
    return;
  }
  m->kind = TEND_MSG_USER;
  m->sender_id = sid;
  m->sender_gen = sgen;
  tend_queue_push(&b->stash, m);
  if (++b->n_stash > b->cfg.stash) { /* full: the oldest goes */
    tend_msg *old = tend_queue_pop(&b->stash);
    b->n_stash--;
    tend_actor_dead_letter(L, h, a, &old->value);
    tend_msg_release(&h->msgs, old);
    tend_event e = TEND_EVENT_INIT(TEND_EV_STASH_DROP, a);
    tend_event_emit(L, h, &e);
  }
}

void tend_backoff_receive(lua_State *L, tend_host *h, tend_actor *a, int msg,
                          uint32_t sid, uint32_t sgen) {
  tend_backoff_sup *b = B(a);
  tend_actor *c = tend_actor_live(h, b->child_id, b->child_gen);
  if (c && sid == c->id && sgen == c->gen) { /* from the child: to our parent */
    if (a->parent)
      tend_actor_send(L, h, a->parent->id, a->parent->gen, msg, a->id, a->gen);
    return;
  }
  if (b->cfg.final_stop && is_final_stop(L, h, a, msg)) {
    if (c == NULL) {
      tend_actor_dead_letter_msg(L, h, a, msg, sid, sgen,
                                 "its child is stopped");
      tend_actor_stop(L, h, a, TEND_STOP_NORMAL);
      return;
    }
    b->final_stop_received = 1;
  }
  if (c) {
    tend_actor_send(L, h, c->id, c->gen, msg, sid, sgen);
  } else if (b->cfg.reply_while_stopped) {
    if (sid == 0) {
      tend_actor_dead_letter_msg(L, h, a, msg, sid, sgen,
                                 "its child is stopped");
      return;
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, b->reply_ref);
    tend_actor_send(L, h, sid, sgen, -1, a->id, a->gen);
    lua_pop(L, 1);
  } else if (b->cfg.handler_while_stopped) { /* forwarded, sender kept */
    tend_actor_send(L, h, b->handler_id, b->handler_gen, msg, sid, sgen);
  } else if (b->cfg.stash) {
    stash(L, h, a, msg, sid, sgen);
  } else {
    tend_actor_dead_letter_msg(L, h, a, msg, sid, sgen, "its child is stopped");
  }
}

/* ------------------------------------------------------------ the child */

int tend_backoff_child_failed(lua_State *L, tend_host *h, tend_actor *p,
                              tend_actor *c) {
  tend_backoff_sup *b = B(p);
  if (b == NULL || b->cfg.mode != TEND_BACKOFF_ON_FAILURE) return 0;
  b->restart_pending = 1;
  c->failure = TEND_FAILURE_NONE;
  tend_actor_stop(L, h, c, TEND_STOP_FAILURE);
  return 1;
}

void tend_backoff_child_died(lua_State *L, tend_host *h, tend_actor *p,
                             tend_actor *c) {
  tend_backoff_sup *b = B(p);
  if (b == NULL || c->id != b->child_id || c->gen != b->child_gen) return;
  b->child_id = b->child_gen = 0;
  if (p->state != TEND_ACTOR_RUNNING) { /* we stop or restart ourselves: */
    b->reset_timer = NULL; /* our timers went (a restart's first step) or */
    return;                /* go with us; the record may be another's now */
  }
  tend_timer_cancel(L, h, b->reset_timer); /* its auto reset goes with it */
  b->reset_timer = NULL;
  int again = b->cfg.mode == TEND_BACKOFF_ON_STOP ? !b->final_stop_received
                                                  : b->restart_pending;
  b->restart_pending = 0;
  if (!again) { /* on_failure: a normal stop; on_stop: the final message */
    tend_actor_stop(L, h, p, TEND_STOP_NORMAL);
    return;
  }
  if (b->cfg.mode == TEND_BACKOFF_ON_FAILURE && !b->cfg.manual_reset &&
      tend_reset_trap_failed(&b->trap)) { /* (on_stop: stops are planned) */
    tend_actor_push_path(L, h, p);
    tend_backoff_warn_trap(h, lua_tostring(L, -1), b->cfg.reset_after_ns,
                           "reset_after (:with_auto_reset(s))");
    lua_pop(L, 1);
  }
  if (b->cfg.max_retries >= 0 && b->restarts >= (uint64_t)b->cfg.max_retries) {
    tend_backoff_give_up(L, h, p, b->restarts, "max_retries reached",
                         TEND_STOP_NORMAL);
    return;
  }
  b->restarts++;
  int64_t delay =
      tend_backoff_next_delay(L, h, p, &b->cfg.delays, &b->delays, b->restarts);
  tend_timer *t =
      tend_timer_arm(L, h, TEND_TIMER_BACKOFF_START, p, delay, 0, 0);
  if (t == NULL) {
    tend_actor_stop(L, h, p, TEND_STOP_BY_PARENT);
    return;
  }
  t->tag = b->incarnation;
}

void tend_backoff_warn_trap(tend_host *h, const char *path,
                            int64_t reset_after_ns, const char *how) {
  tend_host_log(h, TEND_LOG_WARN, path,
                "%d failures in a row, each after more than reset_after "
                "(%.14g s) of running: the backoff was reset each time, so "
                "every restart waits the first delay and the delay never "
                "grows; set %s above the usual run time",
                TEND_RESET_TRAP_FAILURES, (double)reset_after_ns / 1e9, how);
}

int tend_backoff_reset(lua_State *L, tend_host *h, tend_actor *a) {
  tend_actor *p = a->parent;
  tend_backoff_sup *b = p ? B(p) : NULL;
  if (b == NULL || b->child_id != a->id || b->child_gen != a->gen) return 0;
  reset(p);
  tend_event e = TEND_EVENT_INIT(TEND_EV_RESET, p);
  e.detail = "by the child";
  tend_event_emit(L, h, &e);
  return 1;
}

void tend_backoff_reset_sup(lua_State *L, tend_host *h, tend_actor *a) {
  reset(a);
  tend_event e = TEND_EVENT_INIT(TEND_EV_RESET, a);
  e.detail = "by tend.backoff.reset";
  tend_event_emit(L, h, &e);
}

void tend_backoff_restarted(lua_State *L, tend_host *h, tend_actor *a) {
  reset(a);
  start_child(L, h, a);
}

/* ------------------------------------------------------------ timers */

/* The delay is over: the next child starts. */
static void on_start(lua_State *L, tend_host *h, tend_timer *t, tend_actor *a) {
  tend_backoff_sup *b = a ? B(a) : NULL;
  if (b && b->reset_timer == t) b->reset_timer = NULL; /* (freed after) */
  if (b && t->tag == b->incarnation && b->child_id == 0 &&
      a->state == TEND_ACTOR_RUNNING)
    start_child(L, h, a);
}

/* The child of incarnation `tag` ran long enough: the backoff starts over. */
static void on_reset(lua_State *L, tend_host *h, tend_timer *t, tend_actor *a) {
  tend_backoff_sup *b = a ? B(a) : NULL;
  if (b && b->reset_timer == t) b->reset_timer = NULL; /* (freed after) */
  if (b && t->tag == b->incarnation &&
      tend_actor_live(h, b->child_id, b->child_gen)) {
    if (b->restarts > 0) tend_reset_trap_reset(&b->trap); /* a real one */
    reset(a);
    tend_event e = TEND_EVENT_INIT(TEND_EV_RESET, a);
    tend_event_emit(L, h, &e);
  }
}

/* `within` after a first restart: the count starts over if that restart
 * is still the only one since (Akka's ResetRestartCount(n) of the
 * strategy's window; later restarts leave the count to the auto reset). */
static void on_window(lua_State *L, tend_host *h, tend_timer *t,
                      tend_actor *a) {
  tend_backoff_sup *b = a ? B(a) : NULL;
  if (b && b->restarts == t->tag) {
    reset(a);
    tend_event e = TEND_EVENT_INIT(TEND_EV_RESET, a);
    e.detail = "the strategy's window";
    tend_event_emit(L, h, &e);
  }
}

/* ------------------------------------------------------------ free */

void tend_backoff_free(lua_State *L, tend_host *h, tend_actor *a) {
  tend_backoff_sup *b = B(a);
  if (b) {
    tend_msg *m;
    while ((m = tend_queue_pop(&b->stash)) != NULL) {
      tend_actor_dead_letter(L, h, a, &m->value);
      tend_msg_release(&h->msgs, m);
    }
    luaL_unref(L, LUA_REGISTRYINDEX, b->factory_ref);
    luaL_unref(L, LUA_REGISTRYINDEX, b->args_ref);
    luaL_unref(L, LUA_REGISTRYINDEX, b->name_ref);
    luaL_unref(L, LUA_REGISTRYINDEX, b->reply_ref);
    luaL_unref(L, LUA_REGISTRYINDEX, b->final_stop_ref);
    free(b);
    a->ext->backoff = NULL;
  }
}

/* ------------------------------------------------------------ driver */

static void release(lua_State *L, tend_host *h, tend_actor *a) {
  tend_backoff_free(L, h, a);
}

const tend_driver tend_backoff_driver = {
    .name = "backoff",
    .timers =
        (const tend_driver_timer[]){{TEND_TIMER_BACKOFF_START, on_start},
                                    {TEND_TIMER_BACKOFF_RESET, on_reset},
                                    {TEND_TIMER_BACKOFF_WINDOW, on_window},
                                    {0}},
    .death = release,
    .release = release,
    .role = TEND_ROLE_BACKOFF,
    .start = tend_backoff_start,
    .receive = tend_backoff_receive,
    .child_died = tend_backoff_child_died,
    .child_incarnation = tend_backoff_incarnation};
