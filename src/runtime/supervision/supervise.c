/* supervise: failure handling, directives and the restart sequence (see
 * supervise.h). */
#include "runtime/supervision/supervise.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/supervision/backoff_sup.h"
#include "runtime/core/error.h"
#include "runtime/core/event.h"
#include "runtime/core/failure.h"
#include "runtime/core/lifecycle.h"
#include "runtime/core/promise.h"
#include "runtime/core/send.h"

static int tend_supervise_group_step(lua_State *L, tend_host *h, tend_actor *p);
static int tend_supervise_child_failed(lua_State *L, tend_host *h,
                                       tend_actor *p, const tend_msg *m);
static void tend_supervise_decided(lua_State *L, tend_host *h, tend_actor *p,
                                   int status, int idx);

/* ------------------------------------------------------------ helpers */

/* p's strategy for its children. */
static tend_strategy strategy_of(const tend_actor *p) {
  return p->ext && p->ext->has_strategy ? p->ext->strategy
                                        : tend_strategy_default();
}

void tend_supervise_log_hook(lua_State *L, tend_host *h, tend_actor *a,
                             const char *hook, int err) {
  tend_actor_push_path(L, h, a);
  tend_error_describe(L, err);
  tend_host_log(h, TEND_LOG_WARN, lua_tostring(L, -2), "%s failed: %s", hook,
                lua_tostring(L, -1));
  lua_pop(L, 2);
}

/* ------------------------------------------------------------ failure */

void tend_supervise_restart_self(tend_host *h, tend_actor *a) {
  tend_actor_post(h, a, TEND_MSG_RESTART_SELF, NULL);
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
  tend_error_wrap(L, -3, TEND_ERR_NAME(ESCALATED), lua_tostring(L, -1));
  lua_replace(L, -4);
  lua_pop(L, 2);
  tend_actor_fail(L, h, p);
}

/* ------------------------------------------------------------ directives */

/* Stops a member of a directive's group: a failed one with its error,
 * the others as stopped by their supervisor ("shutdown"). */
static void stop_member(lua_State *L, tend_host *h, tend_actor *m) {
  tend_stop_reason why = m->failure == TEND_FAILURE_PENDING
                             ? TEND_STOP_FAILURE
                             : TEND_STOP_BY_PARENT;
  m->failure = TEND_FAILURE_NONE;
  tend_actor_stop(L, h, m, why);
}

/* m's restart is for the failure of `failed`, whose ext ref at
 * cause_field holds the cause m's hooks see. A wait m is in ends with its
 * instance: nothing is raised into it. */
static void set_cause(lua_State *L, tend_host *h, tend_actor *m,
                      tend_actor *failed, size_t cause_field) {
  if (m->wait != TEND_WAIT_NONE) {
    tend_actor_end_wait(L, h, m);
    m->op = TEND_OP_NONE;
  }
  tend_actor_ext *x = tend_actor_ext_get(m);
  if (x) {
    x->cause_id = failed->id;
    x->cause_gen = failed->gen;
  }
  if (m != failed) {
    tend_actor_push_ext(L, failed, cause_field);
    tend_actor_set_ext(L, m, TEND_EXT(cause_ref));
    lua_pushnil(L);
    tend_actor_set_ext(L, m, TEND_EXT(failed_msg_ref));
  }
}

/* Restarts m (a temporary child is stopped instead). */
static void post_restart(lua_State *L, tend_host *h, tend_actor *m) {
  if (m->restart_type == TEND_TEMPORARY) {
    stop_member(L, h, m);
    return;
  }
  tend_actor_post(h, m,
                  m->failure == TEND_FAILURE_PENDING ? TEND_MSG_RESTART_SELF
                                                     : TEND_MSG_RESTART,
                  NULL);
}

/* Restarts m for the failure of `failed` (see set_cause). */
void tend_supervise_restart_member(lua_State *L, tend_host *h, tend_actor *m,
                                   tend_actor *failed, size_t cause_field) {
  set_cause(L, h, m, failed, cause_field);
  post_restart(L, h, m);
}

/* Is m in the group a directive about c applies to under strategy s? */
static int in_group(const tend_strategy *s, const tend_actor *c,
                    const tend_actor *m) {
  if (s->kind == TEND_ONE_FOR_ONE) return m == c;
  if (s->kind == TEND_ALL_FOR_ONE) return 1;
  return m->seq >= c->seq; /* rest_for_one: c and those started after it */
}

/* Stops the members of the group of c under strategy s (see in_group). */
static void stop_group(lua_State *L, tend_host *h, tend_actor *p, tend_actor *c,
                       const tend_strategy *s) {
  tend_actor *next;
  for (tend_actor *m = p->first_child; m; m = next) {
    next = m->next_sibling;
    if (in_group(s, c, m)) stop_member(L, h, m);
  }
}

