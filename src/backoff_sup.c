/* backoff_sup: backoff supervisors and typed-style supervision (see
 * backoff_sup.h). */
#include "backoff_sup.h"

#include <lauxlib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "lbind.h"
#include "sched.h"
#include "supervise.h"
#include "value.h"

static tend_backoff_sup *B(const tend_actor *a) {
  return a->ext ? a->ext->backoff : NULL;
}

/* a gives up (a give_up event), then stops for why. count < 0: none. */
static void give_up(lua_State *L, tend_host *h, tend_actor *a, int64_t count,
                    const char *detail, tend_stop_reason why) {
  tend_event e = TEND_EVENT_INIT("give_up", a);
  e.count = count;
  e.detail = detail;
  tend_event_emit(L, h, &e);
  tend_actor_stop(L, h, a, why);
}

/* The next delay of a's backoff, and its backoff event (restart count n). */
static int64_t next_delay(lua_State *L, tend_host *h, tend_actor *a,
                          const tend_delay_cfg *c, tend_delay_state *s,
                          int64_t n) {
  double draw;
  int64_t delay = tend_delay_next(c, s, &h->rng, &draw);
  tend_event e = TEND_EVENT_INIT("backoff", a);
  e.count = n;
  e.delay_ns = delay;
  e.draw = draw;
  e.algorithm = c->algorithm == TEND_ALG_SLOTTED ? "slotted" : "exponential";
  tend_event_emit(L, h, &e);
  return delay;
}

/* A typed actor's backoff starts over: delays from the first, restarts 0. */
static void typed_reset(tend_typed *ty) {
  tend_delay_state zero = {0, 0, 1};
  ty->delays = zero;
  ty->backoff_restarts = 0;
}

/* ------------------------------------------------------------ spawning */

int tend_backoff_spawn(lua_State *L, tend_actor *parent, int off,
                       const char *fn) {
  tend_host *h = tend_host_of(L);
  int spec = 1 + off;
  lua_settop(L, 2 + off);
  tend_backoff_cfg cfg;
  tend_backoff_parse(L, spec, fn, &cfg);
  tend_spawn_opts o;
  tend_spawn_parse(L, 2 + off, fn, &o);
  if (o.supervisor)
    luaL_error(L,
               "%s: option 'supervisor': a backoff supervisor's strategy for "
               "its child is set with with_supervisor_strategy",
               fn);
  if (h->shutting_down) luaL_error(L, "%s: the host is shutting down", fn);
  if (parent->state >= TEND_ACTOR_STOPPING)
    luaL_error(L, "%s: the parent is stopping; it cannot take new children",
               fn);
  if (o.name) tend_actor_check_name(L, h, parent, o.name);
  tend_backoff_sup *b = calloc(1, sizeof *b);
  if (b == NULL) luaL_error(L, "%s: out of memory", fn);
  tend_actor *a = tend_actor_spawn(L, h, parent, spec, &o);
  tend_actor_ext *x = tend_actor_ext_get(a);
  if (x == NULL) { /* cannot supervise: undo */
    free(b);
    tend_actor_stop(L, h, a, TEND_STOP_BY_PARENT);
    luaL_error(L, "%s: out of memory", fn);
  }
  a->flags |= TEND_AF_BACKOFF;
  x->backoff = b;
  b->cfg = cfg;
  tend_delay_reset(&cfg.delays, &b->delays);
  int ref = lua_gettop(L);
  tend_actor_push_extras(L, h, a);
  int ex = lua_gettop(L);
  static const char *const copy[][2] = {{"factory", "child_factory"},
                                        {"args", "child_args"},
                                        {"reply_while_stopped", "reply"},
                                        {"final_stop_message", "final_stop"},
                                        {"supervisor_strategy", "supervisor"}};
  for (size_t i = 0; i < sizeof copy / sizeof copy[0]; i++) {
    lua_getfield(L, spec, copy[i][0]);
    lua_setfield(L, ex, copy[i][1]);
  }
  if (lua_getfield(L, spec, "name") == LUA_TNIL) {
    lua_pop(L, 1);
    lua_pushliteral(L, "child");
  }
  lua_setfield(L, ex, "child_name");
  if (cfg.default_stopping && !cfg.has_strategy) {
    tend_strategy_push_stopping(L);
    lua_setfield(L, ex, "supervisor");
  }
  lua_settop(L, ref);
  return 1;
}

