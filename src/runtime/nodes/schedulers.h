/* schedulers: several schedulers in one process, each a host of its own
 * (its own lua_State, run queue, timers and tree of actors), one clock.
 *
 * Scheduler 0 is the host the program starts in (the main chunk, the
 * REPL); tend_schedulers_open adds 1..n-1. Under the virtual clock they
 * are driven by scheduler 0's pump, as simulated nodes are by their world:
 * at every pass each takes a turn in index order after scheduler 0, the
 * clock jumps when none can run, so a seed and a number of schedulers
 * replay byte for byte; their trace events go to scheduler 0's trace.
 *
 * An actor lives on one scheduler for its whole life. On the others it is
 * a proxy (remote.h's record, TEND_AF_SCHED set; its path is the actor's
 * own): a message to the proxy is encoded with the nodes' codec (the same
 * values travel, the same refusals are raised at the sender) and queued
 * as an envelope for the actor's scheduler, which decodes it at its next
 * turn and delivers it with the sender's proxy as sender. So send, ask
 * (the reply goes to a proxy of the pending ask) and DeathWatch (a proxy
 * asks the actor's scheduler to watch it; the death comes back and ends
 * the proxy with the reason) work across schedulers with no change to
 * those paths. Between two schedulers envelopes keep their order. */
#ifndef TEND_SCHEDULERS_H
#define TEND_SCHEDULERS_H

#include <lua.h>
#include <stdint.h>

#include "runtime/core/host.h"
#include "runtime/core/lifecycle.h"

#define TEND_SCHEDULERS_MAX 64

/* The schedulers' side of one process (h->scheds, shared by all). */
typedef struct tend_scheds tend_scheds;

/* Adds schedulers 1..n-1 beside h (scheduler 0, under the virtual clock).
 * Returns 0, or -1 with the reason on stderr. */
int tend_schedulers_open(tend_host *h, int n);
/* How many schedulers h's process has (1 when none were added), and which
 * one h is. */
int tend_schedulers_count(const tend_host *h);
int tend_schedulers_index(const tend_host *h);
/* Spawns the actor built by the factory named "module.field" (string at
 * stack index factory) under /user of scheduler k, with o's args (a table
 * at a stack index, or 0), name (a string at a stack index, 0: anonymous)
 * and restart (temporary or not); pushes its ref here (a proxy). Raises
 * naming fn when it cannot. */
void tend_schedulers_spawn(lua_State *L, tend_host *h, int k, int factory,
                           const tend_spawn_opts *o, const char *fn);

/* Pushes the ref of this host's proxy of (k, id, gen) with the path at
 * stack index path (kind 1: a pending ask), made when there is none (the
 * codec, for a ref that arrives). */
void tend_schedulers_push_proxy(lua_State *L, tend_host *h, int k, uint32_t id,
                                uint32_t gen, int path, int kind);

/* The pump of scheduler 0 (the others' turns), their shutdown and close,
 * and the deaths watched from other schedulers. */
extern const tend_driver tend_schedulers_driver;

#endif
