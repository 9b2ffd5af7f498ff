/* tend.h: the face of the runtime, the one header of src/runtime that the
 * layers above (src/api, src/cli) include, as Lua's libraries see only
 * lua.h. The host, actors, promises and timers are opaque: their structs
 * live in the private headers under src/runtime/<folder>/, and what the
 * layers above read of them goes through the calls below (small functions
 * in face.c or the file that owns the struct; -flto inlines them at the
 * link). The value types callers fill or read whole (options, events,
 * clauses, a ref) are defined here, once; the private headers include this
 * file for them. One line of contract per call; the private header that
 * also declares it says more. scripts/layers.lua checks that src/api and
 * src/cli include from src/runtime only this file; its second part,
 * tend_io.h (trace and events, I/O handles, nodes), comes through it. */
#ifndef TEND_FACE_H
#define TEND_FACE_H

#include <lauxlib.h>
#include <lua.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "base/backoff.h"
#include "base/clock.h"
#include "base/frame.h"
#include "base/log.h"
#include "base/mailbox.h"
#include "base/rng.h"
#include "base/strategy.h"
#include "base/timer.h"
#include "runtime/core/errkind.h" /* the error kinds: part of the face */

#define TEND_VERSION "0.1.0"

typedef struct tend_host tend_host;       /* one state, one loop, one clock */
typedef struct tend_actor tend_actor;     /* an actor's record (its ctx) */
typedef struct tend_promise tend_promise; /* a pending ask */
typedef struct tend_timer tend_timer;     /* an armed timer (base/timer.h) */
typedef struct tend_driver tend_driver;   /* a wing of the runtime */

/* ==== host ============================================================= */

/* Hooks of the command line (the REPL); each may be NULL. */
typedef struct tend_front {
  void (*output)(tend_host *h, int begin); /* around a line on the terminal:
                                              begin 1 before, 0 after */
  int (*signal)(tend_host *h, int signum); /* 1: it handled the signal */
  void (*turn)(tend_host *h);              /* after every pass of the pump */
  void (*shutdown)(tend_host *h);          /* the tree starts stopping */
  void (*close)(tend_host *h);             /* the host closes: its handles go */
  void *data;                              /* theirs */
} tend_front;

typedef struct tend_host_config {
  int virtual_time; /* 1: virtual clock */
  int has_seed;     /* 1: seed given */
  uint64_t seed;
  tend_log_level log_level;
  int copy_messages;                 /* 1: --copy-messages */
  const tend_driver *const *drivers; /* the wings, in order: tend_drivers */
  lua_CFunction open;    /* opens the libraries above the runtime (called
                            protected, before the guardians exist), or NULL */
  tend_host *world;      /* a simulated node's world (simnodes.h): no signals,
                            no watchdog, its clock moved by the world */
  const char *node_name; /* a simulated node's name (copied), or NULL */
  int schedulers;        /* schedulers of the process (0 or 1: one) */
  int no_signals;        /* 1: SIGINT/TERM/HUP are not this host's (a host
                            beside the first in one process) */
} tend_host_config;

/* What tend.stats() reports. */
typedef struct tend_counts {
  uint64_t spawned;      /* actors spawned (guardians and tasks excluded) */
  uint64_t messages;     /* user messages processed by behaviors */
  uint64_t dead_letters; /* messages that reached no actor */
  uint64_t failures;     /* errors raised by actors */
  uint64_t restarts;     /* restarts completed */
  uint64_t unhandled;    /* messages a behavior returned tend.unhandled for */
  uint64_t actors;       /* live actors, guardians excluded */
  uint64_t timers;       /* armed timers */
  uint64_t runnable;     /* actors in the run queue */
  uint64_t lua_bytes;    /* bytes the Lua allocator holds */
  uint64_t c_bytes;      /* bytes of the host's C tables */
} tend_counts;

/* The metatables the API makes and the runtime uses. */
typedef enum tend_metatable {
  TEND_MT_CTX,
  TEND_MT_REF,
  TEND_MT_ERROR
} tend_metatable;

/* The sentinels a behavior returns. */
typedef enum tend_sentinel {
  TEND_SENTINEL_STOPPED = 1,  /* tend.stopped */
  TEND_SENTINEL_UNHANDLED = 2 /* tend.unhandled */
} tend_sentinel;

/* Recovers the host from any thread of its state. */
static inline tend_host *tend_host_of(lua_State *L) {
  return *(tend_host **)lua_getextraspace(L);
}
/* Creates the state, the loop and the guardians; NULL on failure (said). */
tend_host *tend_host_open(const tend_host_config *cfg);
/* Every wing of the runtime (supervision, I/O, nodes), NULL-ended: what a
 * host opens with (tend_host_config.drivers). */
extern const tend_driver *const tend_drivers[];
/* Runs the loop until nothing can happen; returns the exit status. */
int tend_host_run(tend_host *h);
/* Closes the host: its handles, its state, its memory. */
void tend_host_close(tend_host *h);
/* Starts stopping the whole tree; the host exits with code after. */
void tend_host_shutdown(tend_host *h, int code);
/* The status the host exits with when it ends by itself (no shutdown
 * gives another): `tend test` starts at 1, so a runner that never
 * reaches its summary fails the run. */