/* Starts the next child of a (protected: called through lua_pcall). */
static int start_child_p(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_actor *a = lua_touserdata(L, 1);
  tend_backoff_sup *b = B(a);
  tend_actor_push_extras(L, h, a);
  int ex = lua_gettop(L);
  tend_spawn_opts o;
  memset(&o, 0, sizeof o);
  o.shutdown_ns = tend_clock_ns(5.0);
  lua_getfield(L, ex, "child_factory");
  int f = lua_gettop(L);
  lua_getfield(L, ex, "child_name");
  o.name = lua_gettop(L);
  if (lua_getfield(L, ex, "child_args") == LUA_TTABLE) o.args = lua_gettop(L);
  tend_actor *c = tend_actor_spawn(L, h, a, f, &o);
  b->child_id = c->id;
  b->child_gen = c->gen;
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
  if (!b->cfg.manual_reset) {
    tend_timer *t = tend_timer_arm(L, h, TEND_TIMER_BACKOFF_RESET, a,
                                   b->cfg.reset_after_ns, 0, 0);
    if (t) t->tag = b->incarnation;
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
  tend_actor_push_extra(L, h, a, "final_stop");
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
      tend_actor_dead_letter(L, h, a, NULL);
      tend_actor_stop(L, h, a, TEND_STOP_BY_PARENT);
      return;
    }
    b->final_stop_received = 1;
  }
  if (c) {
    tend_actor_send(L, h, c->id, c->gen, msg, sid, sgen);
  } else if (b->cfg.reply_while_stopped) {
    if (sid == 0) {
      tend_actor_dead_letter(L, h, a, NULL);
      return;
    }
    tend_actor_push_extra(L, h, a, "reply");
    tend_actor_send(L, h, sid, sgen, -1, a->id, a->gen);
    lua_pop(L, 1);
  } else if (b->cfg.stash) {
    tend_msg *m = tend_msg_alloc(&h->msgs);
    if (m == NULL || tend_value_store(L, h, msg, &m->value) != 0) {
      if (m) tend_msg_release(&h->msgs, m);
      tend_actor_dead_letter(L, h, a, NULL);
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
      tend_event e = TEND_EVENT_INIT("stash_drop", a);
      tend_event_emit(L, h, &e);
    }
  } else {
    tend_actor_dead_letter(L, h, a, NULL);
  }
}

/* ------------------------------------------------------------ the child */

int tend_backoff_child_failed(lua_State *L, tend_host *h, tend_actor *p,
                              tend_actor *c) {
  tend_backoff_sup *b = B(p);
  if (b == NULL || b->cfg.mode != TEND_BACKOFF_ON_FAILURE) return 0;
  b->restart_pending = 1;
  c->flags &= ~TEND_AF_FAILED;
  tend_actor_stop(L, h, c, TEND_STOP_FAILURE);
  return 1;
}

void tend_backoff_child_died(lua_State *L, tend_host *h, tend_actor *p,
                             tend_actor *c) {
  tend_backoff_sup *b = B(p);
  if (b == NULL || c->id != b->child_id || c->gen != b->child_gen) return;
  b->child_id = b->child_gen = 0;
  if (p->state != TEND_ACTOR_RUNNING) return; /* we stop or restart ourselves */
  int again = b->cfg.mode == TEND_BACKOFF_ON_STOP ? !b->final_stop_received
                                                  : b->restart_pending;
  b->restart_pending = 0;
  if (!again) { /* on_failure: a normal stop; on_stop: the final message */
    tend_actor_stop(L, h, p, TEND_STOP_BY_PARENT);
    return;
  }
  if (b->cfg.max_retries >= 0 && b->restarts >= (uint64_t)b->cfg.max_retries) {
    give_up(L, h, p, b->restarts, "max_retries reached", TEND_STOP_BY_PARENT);
    return;
  }
  b->restarts++;
  int64_t delay = next_delay(L, h, p, &b->cfg.delays, &b->delays, b->restarts);
  tend_timer *t =
      tend_timer_arm(L, h, TEND_TIMER_BACKOFF_START, p, delay, 0, 0);
  if (t == NULL) {
    tend_actor_stop(L, h, p, TEND_STOP_BY_PARENT);
    return;
  }
  t->tag = b->incarnation;
}

void tend_backoff_reset(lua_State *L, tend_host *h, tend_actor *a) {
  tend_actor *p = a->parent;
  tend_backoff_sup *b = p ? B(p) : NULL;
  if (b && b->child_id == a->id && b->child_gen == a->gen) {
    tend_delay_reset(&b->cfg.delays, &b->delays);
    b->restarts = 0;
    tend_event e = TEND_EVENT_INIT("reset", p);
    e.detail = "by the child";
    tend_event_emit(L, h, &e);
  } else if (a->ext && a->ext->typed) {
    tend_typed *ty = a->ext->typed;
    typed_reset(ty);
  } else {
    luaL_error(
        L, "ctx:reset_backoff: this actor is not under a backoff supervisor");
  }
}

