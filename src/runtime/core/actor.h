/* actor: the actor record: creation, addressing (ids, refs, paths), sending
 * and dead letters. Its life (start, stop, death) is lifecycle.h; what
 * happens when it fails is supervise.h.
 *
 * An actor's record is a Lua full userdata (metatable "tend.Ctx": it is also
 * the `ctx` that behaviors receive). While the actor lives, the host's anchor
 * table keeps it (anchors[id]); after death a stale ctx still points at valid
 * memory whose state is DEAD. Its user values hold the Lua side:
 *   1 behavior  (function or hook table; nil before start)
 *   2 factory   (function; kept for restarts)
 *   3 ref       (the actor's canonical tend.Ref, made on first use; its
 *                own user value keeps the actor's path, made once: at
 *                spawn for a named actor, at first use for an anonymous
 *                one, and kept after death)
 * A coroutine parked in sleep/ask is anchored in the host's parked table.
 * Everything else C keeps in the record or in its ext (below).
 *
 * Invariants: an actor is in the run queue at most once (QUEUED flag); a
 * waiting actor (wait != NONE) is never in the run queue for its mail, only
 * once woken; children die before their parent. */
#ifndef TEND_ACTOR_H
#define TEND_ACTOR_H

#include <lua.h>
#include <stddef.h>
#include <stdint.h>

#include "base/mailbox.h"
#include "base/strategy.h"
#include "runtime/tend.h" /* waits, restart types, overflow */

typedef struct tend_host tend_host;
typedef struct tend_timer tend_timer;
typedef struct tend_promise tend_promise;

/* "tend": tells a ctx from other userdata */
#define TEND_ACTOR_MAGIC 0x74656e64u
#define TEND_CTX_MT "tend.Ctx"

enum {
  TEND_UV_BEHAVIOR = 1,
  TEND_UV_FACTORY,
  TEND_UV_REF,
  TEND_UV_COUNT = TEND_UV_REF
};

/* What an id in the host's id table names. */
typedef enum tend_entity_kind {
  TEND_ENTITY_ACTOR,
  TEND_ENTITY_PROMISE
} tend_entity_kind;

/* Where a RESTARTING actor is in the restart sequence (design §5.1). */
typedef enum tend_restart_phase {
  TEND_RESTART_NONE,     /* not restarting */
  TEND_RESTART_PRE,      /* pre_restart (or the default's post_stop) runs */
  TEND_RESTART_CHILDREN, /* waits for its stopping children to die */
  TEND_RESTART_HELD,     /* stopped with its group; waits for the group to
                            be stopped (RESTART_GO) before it is rebuilt */
  TEND_RESTART_FACTORY,  /* the factory builds the new instance */
  TEND_RESTART_POST      /* post_restart (default: pre_start) runs */
} tend_restart_phase;

/* Whose failure a restart ends. */
typedef enum tend_restart_for {
  TEND_RESTART_FOR_GROUP, /* a sibling's (group) or its parent's (survivor):
                             it was not failed itself */
  TEND_RESTART_FOR_SELF   /* its own: when done, it resumes its subtree */
} tend_restart_for;

/* A failure on its way to a decision. */
typedef enum tend_failure {
  TEND_FAILURE_NONE,   /* not failed */
  TEND_FAILURE_PENDING /* failed, subtree suspended; its supervisor (or its
                          typed clauses) will decide */
} tend_failure;

/* Code an actor runs in the worker (for the continuation after a yield). */
typedef enum tend_actor_op {
  TEND_OP_NONE,
  TEND_OP_FACTORY,     /* factory(ctx, args...) */
  TEND_OP_PRE_START,   /* hooks.pre_start(self, ctx) */
  TEND_OP_RECEIVE,     /* behavior(msg, ctx) or hooks.receive(self, msg, ctx) */
  TEND_OP_POST_STOP,   /* hooks.post_stop(self, ctx) */
  TEND_OP_TASK,        /* a task's function (main chunk, tend.after) */
  TEND_OP_DECIDE,      /* the decider on a child's failure (err, child) */
  TEND_OP_PRE_RESTART, /* hooks.pre_restart(self, err, msg, ctx) */
  TEND_OP_RESTART_STOP,      /* default pre_restart: hooks.post_stop */
  TEND_OP_POST_RESTART,      /* hooks.post_restart(self, err, ctx) */
  TEND_OP_RESTART_FACTORY,   /* a restart's factory(ctx, args...) */
  TEND_OP_RESTART_PRE_START, /* a restart's default post_restart: pre_start */
  TEND_OP_KINDS
} tend_actor_op;