void tend_host_set_exit_code(tend_host *h, int code);
/* Makes sure the loop will process the run queue and timers soon. */
void tend_host_poke(tend_host *h);
/* Writes text to stdout around the front's output hook (EPIPE: stops). */
void tend_host_print(tend_host *h, const char *text, size_t len);
/* Writes one log line: "[t] level path: message" (output.c). */
void tend_host_log(tend_host *h, tend_log_level level, const char *path,
                   const char *fmt, ...);
lua_State *tend_host_state(const tend_host *h); /* the main Lua state */
uv_loop_t *tend_host_loop(tend_host *h);        /* the event loop */
tend_front *tend_host_front(tend_host *h);      /* the command line's hooks */
uint64_t tend_host_seed(const tend_host *h);    /* the seed (tend.seed()) */
tend_rng *tend_host_rng(tend_host *h);          /* the one generator */
/* Seeds the generator again with seed, which tend.seed() says from now. */
void tend_host_reseed(tend_host *h, uint64_t seed);
int tend_host_virtual(const tend_host *h); /* 1 under the virtual clock */
/* Holds the virtual clock (on) or lets it go (off): held, it stays at its
 * instant (actors due then still run, real I/O still comes in) and jumps
 * to the next timer only once per step granted by tend_host_step. */
void tend_host_hold(tend_host *h, int on);
int tend_host_held(const tend_host *h);
void tend_host_step(tend_host *h);        /* grants one jump of a held clock */
int64_t tend_host_now(tend_host *h);      /* the host's time now, in ns */
int tend_host_copies(const tend_host *h); /* 1 under --copy-messages */
/* Lines above this level are not logged. */
tend_log_level tend_host_log_level(const tend_host *h);
int tend_host_stopping(const tend_host *h);       /* 1 once a shutdown began */
tend_actor *tend_host_user(const tend_host *h);   /* /user, NULL once gone */
tend_actor *tend_host_system(const tend_host *h); /* /system, NULL once gone */
tend_actor *tend_host_main(const tend_host *h);   /* /user/main while it runs */
void tend_host_set_main(tend_host *h, tend_actor *a);
tend_actor *tend_host_current(const tend_host *h); /* whose code runs now */
/* The coroutine the scheduler runs now (an actor's own), or NULL. */
lua_State *tend_host_resumed(const tend_host *h);
/* The actor whose running code raises Interrupted at its next hook. */
void tend_host_set_interrupt(tend_host *h, tend_actor *a);
/* The world a simulated node's host belongs to, or NULL. */
tend_host *tend_host_world(const tend_host *h);
/* The API made mt: ref is its registry ref, owned by the host from now. */
void tend_host_set_metatable(tend_host *h, tend_metatable mt, int ref);
/* Pushes the sentinel s (tend.stopped, tend.unhandled). */
void tend_host_push_sentinel(lua_State *L, const tend_host *h, tend_sentinel s);
/* Fills *c with the host's counters now. */
void tend_host_counts(const tend_host *h, tend_counts *c);
/* The interned "sender", "self", "parent" ctx's __index compares keys
 * with (the API sets them and keeps them alive). */
const char **tend_host_ctx_keys(tend_host *h);
/* Pushes the anchor table: actor id -> its record, for live actors. */
void tend_host_push_anchors(lua_State *L, const tend_host *h);
/* What (id, gen) addresses: *found = 1 for a live slot; returns the actor
 * there, or NULL for a pending ask or nothing. */
tend_actor *tend_host_entity(tend_host *h, uint32_t id, uint32_t gen,
                             int *found);
/* The same for a line of a program's output passed through to tend's own
 * stdout (err 0) or stderr (err 1), a newline added when eol. */
void tend_host_pass(tend_host *h, int err, const char *text, size_t len,
                    int eol);
/* The `open` function the host was configured with (cfg.open). */
lua_CFunction tend_host_opener(const tend_host *h);
/* Moves a virtual clock forward to t (never back; real: nothing). */
void tend_host_jump(tend_host *h, int64_t t);
/* tend.chaos's hooks. A send filter: v goes from (sender_id, sender_gen)
 * to (to_id, to_gen), an actor or a pending ask; returns 1 when it took
 * the message (v consumed), 0 to deliver it. */
typedef int (*tend_send_filter)(lua_State *L, tend_host *h, uint32_t to_id,
                                uint32_t to_gen, tend_value *v,
                                uint32_t sender_id, uint32_t sender_gen);
/* A receive filter: the message at stack index msg is about to reach a's
 * behavior; returns 1 and pushes an error value when a fails instead. */
typedef int (*tend_receive_filter)(lua_State *L, tend_host *h, tend_actor *a,
                                   int msg);
/* Installs the filters (NULL: none). */
void tend_host_set_filters(tend_host *h, tend_receive_filter receive,
                           tend_send_filter send);
