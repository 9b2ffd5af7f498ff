/* typed: typed-style supervision (see typed.h). */
#include "runtime/supervision/typed.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/supervision/backoff_sup.h"
#include "runtime/core/error.h"
#include "runtime/core/event.h"
#include "runtime/core/lifecycle.h"
#include "runtime/core/failure.h"
#include "runtime/supervision/supervise.h"
#include "runtime/core/timers.h"

static tend_typed *T(const tend_actor *a) {
  return a->ext ? a->ext->typed : NULL;
}

static const char *const names[] = {
    "restart", "resume", "stop", "restart_with_limit", "restart_with_backoff"};

const char *tend_typed_name(tend_typed_kind k) {
  return names[k];
}

/* The backoff starts over: delays from the first, restarts 0. */
static void reset(tend_typed *ty) {
  tend_delay_state zero = {0, 0, 1};
  ty->delays = zero;
  ty->backoff_restarts = 0;
}

static void free_typed(tend_typed *ty) {
  if (ty == NULL) return;
  for (uint32_t i = 0; i < ty->n; i++) free(ty->c[i].kind);
  free(ty->c);
  free(ty);
}

/* A copy of the n clauses at c (kinds too), or NULL. */
static tend_typed *copy(const tend_typed_clause *c, uint32_t n) {
  tend_typed *ty = calloc(1, sizeof *ty);
  if (ty == NULL) return NULL;
  ty->delays.slot = 1;
  ty->c = calloc((size_t)n + 1, sizeof *ty->c);
  if (ty->c == NULL) goto fail;
  for (; ty->n < n; ty->n++) {
    ty->c[ty->n] = c[ty->n];
    ty->c[ty->n].kind = strdup(c[ty->n].kind);
    if (ty->c[ty->n].kind == NULL) goto fail;
  }
  return ty;
fail:
  free_typed(ty);
  return NULL;
}

tend_actor *tend_typed_spawn(lua_State *L, tend_host *h, tend_actor *parent,
                             int factory, const tend_typed_clause *c,
                             uint32_t n, const tend_spawn_opts *o) {
  tend_typed *ty = copy(c, n);
  if (ty == NULL) luaL_error(L, "out of memory");
  tend_actor *a = tend_actor_spawn(L, h, parent, factory, o);
  tend_actor_ext *x = tend_actor_ext_get(a);
  if (x == NULL) {
    free_typed(ty);
    tend_actor_stop(L, h, a, TEND_STOP_BY_PARENT);
    luaL_error(L, "out of memory");
  }
  x->typed = ty;
  a->role = TEND_ROLE_TYPED;
  return a;
}

static const tend_typed_clause *match(const tend_typed *ty, const char *kind) {
  for (uint32_t i = 0; i < ty->n; i++)
    if (strcmp(ty->c[i].kind, "*") == 0 || strcmp(ty->c[i].kind, kind) == 0)
      return &ty->c[i];
  return NULL;
}

/* RESTART_WITH_BACKOFF: wait the next delay, suspended, then restart. */
static void back_off(lua_State *L, tend_host *h, tend_actor *a,
                     const tend_typed_action *act) {
  tend_typed *ty = T(a);
  if (act->max_restarts >= 0 &&
      ty->backoff_restarts >= (uint64_t)act->max_restarts) {
    tend_backoff_give_up(L, h, a, ty->backoff_restarts, "max_restarts reached",
                         TEND_STOP_FAILURE);
    return;
  }
  if (tend_reset_trap_failed(&ty->trap)) {
    tend_actor_push_path(L, h, a);
    tend_backoff_warn_trap(
        h, lua_tostring(L, -1),
        act->reset_after_ns ? act->reset_after_ns : act->delays.min_ns,
        "reset_after (:with_reset_after(s))");
    lua_pop(L, 1);
  }
  ty->backoff_restarts++;
  int64_t delay = tend_backoff_next_delay(L, h, a, &act->delays, &ty->delays,
                                          ty->backoff_restarts);
  ty->incarnation++;
  ty->waiting = 1;
  ty->stash = act->stash;
  a->ext->hold = ty->stash; /* its mailbox keeps the newest */
  tend_actor_suspend_failed(a);
  tend_timer *t =
      tend_timer_arm(L, h, TEND_TIMER_TYPED_RESTART, a, delay, 0, 0);
  if (t) t->tag = ty->incarnation;
}