/* ------------------------------------------------------------ groups */

/* A group restart (OTP's one_for_all and rest_for_one): the members stop
 * one at a time, youngest first (each runs its pre_restart, loses its
 * children and is held), then all are rebuilt in start order. Each step
 * is a GROUP_STEP message to the parent, posted by a member when it is
 * held, rebuilt or gone. */
static void group_step(lua_State *L, tend_host *h, tend_actor *p) {
  /* the walk starts at the member the last step waited for (the younger
   * ones are held): a group of n members costs n steps, not n^2 */
  tend_actor *at = NULL;
  if (p->ext->group_at_id)
    at = tend_slots_get(&h->ids, p->ext->group_at_id, p->ext->group_at_gen);
  if (at == NULL || at->kind != TEND_ENTITY_ACTOR || at->parent != p ||
      at->state == TEND_ACTOR_DEAD)
    at = p->last_child;
  for (tend_actor *m = at; m; m = m->prev_sibling) {
    if (!(m->flags & TEND_AF_GROUP) || (m->flags & TEND_AF_HELD)) continue;
    p->ext->group_at_id = m->id;
    p->ext->group_at_gen = m->gen;
    if (m->state == TEND_ACTOR_RUNNING || m->state == TEND_ACTOR_STARTING)
      post_restart(L, h, m);
    return; /* the youngest not held yet: wait for it */
  }
  p->ext->group_at_id = 0;
  p->ext->group_active = 0; /* all held: rebuilt in start order */
  for (tend_actor *m = p->first_child; m; m = m->next_sibling) {
    if (!(m->flags & TEND_AF_GROUP)) continue;
    m->flags &= ~TEND_AF_GROUP;
    if (m->flags & TEND_AF_HELD)
      tend_actor_post(h, m, TEND_MSG_RESTART_GO, NULL);
  }
}

/* c failed: its group restarts (joining a group restart under way). */
static void group_restart(lua_State *L, tend_host *h, tend_actor *p,
                          tend_actor *c, const tend_strategy *s) {
  for (tend_actor *m = p->first_child; m; m = m->next_sibling) {
    if (!in_group(s, c, m) || m->state >= TEND_ACTOR_STOPPING ||
        (m->flags & TEND_AF_GROUP)) /* in the group under way already */
      continue;
    m->flags |= TEND_AF_GROUP;
    if (m->failure == TEND_FAILURE_NONE) { /* no more mail for the old one */
      m->flags |= TEND_AF_GROUP_SUSPENDED;
      tend_actor_suspend_tree(m);
    }
    set_cause(L, h, m, c, TEND_EXT(error_ref));
  }
  p->ext->group_active = 1;
  p->ext->group_at_id = 0; /* from the youngest */
  group_step(L, h, p);
}

/* p's group restart stops short (p stops or restarts): held members are
 * rebuilt (a survivor) or stopped with p. */
void tend_supervise_group_abandon(tend_host *h, tend_actor *p) {
  if (p->ext == NULL || !p->ext->group_active) return;
  p->ext->group_active = 0;
  p->ext->group_at_id = 0;
  for (tend_actor *m = p->first_child; m; m = m->next_sibling) {
    m->flags &= ~TEND_AF_GROUP;
    if (m->flags & TEND_AF_HELD) {
      tend_actor_post(h, m, TEND_MSG_RESTART_GO, NULL);
    } else if (m->flags & TEND_AF_GROUP_SUSPENDED) { /* never stopped */
      m->flags &= ~TEND_AF_GROUP_SUSPENDED;
      tend_actor_resume_tree(h, m);
    }
  }
}

static int tend_supervise_group_step(lua_State *L, tend_host *h,
                                     tend_actor *p) {
  if (p->state == TEND_ACTOR_RUNNING && p->ext && p->ext->group_active)
    group_step(L, h, p);
  return -1;
}

/* The warn line of a directive for c. Its count is c's restarts once the
 * directive is carried out: a restart it begins (begins = 1) counts already,
 * as tend.inspect() and stats() show right after. */
static void log_directive(lua_State *L, tend_host *h, const tend_strategy *s,
                          tend_actor *c, const char *what, int begins) {
  if (!s->log || !tend_host_logs(h, TEND_LOG_WARN)) return; /* costs nothing */
  tend_actor_push_path(L, h, c);
  tend_actor_push_ext(L, c, TEND_EXT(error_ref));
  tend_error_describe(L, -1);
  tend_host_log(h, TEND_LOG_WARN, lua_tostring(L, -3), "%s; %s (restarts %u)",
                lua_tostring(L, -1), what,
                (unsigned)c->restarts + (unsigned)begins);
  lua_pop(L, 3);
}