/* What an actor is: fixed when it is made (tend_actor_spawn, the
 * guardians, a remote proxy; typed and backoff set right after their
 * spawn), exactly one of these (a->role). */
typedef enum tend_actor_role {
  TEND_ROLE_PLAIN,    /* an actor with a behavior (tend.spawn, ctx:spawn) */
  TEND_ROLE_TASK,     /* a task: runs its function once, then stops */
  TEND_ROLE_GUARDIAN, /* /user or /system: no behavior of its own */
  TEND_ROLE_REMOTE,   /* a proxy of an actor on another node (remote.h): no
                         behavior, no parent */
  TEND_ROLE_BACKOFF,  /* a backoff supervisor (ext->backoff) */
  TEND_ROLE_TYPED,    /* handles its own failures (ext->typed) */
  TEND_ROLES
} tend_actor_role;

/* What an actor does or has now: any number of these (a->flags). */
enum tend_actor_flags {
  TEND_AF_QUEUED = 1u << 0,    /* in the run queue */
  TEND_AF_HOOKS = 1u << 1,     /* behavior is a hook table, not a function */
  TEND_AF_NAMED = 1u << 2,     /* spawned with a name (its path is cached) */
  TEND_AF_POST_STOP = 1u << 3, /* post_stop has begun (runs at most once) */
  TEND_AF_SURVIVOR = 1u << 4,  /* child kept through its parent's pre_restart:
                                  restarted once the parent is */
  TEND_AF_FROZEN = 1u << 5,    /* tend.chaos.freeze: takes no messages */
  TEND_AF_NOTICES = 1u << 6,   /* has DeathWatch notices in ext->notices */
  TEND_AF_GROUP = 1u << 7,     /* in its parent's group restart (supervise.c) */
  TEND_AF_HELD = 1u << 8,      /* held in a group restart: its instance's
                                  post_stop already ran (a stop skips it) */
  TEND_AF_GROUP_SUSPENDED = 1u << 9, /* suspended by its group's restart until
                                        rebuilt (takes no more old mail) */
  TEND_AF_PARKED = 1u << 10, /* its coroutine is parked (host's parked table) */
  TEND_AF_REGISTERED = 1u << 11, /* has a registered name (names.h) */
  TEND_AF_PROCESS = 1u << 12,    /* owns OS processes (process.h) */
  TEND_AF_SOCKET = 1u << 13,     /* owns sockets or listeners (tcp.h) */
  TEND_AF_HTTP = 1u << 14,       /* has made HTTP requests (http.h) */
  TEND_AF_INTERNAL = 1u << 15,   /* one of tend's own tasks (a simulated
                                    transfer, the REPL's watch) or its child:
                                    its events, and the actor in tend.tree and
                                    tend.ps, show only with trace_internal */
  /* a proxy whose node is not connected now (remote.h) */
  TEND_AF_DISCONNECTED = 1u << 16,
  /* a proxy of an actor on another scheduler of this process
     (schedulers.h) */
  TEND_AF_SCHED = 1u << 17,
  /* watched by proxies on other schedulers (schedulers.h) */
  TEND_AF_WATCHED_ABROAD = 1u << 18,
  /* its factory or pre_start failed (InitError): it has no instance
     that started, so no hook runs (OTP runs no terminate after a failed
     init; the instance before a failed restart ran its pre_restart and
     post_stop once); a resume restarts it, and the next instance built
     clears it and starts with pre_start, not post_restart (Akka: a
     failed creation is created anew) */
  TEND_AF_SPENT = 1u << 19,
};