/* tend.invariant's hook: called after each turn in which the clock moved
 * (stalled 0), and when nothing can happen any more before the host ends
 * (stalled 1: no actor can run, no timer is armed). NULL: none. */
typedef void (*tend_pass_hook)(tend_host *h, int stalled);
void tend_host_set_pass_hook(tend_host *h, tend_pass_hook hook);
/* The actor at one end of a message: (id, gen)'s, or the asker of the
 * pending ask (id, gen); NULL for none. */
tend_actor *tend_host_endpoint(tend_host *h, uint32_t id, uint32_t gen);

/* ==== actors =========================================================== */

#define TEND_CTX_MT "tend.Ctx" /* the metatable of an actor's record */

/* Where an actor is in its life. */
typedef enum tend_actor_state {
  TEND_ACTOR_STARTING,   /* spawned; START queued, factory not run yet */
  TEND_ACTOR_RUNNING,    /* has a behavior; takes messages */
  TEND_ACTOR_RESTARTING, /* in the restart sequence (phase below) */
  TEND_ACTOR_STOPPING,   /* children going first, then post_stop */
  TEND_ACTOR_DEAD        /* gone; its id is stale */
} tend_actor_state;

/* Why an actor stops; says what watchers see and whether a permanent
 * child is restarted instead. */
typedef enum tend_stop_reason {
  TEND_STOP_NORMAL,    /* by itself or an actor not its supervisor:
                          "normal"; a permanent child is restarted instead */
  TEND_STOP_BY_PARENT, /* by its supervisor (ctx:stop(child), a stop
                          directive, a group): "shutdown" (OTP), final */
  TEND_STOP_SHUTDOWN,  /* its parent stops or restarts, or the host shuts
                          down: "shutdown", final */
  TEND_STOP_FAILURE,   /* after an error (ext->error_ref): the error, final */
  TEND_STOP_KILLED     /* post_stop overran its shutdown time: "killed" */
} tend_stop_reason;

/* Restarted after what (the spawn option `restart`). */
typedef enum tend_restart_type {
  TEND_TRANSIENT, /* restarted only after a failure (default, Akka) */
  TEND_PERMANENT, /* also restarted after a normal stop */
  TEND_TEMPORARY  /* never restarted: a restart directive stops it */
} tend_restart_type;

/* What a full mailbox does (the spawn option `overflow`). */
typedef enum tend_overflow {
  TEND_OVERFLOW_DROP_NEW, /* the new message goes to dead letters */
  TEND_OVERFLOW_DROP_OLD, /* the oldest message goes to dead letters */
  TEND_OVERFLOW_FAIL      /* the actor fails with MailboxOverflow */
} tend_overflow;

/* Options of a spawn, validated (by the API) before anything is created. */
typedef struct tend_spawn_opts {
  int name;          /* stack index of the name string, 0 for anonymous */
  int args;          /* stack index of the args table, 0 for none */
  uint32_t capacity; /* mailbox bound, 0 = unbounded */
  tend_overflow overflow;
  int64_t shutdown_ns;
  int task; /* 1: the factory is a task function, run once */
  const tend_strategy *strategy; /* for its children; NULL: the default */
  int decider;            /* stack index of the strategy's decider, or 0 */
  int64_t max_message_ns; /* max_message_time, 0 for none */
  tend_restart_type restart;
  uint32_t stash; /* a stash of at most this many messages, 0 for none */
  int internal;   /* 1: one of tend's own tasks (TEND_AF_INTERNAL) */
  int scheduler;  /* TEND_SCHED_HERE (the spawner's), _SPREAD (least busy), k */
  int record;     /* 1: push its record, not its ref (made when someone asks) */
} tend_spawn_opts;
#define TEND_SCHED_HERE (-1)
#define TEND_SCHED_SPREAD (-2)

/* Default options: anonymous, unbounded, 5 s shutdown, transient. */
void tend_spawn_opts_init(tend_spawn_opts *o);
/* Creates an actor under parent, its factory at stack index factory; queues
 * its START, pushes its ref (o->record: its record); else raises, no actor. */
tend_actor *tend_actor_spawn(lua_State *L, tend_host *h, tend_actor *parent,
                             int factory, const tend_spawn_opts *o);
/* Pushes require(module)[field] for spec "module.field", the factory
 * form that crosses schedulers and nodes. Raises "<fn>: factory: ..."
 * (fn NULL: "factory: ...") when spec has no field, the module is not a
 * table or the field is not a function. */
void tend_factory_push(lua_State *L, const char *spec, const char *fn);
/* Raises (naming fn) unless parent can take a child named by the string
 * at stack index name (0: anonymous). */
void tend_actor_check_spawn(lua_State *L, tend_host *h, tend_actor *parent,
                            int name, const char *fn);
/* Asks a to stop (async): children first, then post_stop, then death. */
void tend_actor_stop(lua_State *L, tend_host *h, tend_actor *a,
                     tend_stop_reason why);
/* a's strategy s for its children, its decider at stack idx (0: none). */
void tend_actor_set_strategy(lua_State *L, tend_actor *a,
                             const tend_strategy *s, int decider);
