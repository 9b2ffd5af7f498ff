/* host: one lua_State, one uv loop, one clock, one generator, and the
 * scheduler state that ties actors, timers and the loop together.
 *
 * The loop runs while something can happen: an idle handle is active while an
 * actor can run (or, under the virtual clock, while a timer is pending); the
 * uv timer is armed for the earliest timer under the real clock. When both
 * are idle and no other handle is open, uv_run returns and the host ends.
 *
 * The runtime knows nothing of the layers above it. What they need to hear
 * (the REPL: output around its prompt, a Ctrl-C, the end; tend.chaos: every
 * send and every message before a behavior) they install as hooks here. */
#ifndef TEND_HOST_H
#define TEND_HOST_H

#include <lua.h>
#include <stdlib.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <uv.h>

#include "base/clock.h"
#include "base/linefile.h"
#include "base/log.h"
#include "base/mailbox.h"
#include "base/pool.h"
#include "base/rng.h"
#include "base/slots.h"
#include "base/timer.h"
#include "runtime/core/actor.h"
#include "runtime/core/deadletter.h"
#include "runtime/core/driver.h"
#include "runtime/core/preempt.h"
#include "runtime/tend.h" /* the front, the config, tend_host_of */

#define TEND_VERSION "0.1.0"
#define TEND_FAST_VALUES 1024 /* message values kept in the fast store */

/* Why the running coroutine gave control back to the scheduler. */
typedef enum tend_yield {
  TEND_YIELD_NONE, /* it did not yield (finished or crashed) */
  TEND_YIELD_IDLE, /* a worker with nothing to do: back to the pool */
  TEND_YIELD_BLOCK /* the current actor waits: the coroutine is its own */
} tend_yield;

/* Where the host stands on its way out. */
typedef enum tend_shutdown {
  TEND_SHUTDOWN_NONE,     /* running */
  TEND_SHUTDOWN_GRACEFUL, /* the tree is being stopped, top-down */
  TEND_SHUTDOWN_FORCED    /* a second signal: the loop stops at once */
} tend_shutdown;

typedef struct tend_stats {
  uint64_t spawned;      /* actors spawned (guardians and tasks excluded) */
  uint64_t messages;     /* user messages processed by behaviors */
  uint64_t dead_letters; /* messages that reached no actor */
  uint64_t failures;     /* errors raised by actors */
  uint64_t restarts;     /* restarts completed */
  uint64_t unhandled;    /* messages a behavior returned tend.unhandled for */
} tend_stats;

typedef struct tend_process tend_process; /* process.h */

/* A send filter (tend.chaos): v goes from (sender_id, sender_gen) to
 * (to_id, to_gen), an actor or a pending ask (a reply; a request has the
 * ask as its sender). Returns 1 when it took the message (v consumed:
 * dropped, or to be delivered later), 0 to deliver it. */
typedef int (*tend_send_filter)(lua_State *L, tend_host *h, uint32_t to_id,
                                uint32_t to_gen, tend_value *v,
                                uint32_t sender_id, uint32_t sender_gen);
/* A receive filter: the message at stack index msg is about to reach a's
 * behavior. Returns 1 and pushes an error value when a fails instead. */
typedef int (*tend_receive_filter)(lua_State *L, tend_host *h, tend_actor *a,
                                   int msg);

struct tend_host {
  lua_State *L;             /* main state; every Lua object lives here */
  uv_loop_t loop;           /* the one event loop */
  uv_idle_t idle;           /* active while there is work not waiting on time */
  uv_timer_t uvtimer;       /* armed for the earliest timer (real clock) */
  uv_async_t signals;       /* wakes the loop for a caught signal */
  tend_clock clock;         /* host time */
  tend_rng rng;             /* the one generator */
  uint64_t seed;            /* its seed (tend.seed()) */
  tend_log_level log_level; /* lines above it are not written */

  tend_slots ids;         /* actor and promise ids */
  tend_timer_heap timers; /* armed timers and their records */
  /* The drivers (driver.h), in order, and the owner of each kind. */
  tend_driver_list at[TEND_MOMENTS];          /* who hooks each moment */
  const tend_driver *role_driver[TEND_ROLES]; /* who runs each role in C */
  tend_timer_fn on_fire[TEND_TIMER_KINDS];    /* what each kind does */
  tend_message_fn on_message[TEND_MSG_KINDS]; /* system messages */
  tend_op_fn on_op[TEND_OP_KINDS];            /* ops the drivers start */
  tend_pool msgs;                             /* message nodes */
  tend_pool promises;                         /* promise records */