typedef struct tend_watch tend_watch;
typedef struct tend_backoff_sup tend_backoff_sup;
typedef struct tend_typed tend_typed;
typedef struct tend_stash tend_stash;
typedef struct tend_rtimeout tend_rtimeout;

/* What only some actors need, allocated on first use (a strategy, spawn
 * args, a failure, DeathWatch), freed at death. Each *_ref is a registry
 * ref owned by this record (LUA_NOREF when unset), released by
 * tend_actor_ext_free. */
typedef struct tend_actor_ext {
  tend_strategy strategy;   /* for its children (when has_strategy) */
  int has_strategy;         /* 0: the default strategy */
  int decider_ref;          /* the strategy's decider (function or table) */
  int args_ref;             /* spawn args (a list), passed to the factory */
  int error_ref;            /* the error it failed (or stopped) with */
  int failed_msg_ref;       /* the message whose processing failed */
  int cause_ref;            /* the error its restart is for */
  int on_wait_ref;          /* a function run before its code is suspended (a
                               stream producer's flush: tend_actor_set_on_wait) */
  tend_window child_window; /* its restarts (one_for_one budget) */
  tend_window group_window; /* its children's group restarts (groups) */
  tend_watch *watchers;     /* watches on this actor */
  uint32_t restart_watches; /* how many of them fire at a restart too */
  tend_watch *watching;     /* watches this actor holds, on live targets */
  tend_watch *gone;         /* watches it holds whose target is gone (their
                               notice on its way): found without a walk of
                               `watching` (design §5.6) */
  tend_queue notices;       /* terminated notices not yet in the user queue
                               (Akka's DeathWatchNotification): appended
                               when it next steps outside a wait */
  uint32_t escalated_id;    /* child whose failure it escalated, or 0 */
  uint32_t escalated_gen;
  uint32_t deciding_id; /* child whose failure the decider judges */
  uint32_t deciding_gen;
  uint32_t cause_id; /* the actor whose failure its restart is for */
  uint32_t cause_gen;
  int group_active;          /* a group restart of its children is under way */
  uint32_t group_at_id;      /* the member that restart waits for (0: none): */
  uint32_t group_at_gen;     /* the ones younger than it are held already */
  tend_backoff_sup *backoff; /* backoff supervisor state, or NULL */
  tend_typed *typed;         /* typed supervision clauses, or NULL */
  tend_stash *stash;         /* ctx:stash's messages and bound (stash.h) */
  tend_rtimeout *rtimeout;   /* ctx:set_receive_timeout (rtimeout.h) */
  int receiving_ref;         /* > 0: the registry slot where the scheduler
                                keeps the message being received (set by
                                the stash, which owns it) */
  int64_t received_at;       /* when its behavior last got a message (kept
                                while rtimeout is set) */
  uint32_t hold;             /* > 0: waiting for a restart, its mailbox
                                keeps the newest `hold` messages (typed
                                backoff), else its own capacity rules */
  int64_t max_ns;            /* max_message_time, 0 for none */
  const char *max_path;      /* with max_ns: its path, kept by its ref (the
                                watchdog names a stuck actor without Lua) */
  uint64_t msg_start;        /* uv_hrtime() when the message began */
  tend_promise *held;        /* asks waiting for its reply (promise.h) */
  tend_promise *fibers;      /* its fibers' pending promises (promise.h) */
  tend_promise *fibers_ready, *fibers_ready_tail; /* and their outcomes */
  uint64_t busy_since;     /* preempted in its current call: uv_hrtime()
                              when that call began, else 0 (preempt.h) */
  int64_t childless_until; /* spawned with a custom strategy: the end of
                              its first second, until judged (advice.h);
                              else 0 */
  int64_t shutdown_ns;     /* time allowed for post_stop (TEND_SHUTDOWN_NS
                              unless set); 0 is brutal_kill */
} tend_actor_ext;

