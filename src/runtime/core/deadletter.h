/* deadletter: the log lines about messages that reached no behavior, as
 * Akka's DeadLetterListener writes them: a dead letter (no actor took the
 * message) and an unhandled message (its behavior returned
 * tend.unhandled), each at `info` with the message (shortened to
 * TEND_DL_SHOWN characters), its sender and its recipient. The first
 * TEND_DL_FIRST lines of an interval of TEND_DL_INTERVAL_NS (host clock,
 * so the virtual clock replays them) are written; the others are counted,
 * and one line says how many were suppressed, at the first of them after
 * the interval or when the host starts shutting down. While the host
 * shuts down nothing is logged (Akka's log-dead-letters-during-shutdown
 * = off). Counting (tend.stats) and the trace are send.c's. */
#ifndef TEND_DEADLETTER_H
#define TEND_DEADLETTER_H

#include <lua.h>
#include <stdint.h>

#define TEND_DL_FIRST 10                  /* lines per interval */
#define TEND_DL_INTERVAL_NS 10000000000LL /* 10 s */
#define TEND_DL_SHOWN 60                  /* characters of a message */

typedef struct tend_host tend_host;
typedef struct tend_actor tend_actor;

/* The rate limit's state (one per host). */
typedef struct tend_dl_limit {
  int open;            /* 1: an interval runs */
  int64_t since;       /* host time it began */
  uint32_t logged;     /* lines written in it */
  uint64_t suppressed; /* lines not written in it */
} tend_dl_limit;

/* A message that reached no behavior. */
typedef struct tend_letter {
  tend_actor *to;             /* its recipient, or NULL */
  int to_ref;                 /* else a stack index of a ref to it, or 0 */
  const char *to_name;        /* else what to call it (NULL: "nobody") */
  int msg;                    /* stack index of the message, 0: unknown */
  uint32_t from_id, from_gen; /* its sender (an actor or an ask), or 0 */
  const char *why;            /* why it was not delivered; NULL: unhandled */
} tend_letter;

/* Would a line be logged now? (info level, the host not shutting down) */
int tend_deadletter_on(const tend_host *h);
/* Logs l (when the level and the rate limit let it through). */
void tend_deadletter_log(lua_State *L, tend_host *h, const tend_letter *l);
/* Says how many lines the running interval suppressed, if any (the host
 * starts shutting down). */
void tend_deadletter_flush(tend_host *h);
/* Writes a shortened, deterministic picture of the value at idx into buf
 * (at most TEND_DL_SHOWN characters and "..."): strings quoted, tables
 * one level deep with string keys sorted, refs as Ref(path); no
 * metamethod runs. */
void tend_deadletter_describe(lua_State *L, tend_host *h, int idx, char *buf,
                              size_t size);

#endif