  tend_actor *runq_head, *runq_tail; /* actors with work, FIFO */
  uint32_t runq_len;                 /* actors in the run queue */
  tend_actor *current;               /* actor whose code runs now, or NULL */
  uint32_t held;      /* asks some actor holds (promise.c); 0: no queued
                         message needs counting */
  lua_State *resumed; /* the coroutine the scheduler runs now, or NULL: a
                         yield from it that tend did not make is BadYield */
  tend_yield yield;   /* set by the code that yields to the scheduler */
  lua_State *fiber;   /* the fiber the current task's code resumed, or
                         NULL (fiber.h) */
  uint32_t fiber_tag; /* the tag it resumed it with */
  int no_wait;        /* > 0: a coroutine runs that was resumed where its
                         actor cannot yield (fiber.h): it may not wait */
  int quantum;        /* steps left before workers return to the loop */
  int turn_left;      /* messages left in the current actor's turn */
  int pool_n;         /* idle workers in the pool table */
  int nested;         /* 1: a worker runs a woken actor's coroutine (sched.c) */

  /* Registry refs, owned here and released with the state. */
  int anchors_ref;   /* table: actor id -> actor userdata (live actors) */
  int parked_ref;    /* registry: actor id -> its coroutine parked in a wait */
  int values_ref;    /* table: value slot -> Lua value (messages in flight) */
  int pool_ref;      /* table: idle worker threads at 1..pool_n */
  int names_ref;     /* table: path of a named actor -> its record */
  int sentinels_ref; /* table: {stopped, unhandled} sentinel values */
  int ctx_mt_ref;    /* the metatable tend.Ctx, 0 until the API made it */
  int ref_mt_ref;    /* the metatable tend.Ref, 0 until the API made it */
  int error_mt_ref;  /* the metatable tend.Error, 0 until the API made it */
  int traceback_ref; /* the last traceback text made (error.c), or 0 */
  int where_msg_ref; /* the last "src:line: message" error() made, or 0 */
  int *ext_slots;    /* registry slots an ext value left, false in them
                        (actor.c): reused before luaL_ref's free list */
  uint32_t n_ext_slots, cap_ext_slots;
  struct tend_actor_ext *ext_pool; /* ext records freed, kept for the next
                                      (actor.c; each links the next) */
  uint32_t n_ext_pool;
  /* The last named child path made (lifecycle.c; a backoff supervisor
   * makes the same one at each start): its parent, its name's bytes, and
   * the path in the registry at child_path_ref once asked for twice. */
  uint32_t child_path_id, child_path_gen; /* the parent; 0: none */
  uint32_t child_path_len;                /* the name's length */
  int child_path_ref;                     /* registry slot (0 until made) */
  int child_path_kept; /* 1: the slot holds this key's path */
  char child_path_name[32];

  /* The value store (value.c): slots 1..TEND_FAST_VALUES are the user
   * values of one userdata (values_fast_ref), the cheapest place the API
   * has to keep a Lua value by number; later slots are in the table at
   * values_ref. */
  int values_fast_ref; /* the userdata; 0 until tend_value_push_store */
  uint16_t free_fast[TEND_FAST_VALUES]; /* free fast slots (stack); an
                            entry with TEND_VALUE_DIRTY still holds its old
                            value (taken by a receive, not yet cleared) */
  uint32_t n_free_fast;                 /* entries in free_fast */
  uint32_t dirty_from;   /* free_fast below it holds no dirty entry */
  uint32_t fast_top;     /* highest fast slot handed out */
  uint32_t *free_values; /* free table slots (stack) */
  uint32_t n_free_values, cap_free_values;
  uint32_t values_top; /* table slots handed out (slot TEND_FAST_VALUES+i) */

