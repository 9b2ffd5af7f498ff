/* backoff_sup: backoff supervisors (design §5.5): an actor with one child
 * that forwards its messages to the child; while the child is stopped it
 * drops them to dead letters, answers them, or stashes them. When the
 * child fails (on_failure) or stops (on_stop), it waits the next delay and
 * starts a new child. Timers carry the incarnation they were set for. */
#ifndef TEND_BACKOFF_SUP_H
#define TEND_BACKOFF_SUP_H

#include <lua.h>

#include "base/backoff.h"
#include "runtime/core/host.h"
#include "runtime/core/lifecycle.h"
#include "runtime/tend.h" /* tend_backoff_child */

/* Each *_ref is a registry ref owned here (LUA_NOREF when unset),
 * released by tend_backoff_free. */
struct tend_backoff_sup {
  tend_backoff_cfg cfg;
  tend_delay_state delays; /* where the delay sequence stands */
  uint32_t incarnation;    /* children started so far; timers carry it */
  uint32_t restarts;       /* restarts scheduled so far (max_retries) */
  uint32_t child_id;       /* the current child, 0 while stopped */
  uint32_t child_gen;
  int restart_pending;     /* on_failure: the child stops for a restart */
  int final_stop_received; /* on_stop: the final stop message went by */
  tend_queue stash;        /* messages kept while the child is stopped */
  uint32_t n_stash;
  int factory_ref;      /* the child's factory */
  int args_ref;         /* its spawn args, or LUA_NOREF */
  int name_ref;         /* its name */
  int reply_ref;        /* reply_while_stopped, or LUA_NOREF */
  int final_stop_ref;   /* the final-stop predicate, or LUA_NOREF */
  uint32_t handler_id;  /* handler_while_stopped: the actor that takes the */
  uint32_t handler_gen; /* messages while the child is stopped, or 0 */
  tend_reset_trap trap; /* failures in a row after an auto reset */
  /* the current child's auto reset, or NULL: a new child's replaces it
   * (one armed at most) */
  tend_timer *reset_timer;
};

/* Spawns a backoff supervisor under parent (options o, all checked);
 * pushes its ref. Raises (naming fn) when it cannot, nothing spawned. */
tend_actor *tend_backoff_spawn(lua_State *L, tend_host *h, tend_actor *parent,
                               const tend_backoff_cfg *cfg,
                               const tend_backoff_child *child,
                               const tend_spawn_opts *o, const char *fn);
/* May backoff supervisor a restart its child once more under limit lim
 * (its strategy's)? As Akka's BackoffOnRestartSupervisor: the limit counts
 * the restarts since the last reset (those the delays count); a finite
 * `within` schedules, at the first restart after a reset, a reset `within`
 * later that happens only if that restart is still the only one. Returns
 * 1 or 0; *used: the restarts counted, this one included when allowed. */
int tend_backoff_allow(lua_State *L, tend_host *h, tend_actor *a,
                       const tend_limit *lim, int64_t *used);
/* Has a's child used up max_retries? (its next failure stops a) */
int tend_backoff_exhausted(const tend_actor *a);
/* Is a a backoff supervisor in on_failure mode? */
int tend_backoff_on_failure(const tend_actor *a);
/* The number of children backoff supervisor a has started. */
uint32_t tend_backoff_incarnation(const tend_actor *a);
/* START of a backoff supervisor: start the first child. */
void tend_backoff_start(lua_State *L, tend_host *h, tend_actor *a);
/* A user message (at stack index msg) for a backoff supervisor. */
void tend_backoff_receive(lua_State *L, tend_host *h, tend_actor *a, int msg,
                          uint32_t sender_id, uint32_t sender_gen);
/* The directive for a failed child of a backoff supervisor is restart:
 * returns 1 when the backoff handles it (on_failure). */
int tend_backoff_child_failed(lua_State *L, tend_host *h, tend_actor *p,
                              tend_actor *c);
/* A child of backoff supervisor p died. */
void tend_backoff_child_died(lua_State *L, tend_host *h, tend_actor *p,
                             tend_actor *c);
/* ctx:reset_backoff() from a: returns 1 if a is the child of a backoff
 * supervisor (its backoff starts over), else 0. */
int tend_backoff_reset(lua_State *L, tend_host *h, tend_actor *a);
/* A backoff supervisor restarted by its parent (supervise.c): fresh
 * delays, a new child. */
void tend_backoff_restarted(lua_State *L, tend_host *h, tend_actor *a);
/* tend.backoff.reset(a): a's backoff starts over (Akka's Reset). */
void tend_backoff_reset_sup(lua_State *L, tend_host *h, tend_actor *a);
/* Frees the backoff state of a (at death or close). */
void tend_backoff_free(lua_State *L, tend_host *h, tend_actor *a);
/* The next delay of a's backoff (c, s), with its backoff event carrying
 * the restart count n. */
int64_t tend_backoff_next_delay(lua_State *L, tend_host *h, tend_actor *a,
                                const tend_delay_cfg *c, tend_delay_state *s,
                                int64_t n);
/* a gives up (a give_up event with count, < 0 for none), then stops. */
void tend_backoff_give_up(lua_State *L, tend_host *h, tend_actor *a,
                          int64_t count, const char *detail,
                          tend_stop_reason why);
/* The warn line, once, of a reset_after shorter than the child's usual
 * run (base/backoff.h's trap): a's path; how to set it is `how`. */
void tend_backoff_warn_trap(tend_host *h, const char *path,
                            int64_t reset_after_ns, const char *how);
/* Its timer kinds and the backoff supervisors it runs (driver.h). */
extern const tend_driver tend_backoff_driver;

#endif