/* ------------------------------------------------------------ typed */

static const tend_typed_clause *match(const tend_typed *ty, const char *kind) {
  for (uint32_t i = 0; i < ty->n; i++)
    if (strcmp(ty->c[i].kind, "*") == 0 || strcmp(ty->c[i].kind, kind) == 0)
      return &ty->c[i];
  return NULL;
}

int tend_typed_fail(lua_State *L, tend_host *h, tend_actor *a) {
  tend_typed *ty = a->ext ? a->ext->typed : NULL;
  if (ty == NULL || ty->waiting) return 0;
  int err = lua_gettop(L);
  lua_getfield(L, err, "kind");
  const char *kind = lua_isstring(L, -1) ? lua_tostring(L, -1) : "Error";
  const tend_typed_clause *c = match(ty, kind);
  lua_pop(L, 1);
  if (c == NULL) return 0;
  static const char *const what[] = {"restart", "resume", "stop",
                                     "restart_with_limit",
                                     "restart_with_backoff"};
  tend_event e = TEND_EVENT_INIT("directive", a);
  e.directive = what[c->what];
  e.clause = c->kind;
  tend_event_emit(L, h, &e);
  tend_actor_ext *x = a->ext;
  switch (c->what) {
    case TEND_TYPED_RESUME: break;
    case TEND_TYPED_STOP: tend_actor_stop(L, h, a, TEND_STOP_FAILURE); break;
    case TEND_TYPED_RESTART_WITH_LIMIT:
      if (tend_window_allow(&x->child_window, &c->limit,
                            tend_clock_now(&h->clock)) != 1) {
        give_up(L, h, a, -1, "restart limit reached", TEND_STOP_FAILURE);
        break;
      }
      /* fall through */
    case TEND_TYPED_RESTART: tend_supervise_restart_self(L, h, a); break;
    case TEND_TYPED_RESTART_WITH_BACKOFF: {
      if (c->max_restarts >= 0 &&
          ty->backoff_restarts >= (uint64_t)c->max_restarts) {
        give_up(L, h, a, ty->backoff_restarts, "max_restarts reached",
                TEND_STOP_FAILURE);
        break;
      }
      ty->backoff_restarts++;
      int64_t delay =
          next_delay(L, h, a, &c->delays, &ty->delays, ty->backoff_restarts);
      ty->incarnation++;
      ty->waiting = 1;
      ty->stash = c->stash;
      tend_supervise_suspend_failed(a);
      tend_timer *t = tend_timer_arm(L, h, TEND_TIMER_RESTART, a, delay, 0, 0);
      if (t) t->tag = ty->incarnation;
      break;
    }
  }
  lua_settop(L, err - 1);
  return 1;
}

void tend_typed_restarted(lua_State *L, tend_host *h, tend_actor *a) {
  tend_typed *ty = a->ext ? a->ext->typed : NULL;
  if (ty == NULL || ty->n == 0) return;
  /* reset_after: the clause that scheduled the last backoff restart */
  for (uint32_t i = 0; i < ty->n; i++) {
    const tend_typed_clause *c = &ty->c[i];
    if (c->what != TEND_TYPED_RESTART_WITH_BACKOFF || ty->backoff_restarts == 0)
      continue;
    int64_t after = c->reset_after_ns ? c->reset_after_ns : c->delays.min_ns;
    tend_timer *t =
        tend_timer_arm(L, h, TEND_TIMER_BACKOFF_RESET, a, after, 0, 0);
    if (t) t->tag = ty->incarnation;
    break;
  }
}