  tend_actor *user;             /* the /user guardian */
  tend_actor *system;           /* the /system guardian (tasks) */
  tend_actor *main;             /* /user/main while the main chunk runs */
  uint32_t next_seq;            /* spawn counter (anonymous names) */
  uint32_t *seq;                /* the counter spawns take from: &next_seq, or
                                   scheduler 0's (one thread: virtual clock) */
  _Atomic uint32_t *seq_shared; /* or this one, shared by the schedulers'
                                   threads (real clock), or NULL */
  tend_shutdown shutdown;       /* on the way out? */
  int exit_code;                /* status the process ends with */
  int busy_end;            /* the end began because only calls preempted in the
                              middle were left: each may finish in its actor's
                              shutdown time (lifecycle.c); another shutdown ends
                              them at once */
  int stdout_closed;       /* 1: a print met EPIPE (said once) */
  int failed;              /* 1 when the main chunk raised */
  const char *ctx_keys[3]; /* interned "sender", "self", "parent", for
                             ctx's __index (api/lctx.c; kept alive there) */
  int copy_messages;       /* --copy-messages: every message deep-copied at
                              its send (copy.h) */
  int copy_scratch_ref;    /* registry ref (owned here, goes with the state):
                              the tables a copy works with, or 0 */
  int copy_busy;           /* 1 while a copy runs (a nested one makes its
                              own tables) */
  tend_stats stats;
  tend_dl_limit dl_limit; /* dead-letter log lines (deadletter.h) */
  uint64_t lua_bytes;     /* bytes the Lua allocator holds */

  /* Signals (SIGINT, SIGTERM, SIGHUP) are caught by a handler that only
   * records them and wakes the loop: the loop stops the tree (or the REPL
   * takes a Ctrl-C). A signal while the tree is already stopping, or one
   * the loop has not taken within a grace period (Lua stuck where it cannot
   * be preempted), ends the process at once with 128 + signal. */
  volatile sig_atomic_t signal_mask;  /* caught, not yet taken (bits) */
  volatile sig_atomic_t signal_first; /* the first of them */
  volatile sig_atomic_t stopping;     /* the tree is being stopped */

  tend_preempt preempt;           /* the runaway-actor watchdog */
  volatile uint64_t steps;        /* steps the workers took (watchdog looks) */
  tend_actor *volatile interrupt; /* its running code raises Interrupted
                                     at the next hook (tend_sched_interrupt) */

  tend_front front;                   /* the command line's hooks */
  tend_send_filter send_filter;       /* tend.chaos, or NULL */
  tend_receive_filter receive_filter; /* tend.chaos, or NULL */
  tend_pass_hook pass_hook;           /* tend.invariant, or NULL */
  int64_t pass_at;                    /* the clock at its last call */

  /* The observer's pause: the virtual clock held jumps only for the steps
   * granted; actors at its instant still run, real I/O still comes in. */
  int clock_held;
  uint32_t clock_steps; /* jumps granted while held, not yet taken */

  tend_process *processes; /* OS process records (process.c) */
  int life_fd[2];          /* [1]: the pipe to the group watcher, once
                              life_made (process.c, base/oschild.h) */
  int life_made;           /* 1: the watcher runs */
  uv_signal_t *sigchld;    /* SIGCHLD watcher, referenced while some program
                              runs (process.c), or NULL */
  uint32_t running;        /* programs not yet reaped */
  struct tcp_state *tcp;   /* sockets and listeners (tcprec.h), or NULL */
  struct tend_http_state *http; /* the HTTP client (http.c), or NULL */
  struct tend_httpd *httpd;     /* HTTP servers open (server.c), a list */
  struct tend_nats *nats;       /* NATS connections (nats.c), or NULL */

  /* Nodes (remote.h): this node's name ("" when it is no node) and
   * incarnation, what refs to other nodes stand for, and the node layer's
   * hooks (set by api/lremote.c; NULL / LUA_NOREF until a node starts). */
  char *node_name;       /* owned; NULL: "" */
  uint64_t node_inc;     /* incarnation: a restarted node is a new one */
  int remotes_ref;       /* table: proxy ref -> its coordinates, owned */
  int remote_decode_ref; /* function(node, inc, id, gen, path, kind) */
  int remote_send_ref;   /* function(proxy, msg, sender) */
  /* A message v from (sid, sgen) to the proxy p leaves for its node
   * (v consumed). */
  void (*remote_send)(lua_State *L, tend_host *h, tend_actor *p, tend_value *v,
                      uint32_t sid, uint32_t sgen);

