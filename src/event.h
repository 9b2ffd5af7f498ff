/* event: the lifecycle events of supervision and backoff (fail, restart,
 * backoff, reset, give_up, stash_drop, start, ...). Every event goes through
 * tend_event_emit: today it becomes a log line at info; the trace (DESIGN
 * §6) writes the same events as JSON lines. */
#ifndef TEND_EVENT_H
#define TEND_EVENT_H

#include <lua.h>

#include "host.h"

typedef struct tend_event {
  const char *ev;      /* event name */
  tend_actor *actor;   /* where it happened */
  const char *kind;    /* error kind, or NULL */
  const char *message; /* error message, or NULL */
  int64_t count;       /* restart count, or -1 */
  int64_t delay_ns;    /* delay chosen, or -1 */
  double draw;         /* the random draw behind the delay, or -1 */
  const char *detail;  /* a few words for the log line, or NULL */
} tend_event;

#define TEND_EVENT_INIT(name, a) \
  { (name), (a), NULL, NULL, -1, -1, -1, NULL }

void tend_event_emit(lua_State *L, tend_host *h, const tend_event *e);

#endif