void tend_backoff_timer(lua_State *L, tend_host *h, tend_actor *a,
                        tend_timer_kind kind, uint32_t tag) {
  tend_typed *ty = a->ext ? a->ext->typed : NULL;
  tend_backoff_sup *b = B(a);
  if (kind == TEND_TIMER_RESTART) {
    if (ty && ty->waiting && tag == ty->incarnation) {
      ty->waiting = 0;
      tend_supervise_post_restart(h, a);
    }
  } else if (kind == TEND_TIMER_BACKOFF_RESET) {
    tend_event e = TEND_EVENT_INIT("reset", a);
    if (ty && tag == ty->incarnation && !ty->waiting &&
        !(a->flags & TEND_AF_FAILED)) {
      typed_reset(ty);
      tend_event_emit(L, h, &e);
    } else if (b && tag == b->incarnation &&
               tend_actor_live(h, b->child_id, b->child_gen)) {
      tend_delay_reset(&b->cfg.delays, &b->delays);
      b->restarts = 0;
      tend_event_emit(L, h, &e);
    }
  } else if (kind == TEND_TIMER_BACKOFF_START) {
    if (b && tag == b->incarnation && b->child_id == 0 &&
        a->state == TEND_ACTOR_RUNNING)
      start_child(L, h, a);
  }
}

/* A backoff supervisor restarted by its own parent starts afresh. */
void tend_backoff_restarted(lua_State *L, tend_host *h, tend_actor *a) {
  tend_backoff_sup *b = B(a);
  tend_delay_reset(&b->cfg.delays, &b->delays);
  b->restarts = 0;
  a->state = TEND_ACTOR_RESTARTING; /* restart_done moves it on */
  tend_supervise_restart_done(L, h, a);
  start_child(L, h, a);
}

/* ------------------------------------------------------------ typed spawn */

static int64_t clause_secs(lua_State *L, int t, const char *k, const char *fn,
                           int required) {
  int ty = lua_getfield(L, t, k);
  double s = ty == LUA_TNUMBER ? lua_tonumber(L, -1) : -1;
  if (ty == LUA_TNIL && !required) {
    lua_pop(L, 1);
    return 0;
  }
  if (!(s > 0))
    luaL_error(L, "%s: %s: expected a number of seconds > 0, got %s", fn, k,
               luaL_tolstring(L, -1, NULL));
  lua_pop(L, 1);
  return isinf(s) ? INT64_MAX : tend_clock_ns(s);
}

static int64_t clause_int(lua_State *L, int t, const char *k, const char *fn,
                          int64_t def, int64_t least) {
  int64_t v = def;
  if (lua_getfield(L, t, k) != LUA_TNIL) {
    if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < least)
      luaL_error(L, "%s: %s: expected an integer >= %I, got %s", fn, k,
                 (lua_Integer)least, luaL_tolstring(L, -1, NULL));
    v = lua_tointeger(L, -1);
  }
  lua_pop(L, 1);
  return v;
}

/* Parses clause i (table at t: {kind=..., strategy={what=...}}) into c. */
static void parse_clause(lua_State *L, int t, const char *fn,
                         tend_typed_clause *c) {
  lua_getfield(L, t, "kind");
  if (lua_type(L, -1) != LUA_TSTRING)
    luaL_error(L,
               "%s: on_failure: kind: expected an error kind or \"*\", got %s",
               fn, tend_typename(L, -1));
  c->kind = strdup(lua_tostring(L, -1));
  lua_pop(L, 1);
  if (c->kind == NULL) luaL_error(L, "%s: out of memory", fn);
  lua_getfield(L, t, "strategy");
  int s = lua_gettop(L);
  lua_getfield(L, s, "what");
  const char *what = lua_isstring(L, -1) ? lua_tostring(L, -1) : "";
  static const char *const names[] = {"restart", "resume", "stop",
                                      "restart_with_limit",
                                      "restart_with_backoff"};
  int w = -1;
  for (int i = 0; i < 5; i++)
    if (strcmp(what, names[i]) == 0) w = i;
  if (!lua_istable(L, s) || w < 0)
    luaL_error(L,
               "%s: on_failure: strategy: expected tend.restart, tend.resume, "
               "tend.stop_on_failure, tend.restart_with_limit(...) or "
               "tend.restart_with_backoff(...), got %s",
               fn, tend_typename(L, s));
  lua_pop(L, 1);
  c->what = (tend_typed_kind)w;
  c->max_restarts = -1;
  if (c->what == TEND_TYPED_RESTART_WITH_LIMIT) {
    int64_t n = clause_int(L, s, "max", fn, -1, -1);
    int64_t within = clause_secs(L, s, "within", fn, 1);
    c->limit = tend_limit_make(n, within, TEND_WINDOW_FIXED);
  } else if (c->what == TEND_TYPED_RESTART_WITH_BACKOFF) {
    lua_pushvalue(L, s);
    tend_delay_cfg d;
    memset(&d, 0, sizeof d);
    d.min_ns = clause_secs(L, s, "min_backoff", fn, 1);
    d.max_ns = clause_secs(L, s, "max_backoff", fn, 1);
    if (d.max_ns < d.min_ns)
      luaL_error(L,
                 "%s: restart_with_backoff: max_backoff must be >= min_backoff",
                 fn);
    lua_getfield(L, s, "random_factor");
    double rf =
        lua_isnil(L, -1) ? 0 : (lua_isnumber(L, -1) ? lua_tonumber(L, -1) : -1);
    if (!(rf >= 0 && rf <= 1))
      luaL_error(L,
                 "%s: restart_with_backoff: random_factor: expected a number "
                 "in [0, 1], got %s",
                 fn, luaL_tolstring(L, -1, NULL));
    lua_pop(L, 2);
    d.random_factor = rf;
    d.algorithm = TEND_ALG_EXPONENTIAL;
    d.jitter = TEND_JITTER_AKKA;
    d.ceiling = 10;
    c->delays = d;
    c->reset_after_ns = clause_secs(L, s, "reset_after", fn, 0);
    c->max_restarts = clause_int(L, s, "max_restarts", fn, -1, -1);
    c->stash = (uint32_t)clause_int(L, s, "stash", fn, 0, 1);
  }
  lua_pop(L, 1);
}

