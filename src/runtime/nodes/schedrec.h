/* schedrec: the records the schedulers' two files share (schedulers.c:
 * the set, its pump and threads, names; schedmail.c: the envelopes
 * between schedulers, proxies, spawning elsewhere, deaths watched from
 * elsewhere). See schedulers.h. */
#ifndef TEND_SCHEDREC_H
#define TEND_SCHEDREC_H

#include <lua.h>
#include <stdatomic.h>
#include <stdint.h>
#include <uv.h>

#include "base/mpsc.h"
#include "runtime/nodes/schedulers.h"

typedef enum env_kind {
  ENV_MSG,     /* data: the message, then its sender (a ref or nil), for
                  (to_id, to_gen); a: where the sender's bytes begin */
  ENV_WATCH,   /* the proxy (a, b) on `from` watches (to_id, to_gen) */
  ENV_DOWN,    /* data: {reason}: the proxy (to_id, to_gen) ends */
  ENV_CONTROL, /* (to_id, to_gen) is stopped (a = 0), or gets a Kill or a
                  PoisonPill (a: its tend_msg_kind) */
  ENV_SPAWN,   /* data: the request (spawn_req's strings, packed); the
                  answer goes to the pending ask (a, b) on `from` */
  ENV_QUERY,   /* data: a lua_CFunction run there; its result goes to the
                  pending ask (a, b) on `from` (schedquery.c) */
  ENV_QUIT     /* the scheduler's tree stops (a = 1: at once) */
} env_kind;

typedef struct envelope {
  tend_mpsc_node node; /* first: a node is its envelope */
  env_kind kind;
  int from;               /* the scheduler it comes from */
  uint32_t to_id, to_gen; /* its target on the scheduler it goes to */
  uint32_t a, b;          /* see env_kind */
  size_t len;
  char data[]; /* msgpack (codec.h) */
} envelope;

/* A name under /user, taken on one scheduler (names are unique across). */
/* A registered name (tend.register) and the actor it names. */
typedef struct reg_name {
  char *name;
  int sched;
  uint32_t id, gen;
  char *path;
} reg_name;

/* Process groups (tend.pg) across schedulers: schedgroups.c. */
typedef struct pg_group pg_group;
typedef struct pg_member pg_member;

typedef struct user_name {
  char *name;
  int sched;
  uint32_t id, gen; /* its actor, once spawned (0: not yet) */
} user_name;

struct tend_scheds {
  int n;
  int threaded; /* real clock: 1..n-1 each run on a thread of its own */
  tend_host *h[TEND_SCHEDULERS_MAX];
  tend_mpsc inbox[TEND_SCHEDULERS_MAX];
  /* Real clock: each one's wake-up on its loop, and whether it is open
   * (posting to a closed one drops the envelope), under lock[k]. */
  uv_async_t *wake[TEND_SCHEDULERS_MAX];
  int open[TEND_SCHEDULERS_MAX];
  /* Real clock: before its loop sleeps, scheduler k looks at its inbox
   * for a while (look[k], a prepare handle); while it looks, spinning[k]
   * is 1 and a post does not wake it (schedulers.c: on_look). */
  uv_prepare_t *look[TEND_SCHEDULERS_MAX]; /* NULL: it does not look */
  atomic_int spinning[TEND_SCHEDULERS_MAX];
  /* scheduler k's own: whether it looks now, its looks in a row that
   * found nothing, and when it last went to sleep without looking */
  int looks[TEND_SCHEDULERS_MAX], misses[TEND_SCHEDULERS_MAX];
  uint64_t slept_at[TEND_SCHEDULERS_MAX];
  uv_mutex_t lock[TEND_SCHEDULERS_MAX];
  uv_thread_t thread[TEND_SCHEDULERS_MAX];
  int busy_flag[TEND_SCHEDULERS_MAX]; /* its own thread's view */
  atomic_int pending;                 /* envelopes posted, not yet taken */
  atomic_int busy;                    /* schedulers 1..n-1 with work */
  atomic_uint seq;                    /* anonymous names' counter */
  atomic_uint turn;                   /* "spread" under the real clock */
  uv_sem_t ready;                     /* a thread opened its host (or not) */
  int failed;                         /* a thread could not open its host */
  uv_mutex_t names_lock;              /* names and regs */
  user_name *names;
  int n_names, cap_names;
  reg_name *regs; /* registered names (tend.register) of every scheduler */
  int n_regs, cap_regs;
  /* how many of regs scheduler k holds: written under the lock and only
   * by k's own thread (its actors' names), so k reads it without */
  int held[TEND_SCHEDULERS_MAX];
  /* process groups' members (schedgroups.c): the groups by key, the
   * members by (group, scheduler, actor), and by actor; a table of each
   * of cap_pg chains (0: none yet) */
  pg_group **pg_groups;
  pg_member **pg_members, **pg_actors;
  size_t n_pg_groups, n_pg, cap_pg;
  int held_pg[TEND_SCHEDULERS_MAX]; /* as held, for pg */
};

#define NO_LIMIT ((size_t)1 << 30) /* the codec's bound within a process */
#define AWAY "move to another scheduler" /* the codec's words for a refusal */

/* schedmail.c */
/* Queues an envelope for scheduler `to` (data: len bytes, may be NULL)
 * and wakes it. Returns -1 when out of memory or `to` is closed. */
int tend_sched_post(tend_host *h, int to, env_kind kind, uint32_t to_id,
                    uint32_t to_gen, uint32_t a, uint32_t b, const char *data,
                    size_t len);
/* h->sched_send and h->sched_control (host.h). */
void tend_sched_send(lua_State *L, tend_host *h, tend_actor *p, tend_value *v,
                     uint32_t sid, uint32_t sgen);
void tend_sched_control(tend_host *h, tend_actor *p, int what);
/* Hands h (a scheduler) its inbox, oldest first. */
void tend_sched_arrive_all(tend_host *h);
/* Sends scheduler `to`'s pending ask (id, gen) the value at idx (the
 * codec's copy; a value that cannot travel is dropped). */
void tend_sched_answer(lua_State *L, tend_host *h, int to, uint32_t id,
                       uint32_t gen, int idx);
/* The driver's death hook: proxies elsewhere end, a /user name goes. */
void tend_sched_death(lua_State *L, tend_host *h, tend_actor *a);

/* schedquery.c */
/* Answers the question in e (ENV_QUERY) from h's state. */
int tend_sched_answer_query(lua_State *L, tend_host *h, const envelope *e);

/* schedgroups.c */
/* a (dead) leaves every group it was in. */
void tend_sched_pg_forget(tend_host *h, tend_actor *a);
/* Frees every group and member (the schedulers are closing). */
void tend_sched_pg_free(tend_scheds *s);

/* schednames.c */
/* a's name (a child of /user) is free again. */
void tend_sched_release_name(lua_State *L, tend_host *h, tend_actor *a);
/* a (dead) no longer has a registered name anywhere. */
void tend_sched_reg_forget(tend_host *h, tend_actor *a);
/* Frees the lists of names (at the close). */
void tend_sched_names_free(tend_scheds *s);

/* schedulers.c */
/* Real clock, scheduler k >= 1: whether it has work now, kept in the
 * shared count (an arrival marks it busy before it stops being counted as
 * on its way, so the count never shows all idle in between). */
void tend_sched_note_busy(tend_host *h);
/* Real clock: scheduler 0 looks again when none works and nothing is on
 * its way. */
void tend_sched_wake0(tend_scheds *s);

#endif