/* The live actor (id, gen) names, or NULL. */
tend_actor *tend_actor_live(tend_host *h, uint32_t id, uint32_t gen);
/* The actor record (a ctx) at idx, or NULL for any other value. */
tend_actor *tend_actor_test(lua_State *L, int idx);
uint32_t tend_actor_id(const tend_actor *a); /* with its gen, its address */
uint32_t tend_actor_gen(const tend_actor *a);
tend_actor_state tend_actor_state_of(const tend_actor *a);
int tend_actor_is_task(const tend_actor *a);     /* runs a function once */
int tend_actor_is_guardian(const tend_actor *a); /* /user or /system */
int tend_actor_is_backoff(const tend_actor *a);  /* a backoff supervisor */
int tend_actor_is_remote(const tend_actor *a);   /* a proxy of a remote one */
int tend_actor_is_internal(const tend_actor *a); /* one of tend's own tasks */
/* A proxy whose node is not connected now. */
int tend_actor_is_disconnected(const tend_actor *a);
/* The tree: a's supervisor (NULL for a guardian or a proxy), its first
 * child, its next younger sibling (children in start order). */
tend_actor *tend_actor_parent(const tend_actor *a);
tend_actor *tend_actor_first_child(const tend_actor *a);
tend_actor *tend_actor_next_sibling(const tend_actor *a);
uint32_t tend_actor_restarts(const tend_actor *a);     /* restarts so far */
uint32_t tend_actor_mailbox_size(const tend_actor *a); /* its user queue */
tend_restart_type tend_actor_restart_type(const tend_actor *a);
/* 1 when it was given a strategy for its children (not the default). */
int tend_actor_has_strategy(const tend_actor *a);
/* The strategy it was given for its children, or NULL (the default). */
const tend_strategy *tend_actor_strategy(const tend_actor *a);
/* The sender of the message a processes now (0, 0: none). */
uint32_t tend_actor_sender_id(const tend_actor *a);
uint32_t tend_actor_sender_gen(const tend_actor *a);
/* Pushes a's path ("/user/a/b"), computed once. */
void tend_actor_push_path(lua_State *L, const tend_host *h, tend_actor *a);
/* Pushes the path cached in the record at stack index ctx and returns 1,
 * or pushes nothing and returns 0. */
int tend_actor_push_cached_path(lua_State *L, int ctx);
/* Pushes a's canonical ref (made on first use). */
void tend_actor_push_ref(lua_State *L, tend_host *h, tend_actor *a);
/* Pushes the canonical ref cached in the record at idx ctx: 1, else 0. */
int tend_actor_push_cached_ref(lua_State *L, int ctx);
/* Pushes a's userdata (ctx). */
void tend_actor_push_ctx(lua_State *L, const tend_host *h, const tend_actor *a);
/* The time allowed for a's post_stop. 0 is OTP's brutal_kill: stopped by
 * its supervisor, its parent or the host, a dies once its children are
 * gone, post_stop not run, reason "killed". */
int64_t tend_actor_shutdown_ns(const tend_actor *a);
/* Sets it (kept in the ext unless default); 0 when out of memory. */
int tend_actor_set_shutdown_ns(tend_actor *a, int64_t ns);
/* Pops a's on_wait (a function, or nil): it runs before a's code is
 * suspended in a wait (not a fiber's); it may not wait, its error is
 * dropped (a stream producer sends the elements it holds). */
void tend_actor_set_on_wait(lua_State *L, tend_actor *a);
/* tend.chaos.freeze: a takes no messages until thawed (guardians and
 * frozen actors: nothing). */
void tend_actor_freeze(tend_actor *a);
/* tend.chaos.thaw: a frozen a takes messages again. */
void tend_actor_thaw(tend_host *h, tend_actor *a);
/* -- inside an actor, for tend.inspect and tend.reload (reads only, but
 * for the two steps of a reload) */
/* What a runs now: "idle", "receive", "factory", "post_stop", ... */
const char *tend_actor_op_name(const tend_actor *a);
int tend_actor_in_receive(const tend_actor *a); /* its behavior runs */
int tend_actor_has_hooks(const tend_actor *a);  /* a hook table behavior */
uint32_t tend_actor_timer_count(const tend_actor *a); /* timers it owns */
/* Push its behavior, its factory, its spawn args (nil when none). */
void tend_actor_push_behavior(lua_State *L, const tend_host *h, tend_actor *a);
void tend_actor_push_factory(lua_State *L, const tend_host *h, tend_actor *a);
void tend_actor_push_args(lua_State *L, const tend_actor *a);
/* Pushes the coroutine parked in the middle of a's message, or nil. */
void tend_actor_push_parked(lua_State *L, const tend_host *h, tend_actor *a);
/* Pushes a list of refs: who watches a (watchers), else what a watches. */
void tend_actor_push_watches(lua_State *L, tend_host *h, const tend_actor *a,
                             int watchers);
/* tend.reload: a restarts with the function at factory from now on, and
 * its next message goes to the function at mover in place of its behavior. */