int tend_typed_fail(lua_State *L, tend_host *h, tend_actor *a) {
  tend_typed *ty = T(a);
  if (ty == NULL || ty->waiting) return 0;
  int err = lua_gettop(L);
  lua_getfield(L, err, "kind");
  const char *kind =
      lua_isstring(L, -1) ? lua_tostring(L, -1) : TEND_ERR_NAME(ERROR);
  const tend_typed_clause *c = match(ty, kind);
  lua_pop(L, 1);
  if (c == NULL) return 0;
  const tend_typed_action *act = &c->action;
  int what = act->what;
  if (what == TEND_TYPED_RESUME && (a->flags & TEND_AF_SPENT))
    what = TEND_TYPED_RESTART; /* its start failed: nothing to resume */
  tend_event e = TEND_EVENT_INIT(TEND_EV_DIRECTIVE, a);
  e.directive = names[what];
  e.clause = c->kind;
  tend_event_emit(L, h, &e);
  switch (what) {
    case TEND_TYPED_RESUME: break;
    case TEND_TYPED_STOP: tend_actor_stop(L, h, a, TEND_STOP_FAILURE); break;
    case TEND_TYPED_RESTART_WITH_LIMIT:
      if (tend_window_allow(&a->ext->child_window, &act->limit,
                            tend_clock_now(&h->clock)) != 1) {
        tend_backoff_give_up(L, h, a, -1, "restart limit reached",
                             TEND_STOP_FAILURE);
        break;
      }
      /* fall through */
    case TEND_TYPED_RESTART:
      tend_actor_suspend_failed(a);
      tend_supervise_restart_self(h, a);
      break;
    case TEND_TYPED_RESTART_WITH_BACKOFF: back_off(L, h, a, act); break;
  }
  if (tend_host_logs(h, TEND_LOG_WARN)) { /* one warn line, as supervise.c */
    int gave_up = what != TEND_TYPED_STOP && a->state >= TEND_ACTOR_STOPPING;
    unsigned begins = /* a restart it begins counts already (supervise.c) */
        what != TEND_TYPED_RESUME && what != TEND_TYPED_STOP && !gave_up;
    tend_actor_push_path(L, h, a); /* what was actually done */
    tend_error_describe(L, err);
    tend_host_log(h, TEND_LOG_WARN, lua_tostring(L, -2),
                  "%s; %s%s (restarts %u)", lua_tostring(L, -1), names[what],
                  gave_up ? ": limit reached; stop" : "",
                  (unsigned)a->restarts + begins);
    lua_pop(L, 2);
  }
  lua_settop(L, err - 1);
  return 1;
}

void tend_typed_restarted(lua_State *L, tend_host *h, tend_actor *a) {
  tend_typed *ty = T(a);
  if (ty == NULL) return;
  if (ty->waiting) { /* restarted by its parent while it waited: the wait */
    ty->waiting = 0; /* is over (its restart timer went with the restart) */
    a->ext->hold = 0;
    ty->incarnation++;
  }
  if (ty->backoff_restarts == 0) return;
  /* reset_after: the first backoff clause's (it scheduled the restart) */
  for (uint32_t i = 0; i < ty->n; i++) {
    const tend_typed_action *act = &ty->c[i].action;
    if (act->what != TEND_TYPED_RESTART_WITH_BACKOFF) continue;
    int64_t after =
        act->reset_after_ns ? act->reset_after_ns : act->delays.min_ns;
    tend_timer *t =
        tend_timer_arm(L, h, TEND_TIMER_TYPED_RESET, a, after, 0, 0);
    if (t) t->tag = ty->incarnation;
    break;
  }
}

int tend_typed_reset(tend_actor *a) {
  tend_typed *ty = T(a);
  if (ty == NULL) return 0;
  reset(ty);
  return 1;
}

void tend_typed_free(tend_actor *a) {
  if (a->ext == NULL) return;
  free_typed(a->ext->typed);
  a->ext->typed = NULL;
}

/* The backoff delay is over: the actor restarts itself. */
static void on_restart(lua_State *L, tend_host *h, tend_timer *t,
                       tend_actor *a) {
  (void)L;
  tend_typed *ty = a ? T(a) : NULL;
  if (ty && ty->waiting && t->tag == ty->incarnation) {
    ty->waiting = 0;
    a->ext->hold = 0;
    tend_supervise_restart_self(h, a);
  }
}

/* Incarnation `tag` ran long enough without failing: the backoff resets. */
static void on_reset(lua_State *L, tend_host *h, tend_timer *t, tend_actor *a) {
  tend_typed *ty = a ? T(a) : NULL;
  if (ty && t->tag == ty->incarnation && !ty->waiting &&
      a->failure != TEND_FAILURE_PENDING) {
    if (ty->backoff_restarts > 0) tend_reset_trap_reset(&ty->trap);
    reset(ty);
    tend_event e = TEND_EVENT_INIT(TEND_EV_RESET, a);
    tend_event_emit(L, h, &e);
  }
}

static void release(lua_State *L, tend_host *h, tend_actor *a) {
  (void)L;
  (void)h;
  tend_typed_free(a);
}

static int failed(lua_State *L, tend_host *h, tend_actor *a) {
  return (a->role == TEND_ROLE_TYPED) && tend_typed_fail(L, h, a);
}

const tend_driver tend_typed_driver = {
    .name = "typed",
    .timers =
        (const tend_driver_timer[]){{TEND_TIMER_TYPED_RESTART, on_restart},
                                    {TEND_TIMER_TYPED_RESET, on_reset},
                                    {0}},
    .death = release,
    .release = release,
    .failed = failed};
