/* failure: an actor failed (see failure.h). */
#include "runtime/core/failure.h"

#include "runtime/core/error.h"
#include "runtime/core/event.h"
#include "runtime/core/lifecycle.h"
#include "runtime/core/runq.h"
#include "runtime/core/send.h"

void tend_actor_suspend_tree(tend_actor *a) {
  if (a->suspends < UINT8_MAX) a->suspends++;
  for (tend_actor *c = a->first_child; c; c = c->next_sibling)
    tend_actor_suspend_tree(c);
}

void tend_actor_resume_tree(tend_host *h, tend_actor *a) {
  if (a->suspends > 0) a->suspends--;
  if (tend_actor_has_work(a)) tend_runq_push(h, a);
  for (tend_actor *c = a->first_child; c; c = c->next_sibling)
    tend_actor_resume_tree(h, c);
}

/* Does a driver handle a's failure (the error at err) itself? (A typed
 * actor's own clauses, without its supervisor.) */
static int handled_by_driver(lua_State *L, tend_host *h, tend_actor *a,
                             int err) {
  for (uint32_t i = 0; i < h->at[TEND_AT_FAILED].n; i++) {
    lua_pushvalue(L, err);
    int handled = h->at[TEND_AT_FAILED].v[i]->failed(L, h, a);
    lua_settop(L, err);
    if (handled) return 1;
  }
  return 0;
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
    tend_host_fatal(L, h, err, "");
    tend_actor_stop(L, h, a, TEND_STOP_FAILURE);
  } else if (a->parent == NULL) { /* escalated past a guardian */
    tend_host_fatal(L, h, err, "failure escalated past the guardian: ");
  } else if (a->state >= TEND_ACTOR_STOPPING ||
             a->failure == TEND_FAILURE_PENDING) {
    /* already on its way out, or already waiting for a decision */
  } else if (a->role == TEND_ROLE_TASK) {
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
    if (!handled_by_driver(L, h, a, err)) {
      tend_actor_suspend_failed(a);
      tend_actor_post(h, a->parent, TEND_MSG_CHILD_FAILED, a);
    }
  }
  lua_settop(L, err - 1);
}

void tend_actor_suspend_failed(tend_actor *a) {
  if (a->failure == TEND_FAILURE_PENDING) return;
  a->failure = TEND_FAILURE_PENDING;
  tend_actor_suspend_tree(a);
}

void tend_actor_init_failed(lua_State *L, tend_host *h, tend_actor *a,
                            tend_actor_op op, int idx) {
  a->flags |= TEND_AF_SPENT; /* no instance started: no hook of it runs */
  tend_error_wrap(
      L, idx, TEND_ERR_NAME(INIT_ERROR),
      op == TEND_OP_FACTORY ? "factory failed" : "pre_start failed");
  tend_actor_fail(L, h, a);
}

int tend_actor_exited(lua_State *L, tend_host *h, tend_actor *a) {
  tend_actor *p = a->parent;
  if (a->restart_type != TEND_PERMANENT || p == NULL || h->shutdown ||
      p->state != TEND_ACTOR_RUNNING || a->failure == TEND_FAILURE_PENDING ||
      a->role == TEND_ROLE_TASK)
    return 0;
  tend_error_new(L, TEND_ERR_NAME(STOPPED),
                 "a permanent child stopped; it is restarted");
  tend_actor_set_ext(L, a, TEND_EXT(error_ref));
  tend_actor_suspend_failed(a);
  tend_actor_post(h, p, TEND_MSG_CHILD_EXITED, a);
  return 1;
}