void tend_actor_install(lua_State *L, tend_host *h, tend_actor *a, int factory,
                        int mover);
/* Puts the value at idx back in front of a's user queue, from the sender
 * of the message a processes now; 0, or -1 when memory is out. */
int tend_actor_requeue(lua_State *L, tend_host *h, tend_actor *a, int idx);
/* a's state as tend.ps and tend.children say it: "starting", "running",
 * "busy", "waiting", "failed", "suspended", "restarting", "stopping",
 * "dead". */
const char *tend_actor_state_name(const tend_actor *a);
/* Seconds a's current call has run when it was preempted in the middle of
 * it (a busy loop), else -1 (a wait in ask, sleep or shutdown is not). */
double tend_actor_busy_seconds(const tend_actor *a);

/* ==== refs ============================================================= */

/* A tend.Ref: an actor's or a pending ask's (id, gen), good while it lives. */
#define TEND_REF_MT "tend.Ref"
#define TEND_REF_MAGIC 0x72656672u
typedef struct tend_ref {
  uint32_t magic; /* TEND_REF_MAGIC */
  uint32_t id;    /* target slot */
  uint32_t gen;   /* target generation */
  uint32_t seq;   /* a dead anonymous actor's spawn number (actor.c), or 0 */
} tend_ref;

/* Pushes a new ref to (id, gen). */
void tend_ref_new(lua_State *L, uint32_t id, uint32_t gen);
/* The ref at idx, or NULL. */
tend_ref *tend_ref_test(lua_State *L, int idx);
/* The ref at idx remembers the path at the top of the stack (popped). */
void tend_ref_set_path(lua_State *L, int idx);
/* Pushes the live actor's canonical ref for (id, gen), else a new one;
 * nil for id 0. */
void tend_ref_push(lua_State *L, tend_host *h, uint32_t id, uint32_t gen);
/* The live actor a ref names, or NULL. */
tend_actor *tend_ref_actor(tend_host *h, const tend_ref *r);
/* Pushes the path of the ref at idx: a live actor's, "/temp/$id" for a
 * pending ask, the remembered one for a dead actor, or "/deadLetters". */
void tend_ref_push_path(lua_State *L, tend_host *h, int idx);

/* ==== messages and values ============================================== */

/* Delivers the value at stack index idx to (id, gen) as a user message
 * from (sender_id, sender_gen); a dead target takes it as a dead letter. */
void tend_actor_send(lua_State *L, tend_host *h, uint32_t id, uint32_t gen,
                     int idx, uint32_t sender_id, uint32_t sender_gen);
/* Same, with the value store at stack index store. */
void tend_actor_send_in(lua_State *L, tend_host *h, uint32_t id, uint32_t gen,
                        int idx, uint32_t sender_id, uint32_t sender_gen,
                        int store);
/* Same, to r, the ref at (absolute) stack index ref: when its actor is
 * dead, the dead-letter log names it by the ref's path. */
void tend_actor_send_ref(lua_State *L, tend_host *h, const tend_ref *r, int ref,
                         int idx, uint32_t sender_id, uint32_t sender_gen,
                         int store);
/* The message at stack index msg, sent by (sid, sgen), is a dead letter
 * to `to` (NULL: nobody) for why. */
void tend_actor_dead_letter_msg(lua_State *L, tend_host *h, tend_actor *to,
                                int msg, uint32_t sid, uint32_t sgen,
                                const char *why);
/* Takes a task's next live message: pushes it and its sender's ref (nil
 * for none) and returns 1, or returns 0 when its queue is empty. */
int tend_inbox_take(lua_State *L, tend_host *h, tend_actor *a);
/* Pushes the fast value store, to keep at hand and pass as `store`. */
void tend_value_push_store(lua_State *L, tend_host *h);
/* Stores the value at idx (not popped) as *out; 0, or -1 when memory is
 * exhausted. */
int tend_value_store(lua_State *L, tend_host *h, int idx, tend_value *out);
/* Same, with the fast store at stack index store (0: from the registry). */
int tend_value_store_in(lua_State *L, tend_host *h, int idx, tend_value *out,
                        int store);
/* Pushes v and keeps it stored. */
void tend_value_push(lua_State *L, tend_host *h, const tend_value *v);
/* Pushes v and releases it. */
void tend_value_take(lua_State *L, tend_host *h, tend_value *v);
/* Releases v without pushing it. */
void tend_value_drop(lua_State *L, tend_host *h, tend_value *v);
/* Would a copy change the value at idx (a table, or a value that cannot
 * be copied)? Cheap: the hot path asks this first. */
static inline int tend_copy_needed(lua_State *L, int idx) {
  int t = lua_type(L, idx);
  return t == LUA_TTABLE || t == LUA_TFUNCTION || t == LUA_TTHREAD ||
         t == LUA_TUSERDATA || t == LUA_TLIGHTUSERDATA;
}
/* Pushes a deep copy of the value at idx and returns 0, or pushes what
 * cannot be copied and where and returns -1. */