/* The directive event: what was decided for c, by which clause, and how
 * much of the restart limit lim is used (used < 0: not a restart). */
static void emit_directive(lua_State *L, tend_host *h, tend_actor *c,
                           const char *what, const char *clause, int64_t used,
                           const tend_limit *lim) {
  if (!tend_event_on(h)) return;
  tend_event e = TEND_EVENT_INIT(TEND_EV_DIRECTIVE, c);
  e.directive = what;
  e.clause = clause;
  if (used >= 0 && lim->max >= 0) {
    e.window[0] = used;
    e.window[1] = lim->max;
    e.window[2] = lim->within == INT64_MAX ? -1 : lim->within;
  }
  e.count = c->restarts;
  tend_event_emit(L, h, &e);
}

/* A backoff supervisor's restart: the child stops and a new one starts
 * after a delay. The limits of the supervisor's own strategy count across
 * its children (Akka's BackoffOnRestartSupervisor, tend_backoff_allow):
 * past them, the supervisor stops itself (or escalates, with on_limit =
 * "escalate"). */
static void backoff_restart(lua_State *L, tend_host *h, tend_actor *p,
                            tend_actor *c, const tend_strategy *s,
                            const char *clause) {
  int64_t used = -1;
  int ok = 1;
  if (p->ext && p->ext->has_strategy)
    ok = tend_backoff_allow(L, h, p, &s->limit, &used);
  emit_directive(L, h, c, ok ? "restart" : "restart limit reached", clause,
                 used, &s->limit);
  if (ok) {
    int stops = tend_backoff_exhausted(p);
    log_directive(L, h, s, c,
                  stops ? "max_retries reached; the supervisor stops"
                        : "restart after a backoff",
                  !stops);
    tend_backoff_child_failed(L, h, p, c);
  } else if (s->on_limit == TEND_ON_LIMIT_ESCALATE) {
    log_directive(L, h, s, c, "restart limit reached; escalate", 0);
    escalate(L, h, p, c, "restart limit reached for");
  } else {
    log_directive(L, h, s, c, "restart limit reached; the supervisor stops", 0);
    stop_member(L, h, c);
    tend_backoff_give_up(L, h, p, used, "restart limit of its strategy reached",
                         TEND_STOP_NORMAL);
  }
}

/* Carries out directive d for the failed child c of p; clause says which
 * decider clause chose it ("default", "function", a kind, "*", ...) for
 * the trace; exited: c is a permanent child that stopped by itself. */
