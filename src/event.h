/* event: the lifecycle events of the host (DESIGN §6): spawn, start, fail,
 * directive, restart, backoff, reset, give_up, stop, terminated, escalate,
 * dead_letter, stash_drop, chaos. Every event goes through tend_event_emit,
 * which writes it as one JSON line to the trace file (--trace), to stderr
 * (tend.trace(true)), queues it for a Lua function (tend.trace(fn), called
 * from the loop between turns), and logs it. Keys come in a fixed order and
 * numbers in a fixed format, so traces compare byte for byte. */
#ifndef TEND_EVENT_H
#define TEND_EVENT_H

#include <lua.h>
#include <stdio.h>

#include "host.h"

typedef struct tend_event {
  const char *ev;        /* event name */
  tend_actor *actor;     /* where it happened, or NULL */
  const char *path;      /* its path when actor is NULL ("/deadLetters") */
  const char *kind;      /* error kind, or NULL */
  const char *message;   /* error message, or NULL */
  const char *directive; /* directive: what was decided */
  const char *clause;    /* directive: the decider clause, "default", ... */
  int64_t window[3];     /* directive: restarts used, allowed, within (s);
                            window[1] < 0: none */
  int64_t count;         /* restart count, or -1 */
  int64_t incarnation;   /* incarnation, or -1 */
  int64_t delay_ns;      /* delay chosen, or -1 */
  double draw;           /* the random draw behind the delay, or -1 */
  const char *algorithm; /* backoff algorithm, or NULL */
  const char *reason;    /* stop, terminated: "normal", "shutdown", a kind */
  const char *to;        /* chaos: the other end of a link, or NULL */
  const char *detail;    /* a few words, or NULL */
} tend_event;

#define TEND_EVENT_INIT(name, a)                                             \
  {                                                                          \
    (name), (a), NULL, NULL, NULL, NULL, NULL, {-1, -1, -1}, -1, -1, -1, -1, \
        NULL, NULL, NULL, NULL                                               \
  }

/* Is anyone listening beyond the log? (cheap check before building one) */
static inline int tend_event_traced(const tend_host *h) {
  return h->trace_file != NULL || h->trace_stderr || h->trace_fn_ref > 0;
}

/* Would an event of the quiet kind (logged at debug) go anywhere? */
static inline int tend_event_on(const tend_host *h) {
  return tend_event_traced(h) || h->log_level >= TEND_LOG_DEBUG;
}

void tend_event_emit(lua_State *L, tend_host *h, const tend_event *e);
/* Calls the tend.trace function with the events queued since (main
 * thread, between turns). */
void tend_event_flush(lua_State *L, tend_host *h);
/* Opens the trace file (--trace); returns 0, or -1 with errno. */
int tend_trace_open(tend_host *h, const char *path);
void tend_trace_close(tend_host *h);

#endif
