/* restart: the restart sequence of one actor (design §5.1):
 * pre_restart (by default its children stop, then post_stop), the new
 * instance from its factory, post_restart (by default pre_start), then its
 * surviving children restart and it resumes. A failure of the factory or
 * pre_start leaves it failed in its old instance (InitError), whose hooks
 * do not run again (TEND_AF_SPENT); the next instance built after that
 * starts with pre_start, as a first one (Akka's creation anew). The
 * scheduler reaches it through its driver: RESTART, RESTART_SELF,
 * RESTART_GO and CHILD_GONE, and the ops of the sequence. */
#include "runtime/supervision/supervise.h"

#include "runtime/core/failure.h"
#include "runtime/core/lifecycle.h"
#include "runtime/core/promise.h"
#include "runtime/core/runq.h"
#include "runtime/core/sched.h"
#include "runtime/core/send.h"
#include "runtime/core/timers.h"
#include "runtime/supervision/backoff_sup.h"
#include "runtime/supervision/typed.h"

static void tend_supervise_init_failed(lua_State *L, tend_host *h,
                                       tend_actor *a, tend_actor_op op,
                                       int idx);
static int tend_supervise_restart(lua_State *L, tend_host *h, tend_actor *a,
                                  tend_restart_for why);
static int tend_supervise_restart_continue(lua_State *L, tend_host *h,
                                           tend_actor *a);
static int tend_supervise_restart_go(lua_State *L, tend_host *h, tend_actor *a);
static int tend_supervise_restarted(lua_State *L, tend_host *h, tend_actor *a,
                                    int created);
static void tend_supervise_restart_done(lua_State *L, tend_host *h,
                                        tend_actor *a);

/* a, a member of its parent's group restart, is held, rebuilt or back to
 * its old instance: the group goes on. */
static void group_member_moved(tend_host *h, tend_actor *a) {
  if ((a->flags & TEND_AF_GROUP) && a->parent)
    tend_actor_post(h, a->parent, TEND_MSG_GROUP_STEP, a);
}

static void tend_supervise_init_failed(lua_State *L, tend_host *h,
                                       tend_actor *a, tend_actor_op op,
                                       int idx) {
  if (a->state == TEND_ACTOR_RESTARTING) { /* back to the old, failed */
    a->state = TEND_ACTOR_RUNNING;
    a->restart = TEND_RESTART_NONE;
    a->failure = TEND_FAILURE_NONE;
    if (a->suspends) a->suspends--; /* the new failure suspends it again */
    group_member_moved(h, a);
  }
  tend_actor_init_failed(L, h, a, op, idx);
}

/* ------------------------------------------------------------ restart */

/* Stops every child for a restart (default pre_restart), youngest first. */
static void stop_children(lua_State *L, tend_host *h, tend_actor *a) {
  for (tend_actor *c = a->last_child; c; c = c->prev_sibling)
    tend_actor_stop(L, h, c, TEND_STOP_SHUTDOWN);
}