static void free_typed(tend_typed *ty) {
  if (ty == NULL) return;
  for (uint32_t i = 0; i < ty->n; i++) free(ty->c[i].kind);
  free(ty->c);
  free(ty);
}

/* Parses the clauses of the spec at t (protected: frees on error). */
static int parse_typed_p(lua_State *L) {
  tend_typed *ty = lua_touserdata(L, 1);
  const char *fn = lua_tostring(L, 3);
  lua_getfield(L, 2, "clauses");
  int list = lua_gettop(L);
  lua_Integer n = lua_istable(L, list) ? luaL_len(L, list) : 0;
  ty->c = calloc((size_t)n + 1, sizeof *ty->c);
  if (ty->c == NULL) luaL_error(L, "%s: out of memory", fn);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_rawgeti(L, list, i);
    parse_clause(L, lua_gettop(L), fn, &ty->c[ty->n]);
    ty->n++;
    lua_pop(L, 1);
  }
  return 0;
}

int tend_typed_spawn(lua_State *L, tend_actor *parent, int off,
                     const char *fn) {
  tend_host *h = tend_host_of(L);
  int spec = 1 + off;
  lua_settop(L, 2 + off);
  if (lua_getfield(L, spec, "factory") != LUA_TFUNCTION)
    luaL_error(L, "%s: supervise: factory: expected a function, got %s", fn,
               tend_typename(L, -1));
  int factory = lua_gettop(L);
  tend_spawn_opts o; /* every check before anything is allocated */
  tend_spawn_parse(L, 2 + off, fn, &o);
  if (h->shutting_down) luaL_error(L, "%s: the host is shutting down", fn);
  if (parent->state >= TEND_ACTOR_STOPPING)
    luaL_error(L, "%s: the parent is stopping; it cannot take new children",
               fn);
  if (o.name) tend_actor_check_name(L, h, parent, o.name);
  tend_typed *ty = calloc(1, sizeof *ty);
  if (ty == NULL) luaL_error(L, "%s: out of memory", fn);
  ty->delays.slot = 1;
  lua_pushcfunction(L, parse_typed_p);
  lua_pushlightuserdata(L, ty);
  lua_pushvalue(L, spec);
  lua_pushstring(L, fn);
  if (lua_pcall(L, 3, 0, 0) != LUA_OK) {
    free_typed(ty);
    return lua_error(L);
  }
  tend_actor *a = tend_actor_spawn(L, h, parent, factory, &o);
  tend_actor_ext *x = tend_actor_ext_get(a);
  if (x == NULL) {
    free_typed(ty);
    tend_actor_stop(L, h, a, TEND_STOP_BY_PARENT);
    luaL_error(L, "%s: out of memory", fn);
  }
  x->typed = ty;
  a->flags |= TEND_AF_TYPED;
  return 1;
}

/* ------------------------------------------------------------ free */

void tend_backoff_free(lua_State *L, tend_host *h, tend_actor *a) {
  if (a->ext == NULL) return;
  tend_backoff_sup *b = a->ext->backoff;
  if (b) {
    tend_msg *m;
    while ((m = tend_queue_pop(&b->stash)) != NULL) {
      tend_actor_dead_letter(L, h, a, &m->value);
      tend_msg_release(&h->msgs, m);
    }
    free(b);
    a->ext->backoff = NULL;
  }
  free_typed(a->ext->typed);
  a->ext->typed = NULL;
}
