/* strategy: supervisor strategies as plain data, and the restart window
 * that enforces their limits (Akka's and Erlang's rules, design §5.2).
 * Knows nothing of Lua: the deciders live in lstrategy.c, the use of a
 * strategy on actors in supervise.c. */
#ifndef TEND_STRATEGY_H
#define TEND_STRATEGY_H

#include <stdint.h>

typedef enum tend_directive {
  TEND_RESUME,  /* keep state, go on with the next message */
  TEND_RESTART, /* new instance, same ref and mailbox */
  TEND_STOP,    /* stop the actor and its subtree */
  TEND_ESCALATE /* fail the supervisor with Escalated */
} tend_directive;

typedef enum tend_strategy_kind {
  TEND_ONE_FOR_ONE, /* the directive applies to the failed child */
  TEND_ALL_FOR_ONE, /* ... to every child */
  TEND_REST_FOR_ONE /* ... to the failed child and those started after it */
} tend_strategy_kind;

/* The boundary is OTP's (add_restart keeps entries >= Now - Period) in
 * both kinds: a restart exactly `within` old still counts, and a fixed
 * window is still open exactly `within` after it opened; one nanosecond
 * later it is out (sliding) or a new window opens (fixed). */
typedef enum tend_window_kind {
  TEND_WINDOW_SLIDING, /* restarts in the last `within` seconds, both ends
                          included (Erlang) */
  TEND_WINDOW_FIXED    /* a window opens at the first restart (Akka) */
} tend_window_kind;

typedef enum tend_on_limit {
  TEND_ON_LIMIT_STOP_CHILD, /* over the limit: stop the child (Akka) */
  TEND_ON_LIMIT_ESCALATE    /* over the limit: the supervisor fails (Erlang) */
} tend_on_limit;

/* Restart limit after Akka's special values: `max` < 0 means unlimited. */
typedef struct tend_limit {
  int64_t max;    /* restarts allowed per window; -1 unlimited */
  int64_t within; /* window length in ns; INT64_MAX = no window */
  tend_window_kind window;
} tend_limit;

typedef struct tend_strategy {
  tend_strategy_kind kind;
  tend_limit limit;
  tend_on_limit on_limit;
  int log;      /* 1: handled failures are logged */
  int stopping; /* 1: tend.stopping (every error stops) */
} tend_strategy;

/* Restart history of one child (one_for_one) or one supervisor (groups). */
typedef struct tend_window {
  int64_t *times; /* sliding: ring of the last `max` restart times */
  uint32_t cap;   /* its length */
  uint32_t head;  /* index of the oldest entry */
  uint32_t n;     /* entries in use */
  int64_t start;  /* fixed: when the current window opened */
  int64_t count;  /* fixed: restarts in it; total when within = no window */
} tend_window;

/* Normalizes (max_retries, within) as Akka does: (-1, inf) unlimited,
 * (-1, finite) one restart per window, (n, inf) n restarts in total. */
tend_limit tend_limit_make(int64_t max_retries, int64_t within_ns,
                           tend_window_kind window);
/* Records a restart at `now` if the limit allows it; returns 1 if allowed,
 * 0 if over the limit (nothing recorded), -1 out of memory. */
int tend_window_allow(tend_window *w, const tend_limit *lim, int64_t now);
/* Restarts the window currently counts (for describing and tracing). */
int64_t tend_window_used(const tend_window *w, const tend_limit *lim,
                         int64_t now);
void tend_window_free(tend_window *w);

/* The default strategy (one_for_one, no limit, the default decider) and
 * Akka's stoppingStrategy (every failure stops the child). */
tend_strategy tend_strategy_default(void);
tend_strategy tend_strategy_stopping(void);

const char *tend_directive_name(tend_directive d);
/* Parses a directive name; returns -1 when unknown. */
int tend_directive_parse(const char *name);

#endif
