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
#include "runtime/tend.h" /* the events and their record */

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
