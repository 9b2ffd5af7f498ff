/* backoff_sup: the backoff supervisor (DESIGN §5.5) and typed-style
 * supervision without an intermediate actor (§3.4), run in C.
 *
 * A backoff supervisor is an actor with the BACKOFF flag and one child. It
 * forwards every message to the current child; while the child is stopped
 * it drops them to dead letters, answers them, or stashes them. When the
 * child fails (on_failure) or stops (on_stop), it waits the next delay and
 * starts a new child. Timers carry the incarnation they were set for. */
#ifndef TEND_BACKOFF_SUP_H
#define TEND_BACKOFF_SUP_H

#include <lua.h>

#include "backoff.h"
#include "host.h"

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
};

/* One clause of tend.supervise(f):on_failure(kind, strategy). */
typedef enum tend_typed_kind {
  TEND_TYPED_RESTART,
  TEND_TYPED_RESUME,
  TEND_TYPED_STOP,
  TEND_TYPED_RESTART_WITH_LIMIT,
  TEND_TYPED_RESTART_WITH_BACKOFF
} tend_typed_kind;

typedef struct tend_typed_clause {
  char *kind; /* error kind, or "*" */
  tend_typed_kind what;
  tend_limit limit;       /* RESTART_WITH_LIMIT */
  tend_delay_cfg delays;  /* RESTART_WITH_BACKOFF */
  int64_t reset_after_ns; /* RESTART_WITH_BACKOFF: 0 = min_backoff */
  int64_t max_restarts;   /* RESTART_WITH_BACKOFF: -1 unlimited */
  uint32_t stash;         /* RESTART_WITH_BACKOFF: 0 = unbounded */
} tend_typed_clause;

struct tend_typed {
  uint32_t n; /* clauses, first match wins */
  tend_typed_clause *c;
  tend_delay_state delays;   /* backoff restarts */
  uint32_t incarnation;      /* bumped at each failure; timers carry it */
  uint32_t backoff_restarts; /* restarts with backoff since the last reset */
  int waiting;               /* 1: waiting for a backoff restart */
  uint32_t stash;            /* mailbox bound while waiting, 0 = none */
};

/* tend.spawn(spec [, opts]) / ctx:spawn for a backoff spec at 1+off, or a
 * supervised spec: pushes the ref. Raises on bad input, nothing spawned. */
int tend_backoff_spawn(lua_State *L, tend_actor *parent, int off,
                       const char *fn);
int tend_typed_spawn(lua_State *L, tend_actor *parent, int off, const char *fn);
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
/* ctx:reset_backoff() from a (a child of a backoff supervisor). */
void tend_backoff_reset(lua_State *L, tend_host *h, tend_actor *a);
/* The error at the top of L failed typed actor a: returns 1 if a clause
 * handled it (error popped), 0 to go on as usual (error left). */
int tend_typed_fail(lua_State *L, tend_host *h, tend_actor *a);
/* A typed actor's restart completed. */
void tend_typed_restarted(lua_State *L, tend_host *h, tend_actor *a);
/* A backoff supervisor restarted by its parent: fresh delays, new child. */
void tend_backoff_restarted(lua_State *L, tend_host *h, tend_actor *a);
/* Frees the backoff and typed state of a (at death). */
void tend_backoff_free(lua_State *L, tend_host *h, tend_actor *a);

#endif
