/* supervise: failure handling, directives and the restart sequence (see
 * supervise.h). */
#include "runtime/supervise.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/backoff_sup.h"
#include "runtime/error.h"
#include "runtime/event.h"
#include "runtime/lifecycle.h"
#include "runtime/promise.h"
#include "runtime/runq.h"
#include "runtime/sched.h"
#include "runtime/send.h"
#include "runtime/timers.h"
#include "runtime/typed.h"
#include "runtime/value.h"

/* ------------------------------------------------------------ helpers */

static void suspend_subtree(tend_actor *a) {
  if (a->suspends < UINT8_MAX) a->suspends++;
  for (tend_actor *c = a->first_child; c; c = c->next_sibling)
    suspend_subtree(c);
}

static void resume_subtree(tend_host *h, tend_actor *a) {
  if (a->suspends > 0) a->suspends--;
  if (tend_actor_has_work(a)) tend_runq_push(h, a);
  for (tend_actor *c = a->first_child; c; c = c->next_sibling)
    resume_subtree(h, c);
}

/* p's strategy for its children. */
static tend_strategy strategy_of(const tend_actor *p) {
  return p->ext && p->ext->has_strategy ? p->ext->strategy
                                        : tend_strategy_default();
}

static void log_hook_error(lua_State *L, tend_host *h, tend_actor *a,
                           const char *hook, int err) {
  tend_actor_push_path(L, h, a);
  tend_error_describe(L, err);
  tend_host_log(h, TEND_LOG_WARN, lua_tostring(L, -2), "%s failed: %s", hook,
                lua_tostring(L, -1));
  lua_pop(L, 2);
}

/* ------------------------------------------------------------ failure */

/* The failure cannot be handled by a supervisor: the script ends with 1. */
static void fatal(lua_State *L, tend_host *h, int err, const char *what) {
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
  fprintf(stderr, "tend: %s%s\n%s\n", what, lua_tostring(L, -2),
          lua_isstring(L, -1) ? lua_tostring(L, -1) : "");
  fflush(stderr);
  lua_pop(L, 2);
  h->failed = 1;
  tend_host_shutdown(h, 1);
}

void tend_actor_fail(lua_State *L, tend_host *h, tend_actor *a) {
  int err = lua_gettop(L);
  h->stats.failures++;
  if (tend_event_on(h)) {
    tend_event e = TEND_EVENT_INIT(TEND_EV_FAIL, a);
    if (lua_istable(L, err)) {
      lua_getfield(L, err, "kind");
      lua_getfield(L, err, "message");
      e.kind = lua_tostring(L, -2);
      e.message = lua_tolstring(L, -1, &e.message_len);
    }
    tend_event_emit(L, h, &e);
    lua_settop(L, err);
  }
  lua_pushvalue(L, err);
  tend_actor_set_ext(L, a, TEND_EXT(error_ref));
  if (a == h->main) { /* the script itself failed: as lua.c, then exit 1 */
    fatal(L, h, err, "");
    tend_actor_stop(L, h, a, TEND_STOP_FAILURE);
  } else if (a->parent == NULL) { /* escalated past a guardian */
    fatal(L, h, err, "failure escalated past the guardian: ");
  } else if (a->state >= TEND_ACTOR_STOPPING ||
             a->failure == TEND_FAILURE_PENDING) {
    /* already on its way out, or already waiting for a decision */
  } else if (a->flags & TEND_AF_TASK) {
    tend_actor_push_path(L, h, a);
    tend_error_describe(L, err);
    tend_host_log(h, TEND_LOG_WARN, lua_tostring(L, -2), "task failed: %s",
                  lua_tostring(L, -1));
    tend_actor_stop(L, h, a, TEND_STOP_FAILURE);
  } else {
    if (a->wait != TEND_WAIT_NONE) { /* failed from outside while waiting */
      tend_actor_end_wait(L, h, a);
      a->op = TEND_OP_NONE;
    }
    lua_pushvalue(L, err);
    if ((a->flags & TEND_AF_TYPED) && tend_typed_fail(L, h, a)) {
      /* handled by its own clauses, without its supervisor */
    } else {
      lua_settop(L, err);
      tend_supervise_suspend_failed(a);
      tend_actor_post(h, a->parent, TEND_MSG_CHILD_FAILED, a);
    }
  }
  lua_settop(L, err - 1);
}

