/* backoff: the delay formulas of design §5.5 (Akka's exponential backoff
 * with several jitter modes, and the slotted truncated binary exponential
 * backoff) and the configuration of a backoff supervisor, as plain data.
 * Every random draw comes from the host's generator. */
#ifndef TEND_BACKOFF_H
#define TEND_BACKOFF_H

#include <stdint.h>

#include "base/rng.h"

typedef enum tend_backoff_algorithm {
  TEND_ALG_EXPONENTIAL, /* base = min(max, min * 2^n) (Akka) */
  TEND_ALG_SLOTTED      /* slot_time * (2^e - 1), e uniform in [0, slot] */
} tend_backoff_algorithm;

typedef enum tend_jitter {
  TEND_JITTER_AKKA,         /* base * (1 + u * random_factor) */
  TEND_JITTER_CAPPED,       /* the same, at most max_backoff */
  TEND_JITTER_FULL,         /* u * base */
  TEND_JITTER_EQUAL,        /* base/2 + u * base/2 */
  TEND_JITTER_DECORRELATED, /* min(max, min + u * (3 * prev - min)) */
  TEND_JITTER_NONE          /* base */
} tend_jitter;

typedef struct tend_delay_cfg {
  tend_backoff_algorithm algorithm;
  tend_jitter jitter;
  int64_t min_ns;       /* min_backoff */
  int64_t max_ns;       /* max_backoff */
  double random_factor; /* in [0, 1] */
  int64_t slot_ns;      /* slotted: slot_time */
  uint32_t ceiling;     /* slotted: highest slot (default 10) */
  int stay_at_ceiling;  /* slotted: 1 stay there, 0 back to slot 1 */
} tend_delay_cfg;

/* Where a sequence of delays stands. */
typedef struct tend_delay_state {
  uint32_t n;    /* delays drawn since the last reset (exponential n) */
  int64_t prev;  /* the last delay (decorrelated) */
  uint32_t slot; /* slotted: current slot, from 1 */
} tend_delay_state;

void tend_delay_reset(const tend_delay_cfg *c, tend_delay_state *s);
/* The next delay in ns; *draw gets the random draw used (u, or e for
 * slotted; -1 when none was drawn). Advances the state. */
int64_t tend_delay_next(const tend_delay_cfg *c, tend_delay_state *s,
                        tend_rng *rng, double *draw);

typedef enum tend_backoff_mode {
  TEND_BACKOFF_ON_FAILURE, /* restart after a failure; a normal stop ends */
  TEND_BACKOFF_ON_STOP     /* restart whenever the child stops */
} tend_backoff_mode;

typedef struct tend_backoff_cfg {
  tend_backoff_mode mode;
  tend_delay_cfg delays;
  int manual_reset;          /* 1: only ctx:reset_backoff() resets */
  int64_t reset_after_ns;    /* auto reset after this much running */
  int64_t max_retries;       /* restarts allowed, -1 unlimited */
  uint32_t stash;            /* capacity of the stash while stopped, 0 none */
  int reply_while_stopped;   /* 1: a fixed reply answers while stopped */
  int handler_while_stopped; /* 1: another actor takes them while stopped */
  int final_stop;            /* 1: a final-stop predicate is set */
  int default_stopping;      /* 1: the child's failures stop it (on_stop) */
} tend_backoff_cfg;

const char *tend_jitter_name(tend_jitter j);

/* The trap of a short reset_after: a child that usually runs longer than
 * reset_after before it fails finds its backoff reset at each failure, so
 * every restart waits the first delay and the delay never grows. This
 * notices TEND_RESET_TRAP_FAILURES such failures in a row, once. */
#define TEND_RESET_TRAP_FAILURES 3
typedef struct tend_reset_trap {
  uint32_t in_a_row; /* failures in a row that came after an auto reset */
  uint8_t reset;     /* the auto reset happened since the last failure */
  uint8_t told;      /* the trap was reported (it is, once) */
} tend_reset_trap;
/* The auto reset happened (the child ran reset_after) and undid some
 * restarts. */
void tend_reset_trap_reset(tend_reset_trap *t);
/* The child failed (or stopped, for a restart): returns 1 once, at the
 * TEND_RESET_TRAP_FAILURES-th failure in a row after an auto reset. */
int tend_reset_trap_failed(tend_reset_trap *t);

#endif