int tend_copy_push(lua_State *L, tend_host *h, int idx);
/* Replaces the value at idx with its copy, or raises NotCopyable (its
 * message begins with prefix). */
void tend_copy_in_place(lua_State *L, tend_host *h, int idx,
                        const char *prefix);
/* v (consumed), sent by (sid, sgen) to `to` (NULL: nobody), is a dead
 * letter for why. */
void tend_actor_dead_letter_from(lua_State *L, tend_host *h, tend_actor *to,
                                 uint32_t sid, uint32_t sgen, tend_value *v,
                                 const char *why);
/* Pushes the Killed error of a ("/user/a was killed"). */
void tend_actor_push_killed(lua_State *L, tend_host *h, tend_actor *a);
/* Queues a Kill in a's user queue (past its bound and the send filter):
 * a fails with Killed when it reaches it. */
void tend_actor_send_kill(tend_host *h, tend_actor *a);
/* Queues a PoisonPill the same way: a stops normally when it reaches it,
 * as if its behavior had returned tend.stopped there. */
void tend_actor_send_poison(tend_host *h, tend_actor *a);

/* ==== timers =========================================================== */

/* Arms a timer of kind for a (may be NULL) after ns, every interval ns
 * when > 0, holding the value at idx (0: none); tagged with a's wait
 * number. NULL when memory is out. */
tend_timer *tend_timer_arm(lua_State *L, tend_host *h, tend_timer_kind kind,
                           tend_actor *a, int64_t ns, int64_t interval,
                           int idx);
/* Disarms and frees t (NULL or already free: nothing). */
void tend_timer_cancel(lua_State *L, tend_host *h, tend_timer *t);

/* ==== asks, promises and waits ========================================= */

/* Why an actor's coroutine waits (tend_sched_wait). */
typedef enum tend_actor_wait {
  TEND_WAIT_NONE,    /* not suspended */
  TEND_WAIT_SLEEP,   /* in sleep; a WAKE timer ends it */
  TEND_WAIT_ASK,     /* in ask; a reply or a WAKE timer ends it */
  TEND_WAIT_FOREVER, /* in tend.shutdown; only stopping ends it */
  TEND_WAIT_RECEIVE, /* a task in tend.receive: a message or its timeout
                        (a promise, see inbox.h) ends it */
  TEND_WAIT_WOKEN    /* wait over, queued to resume its coroutine */
} tend_actor_wait;

/* How a wait ended (read by the code that waited). */
typedef enum tend_wake {
  TEND_WAKE_TIMEOUT,     /* time ran out (an ask's timeout) */
  TEND_WAKE_OK,          /* as hoped: a reply came, or the sleep is over */
  TEND_WAKE_INTERRUPTED, /* Ctrl-C at the REPL: raise Interrupted */
  TEND_WAKE_FAILED       /* the actor asked ended before replying: raise
                            the AskFailed error, its reply) */
} tend_wake;

/* A new promise for the current actor a, timing out after timeout_ns
 * (< 0: never). Raises (naming fn) when out of memory or ids. */
tend_promise *tend_promise_new(lua_State *L, tend_host *h, tend_actor *a,
                               int64_t timeout_ns, const char *fn);
/* The pending promise (id, gen) names, or NULL. */
tend_promise *tend_promise_live(tend_host *h, uint32_t id, uint32_t gen);
uint32_t tend_promise_id(const tend_promise *p); /* a ref to it answers it */
uint32_t tend_promise_gen(const tend_promise *p);
/* The reply v arrived for p: the asker wakes with it (v is its own) and
 * returns 1; 0 when the asker no longer waits for p (v is the caller's). */
int tend_promise_resolve(lua_State *L, tend_host *h, tend_promise *p,
                         tend_value v);
/* a stops waiting for its promise (if any): it is freed, its timer too. */
void tend_promise_cancel(lua_State *L, tend_host *h, tend_actor *a);
/* target holds the request of p (out of memory: p can still time out). */
void tend_promise_hold(tend_host *h, tend_promise *p, tend_actor *target);
/* 1 while a's ask waits for its promise (tend_promise_new set it). */
int tend_actor_has_promise(const tend_actor *a);
/* The actor whose code L runs; raises (naming fn) unless L can wait. */
tend_actor *tend_sched_check_wait(lua_State *L, tend_host *h, const char *fn);
/* Suspends the current actor in wait; the return expression of a C
 * function called from its code. k continues it when woken. */
int tend_sched_wait(lua_State *L, tend_host *h, tend_actor_wait wait,
                    lua_KFunction k);
/* In a continuation: raises Interrupted if the wait was interrupted, else
 * returns how it ended (tend_wake). */