void tend_supervise_suspend_failed(tend_actor *a) {
  if (a->failure == TEND_FAILURE_PENDING) return;
  a->failure = TEND_FAILURE_PENDING;
  suspend_subtree(a);
}

void tend_supervise_restart_self(tend_host *h, tend_actor *a) {
  tend_actor_post(h, a, TEND_MSG_RESTART_SELF, NULL);
}

void tend_supervise_init_failed(lua_State *L, tend_host *h, tend_actor *a,
                                tend_actor_op op, int idx) {
  if (a->state == TEND_ACTOR_RESTARTING) { /* back to the old, failed */
    a->state = TEND_ACTOR_RUNNING;
    a->restart = TEND_RESTART_NONE;
    a->failure = TEND_FAILURE_NONE;
    if (a->suspends) a->suspends--; /* the new failure suspends it again */
  }
  tend_error_wrap(
      L, idx, "InitError",
      op == TEND_OP_FACTORY ? "factory failed" : "pre_start failed");
  tend_actor_fail(L, h, a);
}

/* Fails p with Escalated, wrapping c's error. */
static void escalate(lua_State *L, tend_host *h, tend_actor *p, tend_actor *c,
                     const char *why) {
  if (tend_event_on(h)) {
    tend_actor_push_path(L, h, c);
    tend_event e = TEND_EVENT_INIT(TEND_EV_ESCALATE, p);
    e.detail = lua_tostring(L, -1);
    e.reason = why;
    tend_event_emit(L, h, &e);
    lua_pop(L, 1);
  }
  tend_actor_ext *x = tend_actor_ext_get(p);
  if (x) {
    x->escalated_id = c->id;
    x->escalated_gen = c->gen;
  }
  tend_actor_push_ext(L, c, TEND_EXT(error_ref));
  tend_actor_push_path(L, h, c);
  lua_pushfstring(L, "%s %s", why, lua_tostring(L, -1));
  tend_error_wrap(L, -3, "Escalated", lua_tostring(L, -1));
  lua_replace(L, -4);
  lua_pop(L, 2);
  tend_actor_fail(L, h, p);
}

/* ------------------------------------------------------------ directives */

/* Stops a member of a directive's group: the failed child with its error,
 * the others as stopped by their supervisor. */
static void stop_member(lua_State *L, tend_host *h, tend_actor *m,
                        tend_actor *failed) {
  m->failure = TEND_FAILURE_NONE;
  tend_actor_stop(L, h, m,
                  m == failed ? TEND_STOP_FAILURE : TEND_STOP_BY_PARENT);
}

/* Restarts m, a member of the group of `failed`, whose ext ref at
 * cause_field holds the cause the others see. */
static void restart_member(lua_State *L, tend_host *h, tend_actor *m,
                           tend_actor *failed, size_t cause_field) {
  if (m->restart_type == TEND_TEMPORARY) {
    stop_member(L, h, m, failed);
    return;
  }
  if (m != failed) {
    tend_actor_push_ext(L, failed, cause_field);
    tend_actor_set_ext(L, m, TEND_EXT(cause_ref));
    lua_pushnil(L);
    tend_actor_set_ext(L, m, TEND_EXT(failed_msg_ref));
  }
  tend_actor_post(h, m,
                  m->failure == TEND_FAILURE_PENDING ? TEND_MSG_RESTART_SELF
                                                     : TEND_MSG_RESTART,
                  NULL);
}