static void apply(lua_State *L, tend_host *h, tend_actor *p, tend_actor *c,
                  tend_directive d, const char *clause, int exited) {
  int top = lua_gettop(L);
  tend_strategy strategy = strategy_of(p);
  const tend_strategy *s = &strategy;
  const char *stop_words = "stop";
  if (d == TEND_RESUME && (c->flags & TEND_AF_SPENT))
    d = TEND_RESTART; /* its start failed: nothing to resume (Akka) */
  if (d == TEND_RESTART && c->restart_type == TEND_TEMPORARY &&
      s->kind == TEND_ONE_FOR_ONE && !tend_backoff_on_failure(p)) {
    d = TEND_STOP; /* what is done, in the log and the trace */
    clause = "temporary";
    stop_words = "stop (temporary: never restarted)";
  }
  if (d != TEND_RESTART)
    emit_directive(L, h, c, tend_directive_name(d), clause, -1, NULL);
  switch (d) {
    case TEND_RESUME:
      log_directive(L, h, s, c, "resume", 0);
      c->failure = TEND_FAILURE_NONE;
      tend_actor_resume_tree(h, c);
      if (c->ext && c->ext->escalated_id) { /* resumes what it escalated */
        tend_actor *e =
            tend_actor_live(h, c->ext->escalated_id, c->ext->escalated_gen);
        c->ext->escalated_id = 0;
        if (e && e->failure == TEND_FAILURE_PENDING) {
          e->failure = TEND_FAILURE_NONE;
          tend_actor_resume_tree(h, e);
        }
      }
      break;
    case TEND_STOP:
      log_directive(L, h, s, c, stop_words, 0);
      stop_group(L, h, p, c, s);
      break;
    case TEND_RESTART: {
      if (tend_backoff_on_failure(p)) { /* stop it, start anew after a delay */
        backoff_restart(L, h, p, c, s, clause);
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
      emit_directive(
          L, h, c, ok == 1 ? "restart" : "restart limit reached", clause,
          w ? tend_window_used(w, &s->limit, tend_clock_now(&h->clock)) : -1,
          &s->limit);
      if (ok != 1) {
        if (s->on_limit == TEND_ON_LIMIT_ESCALATE) {
          log_directive(L, h, s, c, "restart limit reached; escalate", 0);
          escalate(L, h, p, c, "restart limit reached for");
          break;
        }
        log_directive(L, h, s, c, "restart limit reached; stop", 0);
        stop_group(L, h, p, c, s);
        break;
      }
      if (exited) {
        tend_actor_push_path(L, h, c);
        tend_host_log(h, TEND_LOG_INFO, lua_tostring(L, -1),
                      "permanent child stopped; restart");
        lua_pop(L, 1);
      } else {
        log_directive(L, h, s, c, "restart", 1);
      }
      if (!one)
        group_restart(L, h, p, c, s);
      else if (c->state < TEND_ACTOR_STOPPING)
        tend_supervise_restart_member(L, h, c, c, TEND_EXT(error_ref));
      break;
    }
    case TEND_ESCALATE:
      log_directive(L, h, s, c, "escalate", 0);
      escalate(L, h, p, c, "failure of");
      break;
  }
  lua_settop(L, top);
}

/* The default decider (Akka classic): the kinds errkind.h marks STOP stop,
 * the rest restart (the compiler keeps only the STOP rows' tests). */
static tend_directive default_decision(const char *kind) {
#define DECIDE(id, name, directive, brief)                      \
  if (TEND_##directive == TEND_STOP && strcmp(kind, name) == 0) \
    return TEND_STOP;
  TEND_ERROR_KIND_MAP(DECIDE)
#undef DECIDE
  return TEND_RESTART;
}

static int tend_supervise_child_failed(lua_State *L, tend_host *h,
                                       tend_actor *p, const tend_msg *m) {
  tend_actor *c = tend_actor_live(h, m->sender_id, m->sender_gen);
  if (c == NULL || c->parent != p || c->failure != TEND_FAILURE_PENDING ||
      p->state != TEND_ACTOR_RUNNING)
    return -1; /* gone, or its supervisor is going itself */
  if (p->ext && p->ext->group_active && (c->flags & TEND_AF_GROUP))
    return -1; /* restarted with its group, for this failure too */
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
  if (p->role == TEND_ROLE_BACKOFF && !(p->ext && p->ext->has_strategy)) {
    /* backoff, no decider (one comes with a strategy): every failure,
     * InitError too, backs off; its kind is not read */
    apply(L, h, p, c, TEND_RESTART, "backoff", 0);
    return -1;
  }
  tend_actor_push_ext(L, c, TEND_EXT(error_ref)); /* top + 1 */
  lua_getfield(L, -1, "kind");                    /* top + 2 */
  const char *kind =
      lua_isstring(L, -1) ? lua_tostring(L, -1) : TEND_ERR_NAME(ERROR);
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
    if (strcmp(kind, TEND_ERR_NAME(INIT_ERROR)) == 0 &&
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
  } else {
    d = default_decision(kind);
    clause = "default";
  }
  apply(L, h, p, c, d, clause, 0); /* kind (clause) lives until the settop */
  lua_settop(L, top);
  return -1;
}

static void tend_supervise_decided(lua_State *L, tend_host *h, tend_actor *p,
                                   int status, int idx) {
  tend_actor_ext *x = p->ext;
  tend_actor *c =
      x ? tend_actor_live(h, x->deciding_id, x->deciding_gen) : NULL;
  if (x) x->deciding_id = 0;
  if (c == NULL || c->failure != TEND_FAILURE_PENDING || c->parent != p) return;
  tend_directive d = TEND_ESCALATE;
  const char *clause = "function";
  if (status != LUA_OK && status != LUA_YIELD) {
    tend_supervise_log_hook(L, h, p, "decider", idx);
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

/* ------------------------------------------------------------ driver */

static int on_child_failed(lua_State *L, tend_host *h, tend_actor *p,
                           const tend_msg *m) {
  return tend_supervise_child_failed(L, h, p, m);
}

static int on_group_step(lua_State *L, tend_host *h, tend_actor *p,
                         const tend_msg *m) {
  (void)m;
  return tend_supervise_group_step(L, h, p);
}

static int decide_done(lua_State *L, tend_host *h, tend_actor *p, int status,
                       int idx) {
  tend_supervise_decided(
      L, h, p, status == TEND_OP_ABANDONED ? LUA_ERRRUN : status, idx);
  return -1;
}

const tend_driver tend_supervise_driver = {
    .name = "supervise",
    .messages =
        (const tend_driver_message[]){{TEND_MSG_CHILD_FAILED, on_child_failed},
                                      {TEND_MSG_CHILD_EXITED, on_child_failed},
                                      {TEND_MSG_GROUP_STEP, on_group_step},
                                      {0}},
    .ops = (const tend_driver_op[]){{TEND_OP_DECIDE, decide_done}, {0}}};