  /* Simulated nodes (simnodes.h). A node's host has world set (its
   * pump is the world's, its trace goes to the world's) and sim_node its
   * index + 1 there; the world has sim and the hooks its pump calls (set
   * by simnodes.c at its first use). */
  struct tend_host *world;   /* the world this host is a node of, or
                                NULL */
  uint32_t sim_node;         /* its index + 1 in the world, or 0 */
  int sim_dispatch_ref;      /* function(subject, data): the bus's
                                deliveries (owned), or LUA_NOREF */
  struct tend_simworld *sim; /* the world's nodes, or NULL */

  /* Schedulers (schedulers.h): the process's, this one's index, the
   * proxies of actors on the others ("k:id:gen" -> ref) and, per actor
   * id, the proxies on the others that watch it; LUA_NOREF until used. */
  struct tend_scheds *scheds; /* NULL: one scheduler */
  uint32_t sched_index;
  int sched_proxies_ref;
  int sched_watchers_ref;
  /* A message v from (sid, sgen) to the proxy p (TEND_AF_SCHED) leaves
   * for its scheduler (v consumed). */
  void (*sched_send)(lua_State *L, tend_host *h, tend_actor *p, tend_value *v,
                     uint32_t sid, uint32_t sgen);
  /* A stop (TEND_MSG_STOP_REQUEST), Kill or PoisonPill for the proxy p's
   * actor leaves for its scheduler. */
  void (*sched_control)(tend_host *h, tend_actor *p, int what);
  lua_CFunction open;                /* cfg.open: a node opens with it */
  const tend_driver *const *drivers; /* cfg.drivers: so does a scheduler */

  tend_linefile trace;   /* --trace: events as JSON lines (closed: none) */
  char *trace_path;      /* its name, for the error message */
  int trace_lost;        /* 1: a write failed; the trace stopped there */
  int trace_stderr;      /* tend.trace(true): events on stderr */
  int trace_internal;    /* --trace-internal, tend.trace{internal = true}:
                            the events of tend's own tasks are shown too */
  int trace_fn_ref;      /* tend.trace(fn): list of listeners, owned here */
  int trace_queue_ref;   /* table: events waiting for the function */
  uint32_t trace_queued; /* their number */
};

/* Creates the state, the loop and the guardians. Returns NULL on failure
 * (message on stderr). */
tend_host *tend_host_open(const tend_host_config *cfg);
/* One turn: fires the due timers, runs the actors that can run (up to
 * the scheduler's quantum), hands out the trace events. */
void tend_host_turn(tend_host *h);
/* Runs the loop until nothing can happen; returns the exit status. */
int tend_host_run(tend_host *h);
void tend_host_close(tend_host *h);

/* Starts stopping the whole tree; the host exits with `code` after
 * (lifecycle.c). */
void tend_host_shutdown(tend_host *h, int code);
/* A failure no supervisor can handle (the main chunk's, or one escalated
 * past a guardian): prints what+the error at err and its traceback to
 * stderr, as lua.c does, and shuts down with 1 (lifecycle.c). */
void tend_host_fatal(lua_State *L, tend_host *h, int err, const char *what);
/* Makes sure the loop will process the run queue and timers soon. */
void tend_host_poke(tend_host *h);
/* Would a line at `level` be written? (check before building one) */
static inline int tend_host_logs(const tend_host *h, tend_log_level level) {
  return level <= h->log_level;
}
/* Writes one log line: "[t] level path: message" (output.c). */
void tend_host_log(tend_host *h, tend_log_level level, const char *path,
                   const char *fmt, ...);
/* Writes text to stdout (around the front's output hook). When stdout is
 * a closed pipe (EPIPE: SIGPIPE is ignored), says so once and stops the
 * tree; the host exits with 128 + SIGPIPE. */
void tend_host_print(tend_host *h, const char *text, size_t len);
/* The same for a line of a program's output passed through to tend's own
 * stdout (err 0) or stderr (err 1), a newline added when eol. */
void tend_host_pass(tend_host *h, int err, const char *text, size_t len,
                    int eol);

static inline void tend_push_sentinel(lua_State *L, const tend_host *h,
                                      tend_sentinel s) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->sentinels_ref);
  lua_rawgeti(L, -1, (lua_Integer)s);
  lua_remove(L, -2);
}

#endif