/* Is m in the group a directive about c applies to under strategy s? */
static int in_group(const tend_strategy *s, const tend_actor *c,
                    const tend_actor *m) {
  if (s->kind == TEND_ONE_FOR_ONE) return m == c;
  if (s->kind == TEND_ALL_FOR_ONE) return 1;
  return m->seq >= c->seq; /* rest_for_one: c and those started after it */
}

static void log_directive(lua_State *L, tend_host *h, const tend_strategy *s,
                          tend_actor *c, const char *what) {
  if (!s->log) return;
  tend_actor_push_path(L, h, c);
  tend_actor_push_ext(L, c, TEND_EXT(error_ref));
  tend_error_describe(L, -1);
  tend_host_log(h, TEND_LOG_WARN, lua_tostring(L, -3), "%s; %s (restarts %u)",
                lua_tostring(L, -1), what, (unsigned)c->restarts);
  lua_pop(L, 3);
}

/* The directive event: what was decided for c, by which clause, and how
 * much of the restart window is used (w: NULL when not a restart). */
static void emit_directive(lua_State *L, tend_host *h, tend_actor *c,
                           const char *what, const char *clause,
                           const tend_window *w, const tend_limit *lim) {
  if (!tend_event_on(h)) return;
  tend_event e = TEND_EVENT_INIT(TEND_EV_DIRECTIVE, c);
  e.directive = what;
  e.clause = clause;
  if (w && lim->max >= 0) {
    e.window[0] = tend_window_used(w, lim, tend_clock_now(&h->clock));
    e.window[1] = lim->max;
    e.window[2] = lim->within == INT64_MAX ? -1 : lim->within;
  }
  e.count = c->restarts;
  tend_event_emit(L, h, &e);
}

/* Carries out directive d for the failed child c of p; clause says which
 * decider clause chose it ("default", "function", a kind, "*", ...) for
 * the trace; exited: c is a permanent child that stopped by itself. */
static void apply(lua_State *L, tend_host *h, tend_actor *p, tend_actor *c,
                  tend_directive d, const char *clause, int exited) {
  int top = lua_gettop(L);
  tend_strategy strategy = strategy_of(p);
  const tend_strategy *s = &strategy;
  tend_actor *next;
  if (d != TEND_RESTART)
    emit_directive(L, h, c, tend_directive_name(d), clause, NULL, NULL);
  switch (d) {
    case TEND_RESUME:
      log_directive(L, h, s, c, "resume");
      c->failure = TEND_FAILURE_NONE;
      resume_subtree(h, c);
      if (c->ext && c->ext->escalated_id) { /* resumes what it escalated */
        tend_actor *e =
            tend_actor_live(h, c->ext->escalated_id, c->ext->escalated_gen);
        c->ext->escalated_id = 0;
        if (e && e->failure == TEND_FAILURE_PENDING) {
          e->failure = TEND_FAILURE_NONE;
          resume_subtree(h, e);
        }
      }
      break;
    case TEND_STOP:
      log_directive(L, h, s, c, "stop");
      for (tend_actor *m = p->first_child; m; m = next) {
        next = m->next_sibling;
        if (in_group(s, c, m)) stop_member(L, h, m, c);
      }
      break;
    case TEND_RESTART: {
      if (tend_backoff_on_failure(p)) { /* stop it, start anew after a delay */
        emit_directive(L, h, c, "restart", clause, NULL, NULL);
        tend_backoff_child_failed(L, h, p, c);
        break;
      }
      int one = s->kind == TEND_ONE_FOR_ONE;
      tend_actor_ext *x = tend_actor_ext_get(one ? c : p);
      int ok = -1;
      tend_window *w = NULL;
      if (x) {
        w = one ? &x->child_window : &x->group_window;
        ok = tend_window_allow(w, &s->limit, tend_clock_now(&h->clock));
      }
      emit_directive(L, h, c, ok == 1 ? "restart" : "restart limit reached",
                     clause, w, &s->limit);
      if (ok != 1) {
        if (s->on_limit == TEND_ON_LIMIT_ESCALATE) {
          log_directive(L, h, s, c, "restart limit reached; escalate");
          escalate(L, h, p, c, "restart limit reached for");
          break;
        }
        log_directive(L, h, s, c, "restart limit reached; stop");
        for (tend_actor *m = p->first_child; m; m = next) {
          next = m->next_sibling;
          if (in_group(s, c, m)) stop_member(L, h, m, c);
        }
        break;
      }
      if (exited) {
        tend_actor_push_path(L, h, c);
        tend_host_log(h, TEND_LOG_INFO, lua_tostring(L, -1),
                      "permanent child stopped; restart");
        lua_pop(L, 1);
      } else {
        log_directive(L, h, s, c, "restart");
      }
      for (tend_actor *m = p->first_child; m; m = next) {
        next = m->next_sibling;
        if (in_group(s, c, m) && m->state < TEND_ACTOR_STOPPING)
          restart_member(L, h, m, c, TEND_EXT(error_ref));
      }
      break;
    }
    case TEND_ESCALATE:
      log_directive(L, h, s, c, "escalate");
      escalate(L, h, p, c, "failure of");
      break;
  }
  lua_settop(L, top);
}

