/* event: the lifecycle events of the host (design §6). Every event goes
 * through tend_event_emit, which writes it as one JSON line (base/jsonl.h)
 * to the trace file (--trace) and to stderr (tend.trace(true)), queues it
 * for the Lua listeners (tend.trace(fn), called from the loop between
 * turns), and logs it. Keys come in a fixed order and numbers in a fixed
 * format, so traces compare byte for byte. The path of an actor is made
 * once (actor.h), not per event. */
#ifndef TEND_EVENT_H
#define TEND_EVENT_H

#include <lua.h>
#include <stdio.h>

#include "runtime/core/host.h"

/* The events, in the order of their names (tend_event_name). */
typedef enum tend_event_kind {
  TEND_EV_TRACE,       /* the trace begins (its seed) */
  TEND_EV_SPAWN,       /* an actor was created */
  TEND_EV_START,       /* its first instance took messages */
  TEND_EV_FAIL,        /* its code raised */
  TEND_EV_DIRECTIVE,   /* its supervisor decided */
  TEND_EV_RESTART,     /* a new instance took over */
  TEND_EV_BACKOFF,     /* a restart waits this delay */
  TEND_EV_RESET,       /* a backoff starts over */
  TEND_EV_GIVE_UP,     /* a backoff reached its limit */
  TEND_EV_STOP,        /* it began to stop */
  TEND_EV_TERMINATED,  /* it died */
  TEND_EV_ESCALATE,    /* a supervisor failed with its child's error */
  TEND_EV_DEAD_LETTER, /* a message reached no actor */
  TEND_EV_STASH_DROP,  /* a full stash dropped its oldest message */
  TEND_EV_CHAOS,       /* tend.chaos injected a fault */
  TEND_EV_SPAWN_OS,    /* an OS process started (pid, argv0) */
  TEND_EV_READY,       /* it is ready */
  TEND_EV_EXIT,        /* it exited (status or signal) */
  TEND_EV_NODE,        /* a node came up, went down, or a message to it
                          was dropped (lua/tend/node.lua) */
  TEND_EV_KINDS
} tend_event_kind;

typedef struct tend_event {
  tend_event_kind ev;    /* what happened */
  tend_actor *actor;     /* where it happened, or NULL */
  const char *path;      /* its path when actor is NULL ("/deadLetters") */
  const char *kind;      /* error kind, or NULL */
  const char *message;   /* error message, or NULL */
  size_t message_len;    /* its length (NUL bytes may be in it); 0: strlen */
  const char *directive; /* directive: what was decided */
  const char *clause;    /* directive: the decider clause, "default", ... */
  int64_t window[3];     /* directive: restarts used, allowed, within (ns);
                            window[1] < 0: none; window[2] < 0: no window */
  int64_t count;         /* restart count, or -1 */
  int64_t incarnation;   /* incarnation, or -1 */
  int64_t delay_ns;      /* delay chosen, or -1 */
  double draw;           /* the random draw behind the delay, or -1 */
  const char *algorithm; /* backoff algorithm, or NULL */
  const char *reason;    /* stop, terminated: "normal", "shutdown", a kind */
  const char *to;        /* chaos: the other end of a link, or NULL */
  const char *detail;    /* a few words, or NULL */
  int64_t pid;           /* spawn_os, exit: the OS pid, or -1 */
  const char *argv0;     /* spawn_os: the program, or NULL */
  int64_t status;        /* exit: the status, or -1 */
  const char *signal;    /* exit: the signal's name, or NULL */
} tend_event;

#define TEND_EVENT_INIT(kind, a)                                           \
  {                                                                        \
    .ev = (kind), .actor = (a), .window = {-1, -1, -1}, .count = -1,       \
    .incarnation = -1, .delay_ns = -1, .draw = -1, .pid = -1, .status = -1 \
  }

/* The name of an event in the trace ("spawn", "dead_letter", ...). */
const char *tend_event_name(tend_event_kind ev);

/* Is anyone listening beyond the log? (cheap check before building one)
 * A simulated node's events go to its world's trace. */
static inline int tend_event_traced(const tend_host *h) {
  if (h->world) {
    if (h->trace_fn_ref > 0) return 1; /* its own listeners */
    h = h->world;
  }
  return tend_linefile_is_open(&h->trace) || h->trace_stderr ||
         h->trace_fn_ref > 0;
}

/* Are the events of tend's own tasks (TEND_AF_INTERNAL) shown? A node's
 * are when its world's are. */
static inline int tend_event_internal_shown(const tend_host *h) {
  return h->trace_internal || (h->world && h->world->trace_internal);
}

/* Would an event of the quiet kind (logged at debug) go anywhere? */
static inline int tend_event_on(const tend_host *h) {
  return tend_event_traced(h) || h->log_level >= TEND_LOG_DEBUG;
}

void tend_event_emit(lua_State *L, tend_host *h, const tend_event *e);
/* Calls the tend.trace function with the events queued since (main
 * thread, between turns). */
void tend_event_flush(lua_State *L, tend_host *h);
/* Opens the trace file (--trace, tend.trace_file; a file open before is
 * closed); returns 0, or -1 with errno. */
int tend_trace_open(tend_host *h, const char *path);
/* Writes what is buffered and closes the trace file. */
void tend_trace_close(tend_host *h);
/* From the watchdog's thread as the process ends: the trace's buffered
 * lines, if that cannot block (see tend_linefile_salvage). */
void tend_trace_salvage(tend_host *h);

#endif