typedef struct tend_actor tend_actor;
struct tend_actor {       /* laid out without padding: 176 bytes */
  uint8_t kind;           /* TEND_ENTITY_ACTOR; first, as in tend_promise */
  uint8_t state;          /* tend_actor_state */
  uint8_t restart;        /* tend_restart_phase while RESTARTING */
  uint8_t restart_for;    /* tend_restart_for while RESTARTING */
  uint8_t failure;        /* tend_failure */
  uint8_t wait;           /* tend_actor_wait */
  uint8_t wake;           /* tend_wake once WOKEN */
  uint8_t op;             /* tend_actor_op in progress */
  uint8_t stop_reason;    /* tend_stop_reason, once STOPPING */
  uint8_t overflow;       /* tend_overflow when capacity > 0 */
  uint8_t restart_type;   /* tend_restart_type */
  uint8_t suspends;       /* > 0: takes no user messages (its own failure
                             and its ancestors' failures each count one) */
  uint8_t terminated_msg; /* the message in process is a `terminated` */
  uint8_t role;           /* tend_actor_role: what it is (fixed) */
  uint8_t wake_vtype;     /* the tend_value_type of wake_u */
  uint32_t magic;         /* TEND_ACTOR_MAGIC */
  uint32_t id, gen;       /* slot in host->ids and its generation */
  uint32_t seq;           /* spawn number; names anonymous actors "$seq" */
  uint32_t flags;         /* tend_actor_flags */
  uint32_t restarts;      /* restarts so far */
  uint32_t capacity;      /* user-queue bound, 0 = unbounded */
  uint32_t wait_seq;      /* bumped at each wait; WAKE timers carry it */
  uint32_t sender_id;     /* sender of the message being processed */
  uint32_t sender_gen;
  tend_actor *parent;                      /* supervisor; NULL for guardians */
  tend_actor *first_child, *last_child;    /* children in start order */
  tend_actor *prev_sibling, *next_sibling; /* within the parent's list */
  tend_actor *next_run;                    /* next in the run queue */
  tend_mailbox mbox;                       /* system and user queues */
  tend_timer *timers;    /* timers this actor owns (cancelled at death) */
  tend_promise *promise; /* outstanding ask, or NULL (promise.h) */
  tend_actor_ext *ext;   /* see above, or NULL */
  tend_value_u wake_u;   /* WOKEN by a reply: the reply (by a failed ask:
                            the AskFailed error), owned; its type is
                            wake_vtype (tend_actor_wake_value) */
};

/* a's reply as one value, and setting it (the old one is not dropped). */
static inline tend_value tend_actor_wake_value(const tend_actor *a) {
  tend_value v;
  v.type = (tend_value_type)a->wake_vtype;
  v.u = a->wake_u;
  return v;
}
static inline void tend_actor_set_wake_value(tend_actor *a, tend_value v) {
  a->wake_vtype = (uint8_t)v.type;
  a->wake_u = v.u;
}

/* The time an actor's post_stop is allowed by default (5 s, Akka's
 * coordinated-shutdown phase); INT64_MAX / 4 and above: no limit. */
#define TEND_SHUTDOWN_NS ((int64_t)5000000000)
/* The time allowed for a's post_stop. 0 is OTP's brutal_kill: stopped by
 * its supervisor, its parent or the host, a dies once its children are
 * gone, post_stop not run, reason "killed". */
int64_t tend_actor_shutdown_ns(const tend_actor *a);
/* Sets it (kept in the ext unless it is the default); 0 when out of
 * memory. */
int tend_actor_set_shutdown_ns(tend_actor *a, int64_t ns);

/* Creates an actor record under parent (anchored, with an id; nothing
 * else); pushes its userdata. Raises when ids run out. */
tend_actor *tend_actor_new(lua_State *L, tend_host *h, tend_actor *parent);
/* Creates a guardian (/user, /system): running, no behavior. Pops nothing. */
tend_actor *tend_actor_guardian(lua_State *L, tend_host *h, const char *name);
/* Gives a the strategy s for its children; the decider (function or
 * table) at stack index decider, or 0 for none. */