/* The default decider (Akka classic): these kinds stop, the rest restart. */
static tend_directive default_decision(const char *kind) {
  if (strcmp(kind, "InitError") == 0 || strcmp(kind, "Killed") == 0 ||
      strcmp(kind, "DeathPact") == 0)
    return TEND_STOP;
  return TEND_RESTART;
}

int tend_supervise_child_failed(lua_State *L, tend_host *h, tend_actor *p,
                                const tend_msg *m) {
  tend_actor *c = tend_actor_live(h, m->sender_id, m->sender_gen);
  if (c == NULL || c->parent != p || c->failure != TEND_FAILURE_PENDING ||
      p->state != TEND_ACTOR_RUNNING)
    return -1; /* gone, or its supervisor is going itself */
  if (m->kind == TEND_MSG_CHILD_EXITED) { /* a permanent child's stop */
    apply(L, h, p, c, TEND_RESTART, "permanent", 1);
    return -1;
  }
  int top = lua_gettop(L);
  tend_strategy strategy = strategy_of(p);
  const tend_strategy *s = &strategy;
  if (s->stopping) {
    apply(L, h, p, c, TEND_STOP, "stopping", 0);
    return -1;
  }
  tend_actor_push_ext(L, c, TEND_EXT(error_ref)); /* top + 1 */
  lua_getfield(L, -1, "kind");                    /* top + 2 */
  const char *kind = lua_isstring(L, -1) ? lua_tostring(L, -1) : "Error";
  tend_actor_push_ext(L, p, TEND_EXT(decider_ref)); /* top + 3 */
  int decider = top + 3;
  if (lua_isfunction(L, decider)) {
    tend_actor_ext *x = tend_actor_ext_get(p);
    if (x == NULL) {
      lua_settop(L, top);
      apply(L, h, p, c, TEND_ESCALATE, "out of memory", 0);
      return -1;
    }
    x->deciding_id = c->id;
    x->deciding_gen = c->gen;
    lua_replace(L, top + 2);      /* err decider */
    lua_insert(L, top + 1);       /* decider err */
    tend_actor_push_ref(L, h, c); /* decider err child */
    p->op = TEND_OP_DECIDE;
    return 2;
  }
  tend_directive d;
  const char *clause;
  if (lua_istable(L, decider)) { /* tend.decider{...}: kind, then "*" */
    clause = kind;
    if (strcmp(kind, "InitError") == 0 &&
        lua_getfield(L, decider, kind) == LUA_TNIL) {
      /* no clause for InitError: the kind the factory raised counts */
      lua_getfield(L, top + 1, "cause");
      if (lua_istable(L, -1) && lua_getfield(L, -1, "kind") == LUA_TSTRING) {
        clause = lua_tostring(L, -1); /* lives with the error */
        lua_getfield(L, decider, clause);
        if (lua_isnil(L, -1)) clause = kind;
      } else {
        lua_pushnil(L);
      }
      lua_replace(L, top + 4); /* the clause's directive, or nil */
      lua_settop(L, top + 4);
    } else {
      lua_settop(L, top + 3);
      lua_getfield(L, decider, kind);
    }
    if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      lua_getfield(L, decider, "*");
      clause = lua_isnil(L, -1) ? "no match" : "*";
    }
    int i =
        lua_isstring(L, -1) ? tend_directive_parse(lua_tostring(L, -1)) : -1;
    d = i < 0 ? TEND_ESCALATE : (tend_directive)i;
  } else if ((p->flags & TEND_AF_BACKOFF) &&
             !(p->ext && p->ext->has_strategy)) {
    d = TEND_RESTART; /* backoff: every failure, InitError too, backs off */
    clause = "backoff";
  } else {
    d = default_decision(kind);
    clause = "default";
  }
  apply(L, h, p, c, d, clause, 0); /* kind (clause) lives until the settop */
  lua_settop(L, top);
  return -1;
}

