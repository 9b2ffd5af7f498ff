/* driver: how a subsystem plugs into the host.
 *
 * The core (scheduler, actor machine, timers, host) calls what lives above
 * it only through the drivers registered on the host: supervision, the
 * backoff supervisor, typed actors, names, the stash, receive timeouts, OS
 * processes, sockets, HTTP, NATS and simulated nodes each describe
 * themselves in one static table, and no file of core/ names a file of
 * supervision/, io/ or nodes/. The host takes its drivers at open
 * (tend_host_config.drivers, in order: runtime/drivers.c lists them) and
 * calls each hook in that order. Every hook may be NULL; each list of
 * kinds ends with a zero entry. A kind (a timer kind, a system message, an
 * op) has one owner: a second driver that claims it is refused at open. */
#ifndef TEND_DRIVER_H
#define TEND_DRIVER_H

#include <lua.h>
#include <stdint.h>

#include "base/mailbox.h"
#include "base/timer.h"
#include "runtime/core/actor.h"

/* The status an op handler gets when its call was abandoned (a yield tend
 * did not make): the error is at idx; the handler pushes no further call. */
#define TEND_OP_ABANDONED (-1)

/* What a driver does to an actor at one of its moments. */
typedef void (*tend_actor_fn)(lua_State *L, tend_host *h, tend_actor *a);
/* What a fired timer does. t is out of the heap and stays valid during the
 * call; a is its live target, or NULL. */
typedef void (*tend_timer_fn)(lua_State *L, tend_host *h, tend_timer *t,
                              tend_actor *a);
/* A system message m reached a. Returns the nargs of a call it pushed for
 * a (the scheduler runs it), or -1. */
typedef int (*tend_message_fn)(lua_State *L, tend_host *h, tend_actor *a,
                               const tend_msg *m);
/* a's call of an op the driver started returned: status LUA_OK (its result
 * at idx), an error status or TEND_OP_ABANDONED (the error value at idx).
 * Returns the nargs of a follow-up call it pushed, or -1. */
typedef int (*tend_op_fn)(lua_State *L, tend_host *h, tend_actor *a, int status,
                          int idx);

typedef struct tend_driver_timer {
  int kind; /* tend_timer_kind */
  tend_timer_fn fire;
} tend_driver_timer;

typedef struct tend_driver_message {
  int kind; /* tend_msg_kind */
  tend_message_fn handle;
} tend_driver_message;

typedef struct tend_driver_op {
  int op; /* tend_actor_op */
  tend_op_fn done;
} tend_driver_op;

typedef struct tend_driver {
  const char *name;
  const tend_driver_timer *timers;     /* the timer kinds it fires */
  const tend_driver_message *messages; /* the system messages it handles */
  const tend_driver_op *ops;           /* the ops whose calls it completes */

  /* The actor machine's moments. */
  tend_actor_fn rebuild; /* a restart builds a's new instance */
  tend_actor_fn death;   /* a dies: what it held goes */
  tend_actor_fn release; /* the host closes with a still live: its records
                            are freed (no Lua code runs) */
  /* a failed (its error at the top, kept): 1 when the driver handled the
   * failure itself (a typed actor's clauses), 0 to tell the supervisor */
  int (*failed)(lua_State *L, tend_host *h, tend_actor *a);

  /* Actors run in C rather than by a factory: those of this role
   * (tend_actor_role; the backoff supervisor), or 0. */
  int role;
  tend_actor_fn start; /* instead of the factory */
  /* each message it gets (sent by sender_id/gen), at msg */
  void (*receive)(lua_State *L, tend_host *h, tend_actor *a, int msg,
                  uint32_t sender_id, uint32_t sender_gen);
  /* a child of one of its actors died */
  void (*child_died)(lua_State *L, tend_host *h, tend_actor *parent,
                     tend_actor *child);
  /* the incarnation a child of parent is (its start event says it) */
  uint32_t (*child_incarnation)(const tend_actor *parent);

  /* The host's moments. */
  void (*shutdown)(tend_host *h);  /* the tree starts stopping */
  void (*tree_gone)(tend_host *h); /* both guardians died */
  void (*close_all)(tend_host *h); /* the host closes: every handle goes */
  /* Work of the driver's own that the loop must run (simulated nodes):
   * the earliest due time (-1: none; *busy set when it can run now), and
   * one turn of it. */
  int64_t (*next_due)(tend_host *h, int *busy);
  void (*step)(tend_host *h);
} tend_driver;

/* The moments of the host and of its actors a driver may hook. For each,
 * the host keeps the drivers that hook it, in order, so that a moment
 * costs only the hooks there are. */
typedef enum tend_moment {
  TEND_AT_REBUILD,   /* rebuild */
  TEND_AT_DEATH,     /* death */
  TEND_AT_RELEASE,   /* release */
  TEND_AT_FAILED,    /* failed */
  TEND_AT_SHUTDOWN,  /* shutdown */
  TEND_AT_TREE_GONE, /* tree_gone */
  TEND_AT_CLOSE,     /* close_all */
  TEND_AT_PUMP,      /* next_due and step */
  TEND_MOMENTS
} tend_moment;

typedef struct tend_driver_list {
  const tend_driver **v;
  uint32_t n, cap;
} tend_driver_list;

/* Registers d on h (at each moment, after those before it). Returns 0, or
 * -1 with the reason on stderr when a kind it claims has an owner. */
int tend_driver_add(tend_host *h, const tend_driver *d);
/* Frees the host's lists (at its close). */
void tend_driver_free(tend_host *h);
/* The driver that runs a in C (its role's), or NULL. */
const tend_driver *tend_driver_of(const tend_host *h, const tend_actor *a);

#endif
