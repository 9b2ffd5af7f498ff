/* typed: typed-style supervision (design §3.4, Akka Typed's
 * Behaviors.supervise): an actor that handles its own failures by clauses
 * matched on the error kind, first match wins: restart, resume, stop,
 * restart with a limit, restart with backoff (the actor waits, suspended,
 * then restarts itself; its mailbox may stash meanwhile). A failure no
 * clause matches goes to the supervisor as usual. */
#ifndef TEND_TYPED_H
#define TEND_TYPED_H

#include <lua.h>

#include "base/backoff.h"
#include "base/strategy.h"
#include "runtime/core/host.h"
#include "runtime/core/lifecycle.h"
#include "runtime/tend.h" /* the clauses */

struct tend_typed {
  uint32_t n; /* clauses, first match wins */
  tend_typed_clause *c;
  tend_delay_state delays;   /* backoff restarts */
  uint32_t incarnation;      /* bumped at each failure; timers carry it */
  uint32_t backoff_restarts; /* restarts with backoff since the last reset */
  int waiting;               /* 1: waiting for a backoff restart */
  uint32_t stash;            /* mailbox bound while waiting, 0 = none */
  tend_reset_trap trap;      /* backoff failures in a row after a reset */
};

/* The name of a clause's action ("restart_with_backoff", ...). */
const char *tend_typed_name(tend_typed_kind k);
/* Spawns a typed actor under parent: factory at stack index factory, n
 * clauses whose kinds are copied (options o, all checked). Pushes its ref;
 * raises when out of memory, nothing spawned. */
tend_actor *tend_typed_spawn(lua_State *L, tend_host *h, tend_actor *parent,
                             int factory, const tend_typed_clause *c,
                             uint32_t n, const tend_spawn_opts *o);
/* The error at the top of L failed typed actor a: returns 1 if a clause
 * handled it (error popped), 0 to go on as usual (error left). */
int tend_typed_fail(lua_State *L, tend_host *h, tend_actor *a);
/* A typed actor's restart completed. */
void tend_typed_restarted(lua_State *L, tend_host *h, tend_actor *a);
/* ctx:reset_backoff() from typed actor a: returns 1, or 0 if a is not
 * typed. */
int tend_typed_reset(tend_actor *a);
/* Frees a's typed state (at death or close). */
void tend_typed_free(tend_actor *a);
/* Its timer kinds and failures (driver.h). */
extern const tend_driver tend_typed_driver;

#endif