void tend_supervise_decided(lua_State *L, tend_host *h, tend_actor *p,
                            int status, int idx) {
  tend_actor_ext *x = p->ext;
  tend_actor *c =
      x ? tend_actor_live(h, x->deciding_id, x->deciding_gen) : NULL;
  if (x) x->deciding_id = 0;
  if (c == NULL || c->failure != TEND_FAILURE_PENDING || c->parent != p) return;
  tend_directive d = TEND_ESCALATE;
  const char *clause = "function";
  if (status != LUA_OK && status != LUA_YIELD) {
    log_hook_error(L, h, p, "decider", idx);
    clause = "function failed";
  } else {
    int i = lua_type(L, idx) == LUA_TSTRING
                ? tend_directive_parse(lua_tostring(L, idx))
                : -1;
    if (i >= 0) {
      d = (tend_directive)i;
    } else {
      tend_actor_push_path(L, h, p);
      luaL_tolstring(L, idx, NULL);
      tend_host_log(h, TEND_LOG_WARN, lua_tostring(L, -2),
                    "decider returned %s, not resume|restart|stop|escalate; "
                    "treated as escalate",
                    lua_tostring(L, -1));
      lua_pop(L, 2);
      clause = "function returned no directive";
    }
  }
  apply(L, h, p, c, d, clause, 0);
}

int tend_supervise_normal_exit(lua_State *L, tend_host *h, tend_actor *a) {
  tend_actor *p = a->parent;
  if (a->restart_type != TEND_PERMANENT || p == NULL || h->shutdown ||
      p->state != TEND_ACTOR_RUNNING || a->failure == TEND_FAILURE_PENDING ||
      (a->flags & TEND_AF_TASK))
    return 0;
  tend_error_new(L, "Stopped", "a permanent child stopped; it is restarted");
  tend_actor_set_ext(L, a, TEND_EXT(error_ref));
  tend_supervise_suspend_failed(a);
  tend_actor_post(h, p, TEND_MSG_CHILD_EXITED, a);
  return 1;
}

/* ------------------------------------------------------------ restart */

/* Stops every child for a restart (default pre_restart), youngest first. */
static void stop_children(lua_State *L, tend_host *h, tend_actor *a) {
  for (tend_actor *c = a->last_child; c; c = c->prev_sibling)
    tend_actor_stop(L, h, c, TEND_STOP_SHUTDOWN);
}