int tend_sched_woken(lua_State *L, tend_host *h);
/* In a continuation woken by a reply: pushes the reply and releases it. */
void tend_sched_take_reply(lua_State *L, tend_host *h);
/* Starts a's next wait: a WAKE timer armed after it ends only this one. */
void tend_sched_next_wait(tend_actor *a);
/* a's running code raises Interrupted (the REPL's Ctrl-C). */
void tend_sched_interrupt(lua_State *L, tend_host *h, tend_actor *a);
/* Fibers (runtime/core/fiber.h): the current task's code resumes the
 * fiber at stack index 1 (its tag at 2) with nargs values on top
 * (coroutine.resume's results); whether L is the fiber it runs now; what a
 * fiber yields when it waits on a promise (ready 0) and what tend.receive
 * answers when an outcome is ready (ready 1); whether one is ready for a;
 * taking the oldest, which becomes a's wake (its fiber's tag, 0 for none);
 * dropping a tag (its waits end, no outcome of theirs is taken). */
int tend_sched_fiber_resume(lua_State *L, tend_host *h, int nargs);
/* Around a resume from L of a coroutine the actor made (fiber.h): begin
 * returns whether L can yield; end, 1 when the coroutine waits in tend;
 * then the caller returns nested_wait (k resumes the coroutine again). */
int tend_sched_nested_begin(lua_State *L, tend_host *h);
int tend_sched_nested_end(tend_host *h, int yieldable);
int tend_sched_nested_wait(lua_State *L, tend_host *h, lua_KContext ctx,
                           lua_KFunction k);
int tend_sched_in_fiber(const tend_host *h, const lua_State *L);
const void *tend_fiber_key(int ready);
int tend_actor_fiber_ready(const tend_actor *a);
uint32_t tend_actor_fiber_take(lua_State *L, tend_host *h, tend_actor *a);
void tend_actor_fiber_drop(lua_State *L, tend_host *h, tend_actor *a,
                           uint32_t tag);
/* The running actor's code resumes co (NULL: back in its own coroutine),
 * armed for preemption too; returns the innermost one before. */
lua_State *tend_preempt_inner(tend_host *h, lua_State *co);

/* ==== supervision ====================================================== */

/* -- names */
/* The live actor the string at idx names (a registered name, or a path
 * starting with '/'), or NULL. */
tend_actor *tend_names_lookup(lua_State *L, tend_host *h, int idx);
/* Gives a the name at stack index name; raises (naming fn) when it is
 * taken or a has a name. */
void tend_names_register(lua_State *L, tend_host *h, tend_actor *a, int name,
                         const char *fn);
/* Removes the name at stack index name; 1 when it named an actor. */
int tend_names_unregister(lua_State *L, tend_host *h, int name);
/* Pushes a list of the registered names, sorted. */
void tend_names_push_all(lua_State *L, tend_host *h);
/* Pushes a's registered name, or nil. */
void tend_names_push_name(lua_State *L, tend_host *h, const tend_actor *a);

/* -- the stash and receive timeouts */
/* Gives a a stash of at most capacity messages (at spawn); raises when
 * memory is out. */
void tend_stash_enable(lua_State *L, tend_actor *a, uint32_t capacity);
/* Stashes the message a receives now; raises (naming fn) when it cannot. */
void tend_stash_push(lua_State *L, tend_host *h, tend_actor *a, const char *fn);
/* Puts a's stash in front of its user queue; returns how many. */
uint32_t tend_stash_unstash_all(tend_host *h, tend_actor *a);
/* How many messages a keeps. */
uint32_t tend_stash_size(const tend_actor *a);
/* Clears a's receive timeout. */
void tend_rtimeout_clear(lua_State *L, tend_host *h, tend_actor *a);
/* Sets a's receive timeout to ns (> 0) with the message at stack index
 * msg; returns 0, or -1 when memory is out (nothing changed). */
int tend_rtimeout_set(lua_State *L, tend_host *h, tend_actor *a, int64_t ns,
                      int msg);
/* a's receive timeout in ns, 0 for none. */
int64_t tend_rtimeout_get(const tend_actor *a);

/* -- backoff supervisors */
/* What the child is made of: stack indices (0: none) of its factory, its
 * args, its name (0: "child"), the reply while it is stopped and the
 * final-stop predicate; and the strategy for it (NULL: every failure
 * backs off), with its decider (0: none). */
typedef struct tend_backoff_child {
  int factory, args, name, reply, final_stop;
  int handler; /* stack index of handler_while_stopped (a ref), or 0 */
  const tend_strategy *strategy;
  int decider;
} tend_backoff_child;
typedef struct tend_backoff_sup tend_backoff_sup; /* a backoff's state */

/* Spawns a backoff supervisor under parent (options o, all checked);
 * pushes its ref. Raises (naming fn) when it cannot, nothing spawned. */
tend_actor *tend_backoff_spawn(lua_State *L, tend_host *h, tend_actor *parent,
                               const tend_backoff_cfg *cfg,
                               const tend_backoff_child *child,
                               const tend_spawn_opts *o, const char *fn);