static int tend_supervise_restart(lua_State *L, tend_host *h, tend_actor *a,
                                  tend_restart_for why) {
  if (a->state != TEND_ACTOR_RUNNING && a->state != TEND_ACTOR_STARTING)
    return -1;
  tend_supervise_group_abandon(h, a);
  a->state = TEND_ACTOR_RESTARTING;
  a->restart = TEND_RESTART_PRE;
  a->restart_for = (uint8_t)why;
  if (a->wait != TEND_WAIT_NONE) tend_actor_end_wait(L, h, a);
  tend_promise_fiber_end(L, h, a); /* before its timers go (promise.h) */
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

/* The restart builds a's new instance (its old one and its children are
 * gone). */
static int build(lua_State *L, tend_host *h, tend_actor *a) {
  tend_lifecycle_count_restart(L, h, a);
  if (a->role == TEND_ROLE_BACKOFF) { /* no factory: a fresh child instead */
    tend_supervise_restart_done(L, h, a);
    tend_backoff_restarted(L, h, a);
    return -1;
  }
  a->restart = TEND_RESTART_FACTORY;
  for (tend_actor *c = a->first_child; c; c = c->next_sibling)
    c->flags |= TEND_AF_SURVIVOR; /* restarted after the new instance */
  return tend_lifecycle_push_factory(L, h, a);
}

static int tend_supervise_restart_continue(lua_State *L, tend_host *h,
                                           tend_actor *a) {
  if (a->state != TEND_ACTOR_RESTARTING) return -1;
  a->restart = TEND_RESTART_CHILDREN;
  for (tend_actor *c = a->first_child; c; c = c->next_sibling)
    if (c->state == TEND_ACTOR_STOPPING) return -1; /* CHILD_GONE resumes */
  if (a->flags & TEND_AF_GROUP) { /* stopped: held until its group is */
    a->restart = TEND_RESTART_HELD;
    a->flags |= TEND_AF_HELD;
    group_member_moved(h, a);
    return -1;
  }
  return build(L, h, a);
}

static int tend_supervise_restart_go(lua_State *L, tend_host *h,
                                     tend_actor *a) {
  if (!(a->flags & TEND_AF_HELD)) return -1;
  a->flags &= ~(TEND_AF_HELD | TEND_AF_GROUP);
  if (a->state != TEND_ACTOR_RESTARTING) return -1;
  return build(L, h, a);
}

/* created: no instance had started before this one (Akka's creation
 * anew): pre_start runs, not post_restart. */
static int tend_supervise_restarted(lua_State *L, tend_host *h, tend_actor *a,
                                    int created) {
  a->restart = TEND_RESTART_POST;
  if (!created && tend_actor_push_hook(L, h, a, "post_restart")) {
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

static void tend_supervise_restart_done(lua_State *L, tend_host *h,
                                        tend_actor *a) {
  if (a->state != TEND_ACTOR_RESTARTING) return;
  a->state = TEND_ACTOR_RUNNING;
  a->restart = TEND_RESTART_NONE;
  for (tend_actor *c = a->first_child; c; c = c->next_sibling) {
    if (!(c->flags & TEND_AF_SURVIVOR)) continue; /* spawned by the new one */
    c->flags &= ~TEND_AF_SURVIVOR;
    if (c->state >= TEND_ACTOR_STOPPING) continue;
    tend_supervise_restart_member(
        L, h, c, a, TEND_EXT(cause_ref)); /* survivors too (Akka) */
  }
  if (a->restart_for == TEND_RESTART_FOR_SELF) {
    a->failure = TEND_FAILURE_NONE;
    tend_actor_resume_tree(h, a);
  }
  if (a->flags & TEND_AF_GROUP_SUSPENDED) {
    a->flags &= ~TEND_AF_GROUP_SUSPENDED;
    tend_actor_resume_tree(h, a);
  }
  if (a->role == TEND_ROLE_TYPED) tend_typed_restarted(L, h, a);
  if (tend_actor_has_work(a)) tend_runq_push(h, a);
  group_member_moved(h, a); /* a new group restart took it in meanwhile */
}

/* ------------------------------------------------------------ driver */

static int ok(int status) {
  return status == LUA_OK || status == LUA_YIELD;
}

/* A child died while a's restart waits for its children to stop. */
static int on_child_gone(lua_State *L, tend_host *h, tend_actor *a,
                         const tend_msg *m) {
  (void)m;
  if (a->state == TEND_ACTOR_RESTARTING && a->restart == TEND_RESTART_CHILDREN)
    return tend_supervise_restart_continue(L, h, a);
  return -1;
}

static int on_restart_go(lua_State *L, tend_host *h, tend_actor *a,
                         const tend_msg *m) {
  (void)m;
  return tend_supervise_restart_go(L, h, a);
}

static int on_restart(lua_State *L, tend_host *h, tend_actor *a,
                      const tend_msg *m) {
  return tend_supervise_restart(L, h, a,
                                m->kind == TEND_MSG_RESTART_SELF
                                    ? TEND_RESTART_FOR_SELF
                                    : TEND_RESTART_FOR_GROUP);
}

/* A hook of the restart returned: a failure is logged, and the restart
 * goes on; a call abandoned mid-way ends the actor. */
static int hook_done(lua_State *L, tend_host *h, tend_actor *a, int status,
                     int idx, const char *hook) {
  if (status == TEND_OP_ABANDONED) {
    tend_actor_die(L, h, a);
    return -1;
  }
  if (!ok(status)) tend_supervise_log_hook(L, h, a, hook, idx);
  return 0;
}

static int pre_restart_done(lua_State *L, tend_host *h, tend_actor *a,
                            int status, int idx) {
  if (hook_done(L, h, a, status, idx, "pre_restart") < 0) return -1;
  return tend_supervise_restart_continue(L, h, a);
}

static int restart_stop_done(lua_State *L, tend_host *h, tend_actor *a,
                             int status, int idx) {
  if (hook_done(L, h, a, status, idx, "post_stop") < 0) return -1;
  return tend_supervise_restart_continue(L, h, a);
}

static int post_restart_done(lua_State *L, tend_host *h, tend_actor *a,
                             int status, int idx) {
  if (hook_done(L, h, a, status, idx, "post_restart") < 0) return -1;
  tend_supervise_restart_done(L, h, a);
  return -1;
}

/* The factory of a restart returned: the new instance, or InitError. */
static int factory_done(lua_State *L, tend_host *h, tend_actor *a, int status,
                        int idx) {
  if (!ok(status) || !tend_sched_adopt(L, a, idx)) {
    tend_supervise_init_failed(L, h, a, TEND_OP_FACTORY, idx);
    return -1;
  }
  int created = (a->flags & TEND_AF_SPENT) != 0;
  a->flags &= ~TEND_AF_SPENT; /* a new instance, its hooks live */
  return tend_supervise_restarted(L, h, a, created);
}

/* pre_start (the default post_restart) of a restart returned. */
static int pre_start_done(lua_State *L, tend_host *h, tend_actor *a, int status,
                          int idx) {
  if (!ok(status)) {
    tend_supervise_init_failed(L, h, a, TEND_OP_PRE_START, idx);
    return -1;
  }
  tend_supervise_restart_done(L, h, a);
  return -1;
}

const tend_driver tend_restart_driver = {
    .name = "restart",
    .messages =
        (const tend_driver_message[]){{TEND_MSG_CHILD_GONE, on_child_gone},
                                      {TEND_MSG_RESTART, on_restart},
                                      {TEND_MSG_RESTART_SELF, on_restart},
                                      {TEND_MSG_RESTART_GO, on_restart_go},
                                      {0}},
    .ops = (const tend_driver_op[]){{TEND_OP_PRE_RESTART, pre_restart_done},
                                    {TEND_OP_RESTART_STOP, restart_stop_done},
                                    {TEND_OP_POST_RESTART, post_restart_done},
                                    {TEND_OP_RESTART_FACTORY, factory_done},
                                    {TEND_OP_RESTART_PRE_START, pre_start_done},
                                    {0}}};
