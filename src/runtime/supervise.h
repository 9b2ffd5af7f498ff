/* supervise: what happens when an actor fails (design §5.1-§5.4): the
 * failure is reported to the supervisor, its strategy's decider picks a
 * directive, and the directive is carried out: resume, the restart
 * sequence, stop, or escalation. Every state change of a restart is made
 * here. All of it runs in C; Lua only supplies the decider function. */
#ifndef TEND_SUPERVISE_H
#define TEND_SUPERVISE_H

#include <lua.h>

#include "runtime/host.h"

/* Each of these runs in the worker during the actor's turn. Those that
 * return int push a Lua call (function and arguments) and return its
 * argument count, or return -1 when nothing is to be called. */

/* The actor's code raised the error at the top of L's stack (popped). */
void tend_actor_fail(lua_State *L, tend_host *h, tend_actor *a);
/* The factory or pre_start (op) raised the error at idx: InitError. A
 * restart that fails this way leaves the actor failed, in its old state. */
void tend_supervise_init_failed(lua_State *L, tend_host *h, tend_actor *a,
                                tend_actor_op op, int idx);

/* CHILD_FAILED or CHILD_EXITED in supervisor p: consult the strategy. */
int tend_supervise_child_failed(lua_State *L, tend_host *h, tend_actor *p,
                                const tend_msg *m);
/* The decider returned (status; result or error at idx). */
void tend_supervise_decided(lua_State *L, tend_host *h, tend_actor *p,
                            int status, int idx);
/* A permanent child stopped by itself: report it for a restart. Returns 1
 * if reported (the stop is replaced), 0 if it should just stop. */
int tend_supervise_normal_exit(lua_State *L, tend_host *h, tend_actor *a);

/* RESTART in a: begin the restart sequence. */
int tend_supervise_restart(lua_State *L, tend_host *h, tend_actor *a,
                           tend_restart_for why);
/* pre_restart is done (or a child died while the restart waits). */
int tend_supervise_restart_continue(lua_State *L, tend_host *h, tend_actor *a);
/* GROUP_STEP in p: a member of its group restart is held, rebuilt or
 * gone; the next one stops, or all are rebuilt in start order. */
int tend_supervise_group_step(lua_State *L, tend_host *h, tend_actor *p);
/* RESTART_GO in a held member: its group is stopped; build it anew. */
int tend_supervise_restart_go(lua_State *L, tend_host *h, tend_actor *a);
/* The factory built the new instance: post_restart (default pre_start). */
int tend_supervise_restarted(lua_State *L, tend_host *h, tend_actor *a);
/* post_restart is done: children restarted, the actor resumes. */
void tend_supervise_restart_done(lua_State *L, tend_host *h, tend_actor *a);

/* a restarts itself (typed supervision, backoff): mark it failed and
 * suspend its subtree (once). */
void tend_supervise_suspend_failed(tend_actor *a);
/* Queues a RESTART_SELF of a (its failure is pending). */
void tend_supervise_restart_self(tend_host *h, tend_actor *a);

#endif