/* a's backoff state, or NULL when a is no backoff supervisor. */
tend_backoff_sup *tend_backoff_of(const tend_actor *a);
/* Its current child while that is neither stopping nor dead, or NULL. */
tend_actor *tend_backoff_current_child(tend_host *h, const tend_backoff_sup *b);
/* Its restarts since the last reset. */
uint32_t tend_backoff_restarts(const tend_backoff_sup *b);
/* tend.backoff.reset(a): a's backoff starts over (Akka's Reset). */
void tend_backoff_reset_sup(lua_State *L, tend_host *h, tend_actor *a);
/* ctx:reset_backoff() from a: 1 if a is the child of a backoff supervisor
 * (its backoff starts over), else 0. */
int tend_backoff_reset(lua_State *L, tend_host *h, tend_actor *a);

/* -- typed supervision: clauses by error kind (Akka Typed) */
typedef enum tend_typed_kind {
  TEND_TYPED_RESTART,
  TEND_TYPED_RESUME,
  TEND_TYPED_STOP,
  TEND_TYPED_RESTART_WITH_LIMIT,
  TEND_TYPED_RESTART_WITH_BACKOFF
} tend_typed_kind;

/* What a clause does (made and validated once by the API's builders). */
typedef struct tend_typed_action {
  tend_typed_kind what;
  tend_limit limit;       /* RESTART_WITH_LIMIT */
  tend_delay_cfg delays;  /* RESTART_WITH_BACKOFF */
  int64_t reset_after_ns; /* RESTART_WITH_BACKOFF: 0 = min_backoff */
  int64_t max_restarts;   /* RESTART_WITH_BACKOFF: -1 unlimited */
  uint32_t stash;         /* RESTART_WITH_BACKOFF: 0 = unbounded */
} tend_typed_action;

typedef struct tend_typed_clause {
  char *kind; /* error kind, or "*" (owned) */
  tend_typed_action action;
} tend_typed_clause;

/* The name of a clause's action ("restart_with_backoff", ...). */
const char *tend_typed_name(tend_typed_kind k);
/* Spawns a typed actor under parent: factory at stack index factory, n
 * clauses (kinds copied); pushes its ref; raises, nothing spawned. */
tend_actor *tend_typed_spawn(lua_State *L, tend_host *h, tend_actor *parent,
                             int factory, const tend_typed_clause *c,
                             uint32_t n, const tend_spawn_opts *o);
/* ctx:reset_backoff() from typed actor a: 1, or 0 if a is not typed. */
int tend_typed_reset(tend_actor *a);
/* The actor's code raised the error at the top of L's stack (popped). */
void tend_actor_fail(lua_State *L, tend_host *h, tend_actor *a);
/* w watches (id, gen), whose ref is at stack index ref_idx (or 0: one is
 * made); msg_idx: stack index of a custom message or 0. A dead target is
 * notified at once ("unknown"), a disconnected proxy too ("noconnection").
 * also_restarts: such a watch with a message fires at a restart too.
 * remove: w stops watching (id, gen); no notification comes afterwards. */
void tend_watch_add(lua_State *L, tend_host *h, tend_actor *w, uint32_t id,
                    uint32_t gen, int ref_idx, int msg_idx);
void tend_watch_also_restarts(tend_host *h, tend_actor *w, uint32_t id,
                              uint32_t gen);
void tend_watch_remove(lua_State *L, tend_host *h, tend_actor *w, uint32_t id,
                       uint32_t gen);

/* ==== errors =========================================================== */

/* An error value is a table {kind, message} with this metatable. */
#define TEND_ERROR_MT "tend.Error"

/* Pushes a new error value {kind, message}. */
void tend_error_new(lua_State *L, const char *kind, const char *message);
/* Is the value at idx an error value? */
int tend_error_is(lua_State *L, int idx);
/* Adds "src:line: " of the function at level to b (nothing without one). */
void tend_error_add_where(luaL_Buffer *b, lua_State *L, int level);
/* Pushes "src:line: " of the function at level (none without a line)
 * and the string at idx, made one string at once. */
void tend_error_push_where_msg(lua_State *L, int level, int idx);
/* Pushes a traceback of L1 from level (luaL_traceback's format). */
void tend_traceback(lua_State *L, lua_State *L1, int level);
/* Pushes lua_pcall's message handler: any error becomes an error value. */
void tend_error_push_handler(lua_State *L);
/* Pushes an error of kind, message "prefix: <the error at idx>", keeping
 * the error at idx as its cause (and its traceback). */
void tend_error_wrap(lua_State *L, int idx, const char *kind,
                     const char *prefix);
/* Pushes "kind: message" for the error value at idx. */
void tend_error_describe(lua_State *L, int idx);
/* For an error the environment raised (NatsError, ListenError,
 * NodeError), pushes its one line "src:line: Kind: message" and returns 1;
 * else pushes nothing and returns 0. */
int tend_error_push_brief(lua_State *L, int idx);
/* Raises Interrupted (Ctrl-C at the REPL). */
int tend_error_interrupted(lua_State *L);
/* A type name for error messages ("an actor ref", "a table", ...). */
const char *tend_typename(lua_State *L, int idx);

#include "runtime/tend_io.h" /* the face, part two: trace, I/O, nodes */
/* Would an event of the quiet kind (logged at debug) go anywhere? */
int tend_event_wanted(const tend_host *h);

#endif