void tend_actor_set_strategy(lua_State *L, tend_actor *a,
                             const tend_strategy *s, int decider);

/* Pushes a's path ("/user/a/b"), computed once. */
void tend_actor_push_path(lua_State *L, const tend_host *h, tend_actor *a);
/* Sets the path of a, whose record is at stack index ctx, to the string at
 * the top (popped). */
void tend_actor_set_path(lua_State *L, tend_actor *a, int ctx);
/* Pushes the path cached for the record at stack index ctx (in its ref,
 * or, dead with none, in the record) and returns 1, or pushes nothing and
 * returns 0. */
int tend_actor_push_cached_path(lua_State *L, int ctx);
/* Pushes a's canonical ref (made on first use). */
void tend_actor_push_ref(lua_State *L, tend_host *h, tend_actor *a);
/* Pushes a's path, then its canonical ref, which holds that path (a live
 * actor, still anchored; its record at stack index ctx). */
void tend_actor_push_path_ref(lua_State *L, const tend_host *h, tend_actor *a,
                              int ctx);
/* Pushes the canonical ref of a, which dies (its record at stack index
 * ctx): it keeps saying where a was, its path made when first asked. Nil
 * when none was made and no one watches a: none is needed (the record
 * keeps its parent's path for tend_actor_push_cached_path). */
void tend_actor_push_dead_ref(lua_State *L, const tend_host *h, tend_actor *a,
                              int ctx);
/* Replaces a's record, at the top of the stack, with its canonical ref. */
void tend_actor_record_to_ref(lua_State *L, const tend_actor *a);
/* When a's behavior is a hook table with a function `name`, and not
 * spent (TEND_AF_SPENT), pushes that function and the table (self) and
 * returns 1; else pushes nothing and returns 0. (A raising lookup gives a
 * function that raises: value.h.) */
int tend_actor_push_hook(lua_State *L, const tend_host *h, tend_actor *a,
                         const char *name);
/* Pushes a's userdata (ctx). */
void tend_actor_push_ctx(lua_State *L, const tend_host *h, const tend_actor *a);
/* The live actor (id, gen) names, or NULL. */
tend_actor *tend_actor_live(tend_host *h, uint32_t id, uint32_t gen);

/* a's ext record, allocated on first use; NULL when memory is out. */
tend_actor_ext *tend_actor_ext_get(tend_actor *a);
/* Frees the ext records h keeps for reuse (at close). */
void tend_actor_ext_pool_free(tend_host *h);
/* Frees a's ext and what it owns (at death or close). */
void tend_actor_ext_free(lua_State *L, tend_host *h, tend_actor *a);
/* Pushes the Lua value of one of a's ext refs (nil when unset). */
void tend_actor_push_ext(lua_State *L, const tend_actor *a, size_t field);
/* Sets one of a's ext refs to the value at the top (popped). Without
 * memory for the ext, the value is dropped. */
void tend_actor_set_ext(lua_State *L, tend_actor *a, size_t field);
#define TEND_EXT(f) offsetof(tend_actor_ext, f)

static inline int tend_actor_takes_mail(const tend_actor *a) {
  return a->state == TEND_ACTOR_RUNNING && a->suspends == 0;
}

/* Preempted in the middle of a call (a message, a task, a hook): its
 * coroutine waits in the run queue to go on (preempt.h). */
static inline int tend_actor_busy_in_call(const tend_actor *a) {
  return a->wait == TEND_WAIT_WOKEN && a->op != TEND_OP_NONE && a->ext &&
         a->ext->busy_since != 0;
}

static inline int tend_actor_has_work(const tend_actor *a) {
  return a->mbox.sys.head != NULL ||
         ((a->flags & TEND_AF_NOTICES) && a->wait == TEND_WAIT_NONE) ||
         (tend_actor_takes_mail(a) && a->mbox.user.head != NULL);
}

#endif