int tend_supervise_restart(lua_State *L, tend_host *h, tend_actor *a,
                           tend_restart_for why) {
  if (a->state != TEND_ACTOR_RUNNING && a->state != TEND_ACTOR_STARTING)
    return -1;
  a->state = TEND_ACTOR_RESTARTING;
  a->restart = TEND_RESTART_PRE;
  a->restart_for = (uint8_t)why;
  if (a->wait != TEND_WAIT_NONE) tend_actor_end_wait(L, h, a);
  while (a->timers) tend_timer_cancel(L, h, a->timers);
  if (why == TEND_RESTART_FOR_SELF) { /* else the group set the cause */
    tend_actor_push_ext(L, a, TEND_EXT(error_ref));
    tend_actor_set_ext(L, a, TEND_EXT(cause_ref));
  }
  tend_promise_fail_held(L, h, a, TEND_PROMISE_RESTART, 0); /* asks taken */
  if (tend_actor_push_hook(L, h, a, "pre_restart")) {
    tend_actor_push_ext(L, a, TEND_EXT(cause_ref));
    tend_actor_push_ext(L, a, TEND_EXT(failed_msg_ref));
    tend_actor_push_ctx(L, h, a);
    a->op = TEND_OP_PRE_RESTART;
    return 4;
  }
  stop_children(L, h, a); /* the default pre_restart: children, post_stop */
  if (tend_actor_push_hook(L, h, a, "post_stop")) {
    tend_actor_push_ctx(L, h, a);
    a->op = TEND_OP_RESTART_STOP;
    return 2;
  }
  return tend_supervise_restart_continue(L, h, a);
}

int tend_supervise_restart_continue(lua_State *L, tend_host *h, tend_actor *a) {
  if (a->state != TEND_ACTOR_RESTARTING) return -1;
  a->restart = TEND_RESTART_CHILDREN;
  for (tend_actor *c = a->first_child; c; c = c->next_sibling)
    if (c->state == TEND_ACTOR_STOPPING) return -1; /* CHILD_GONE resumes */
  if (a->flags & TEND_AF_BACKOFF) { /* no factory: a fresh child instead */
    tend_supervise_restart_done(L, h, a);
    tend_backoff_restarted(L, h, a);
    return -1;
  }
  a->restart = TEND_RESTART_FACTORY;
  for (tend_actor *c = a->first_child; c; c = c->next_sibling)
    c->flags |= TEND_AF_SURVIVOR; /* restarted after the new instance */
  return tend_lifecycle_push_factory(L, h, a);
}

int tend_supervise_restarted(lua_State *L, tend_host *h, tend_actor *a) {
  a->restart = TEND_RESTART_POST;
  if (tend_actor_push_hook(L, h, a, "post_restart")) {
    tend_actor_push_ext(L, a, TEND_EXT(cause_ref));
    tend_actor_push_ctx(L, h, a);
    a->op = TEND_OP_POST_RESTART;
    return 3;
  }
  if (tend_actor_push_hook(L, h, a, "pre_start")) { /* default post_restart */
    tend_actor_push_ctx(L, h, a);
    a->op = TEND_OP_PRE_START;
    return 2;
  }
  tend_supervise_restart_done(L, h, a);
  return -1;
}

void tend_supervise_restart_done(lua_State *L, tend_host *h, tend_actor *a) {
  if (a->state != TEND_ACTOR_RESTARTING) return;
  a->state = TEND_ACTOR_RUNNING;
  a->restart = TEND_RESTART_NONE;
  a->restarts++;
  h->stats.restarts++;
  if (tend_event_on(h)) {
    tend_event e = TEND_EVENT_INIT(TEND_EV_RESTART, a);
    e.count = a->restarts;
    e.incarnation = a->restarts + 1;
    tend_event_emit(L, h, &e);
  }
  for (tend_actor *c = a->first_child; c; c = c->next_sibling) {
    if (!(c->flags & TEND_AF_SURVIVOR)) continue; /* spawned by the new one */
    c->flags &= ~TEND_AF_SURVIVOR;
    if (c->state >= TEND_ACTOR_STOPPING) continue;
    restart_member(L, h, c, a, TEND_EXT(cause_ref)); /* survivors too (Akka) */
  }
  if (a->restart_for == TEND_RESTART_FOR_SELF) {
    a->failure = TEND_FAILURE_NONE;
    resume_subtree(h, a);
  }
  if (a->flags & TEND_AF_TYPED) tend_typed_restarted(L, h, a);
  if (tend_actor_has_work(a)) tend_runq_push(h, a);
}
