/* promise: a pending ask (design §3.1). The asker sends with a promise as
 * the sender, then waits; the first message to the promise is the reply
 * and wakes the asker; a timeout (an ASK timer) wakes it without one. A
 * promise is created, resolved and freed only here: it ends when it is
 * answered, times out, fails, or its asker stops waiting (cancel). A reply
 * after that finds the id stale and becomes a dead letter.
 *
 * The actor asked holds the request (as an Erlang callee is monitored by
 * its caller): each promise is in its target's `held` list (ext) until it
 * ends. When the target dies before replying, every request it holds
 * fails; when it restarts, the requests it already took from its mailbox
 * fail (the new instance knows nothing of them; those still queued are
 * answered by it). A failed ask wakes its asker with an AskFailed error
 * whose cause is the target's error or stop reason.
 *
 * The messages whose sender is a held promise are counted while they are
 * in the holder's user queue (the message's `held` flag, p->queued), so a
 * restart tells taken from queued in O(1) per held ask. A holder that has
 * taken the request and sends it on (a router: a pool, a backoff
 * supervisor; the promise still the sender) hands it over: the actor it
 * reaches holds it from then on, so its failure fails the ask. A request
 * sent on again by the same actor went to several (a broadcast): that
 * actor holds it again, and only its own end fails the ask. */
#ifndef TEND_PROMISE_H
#define TEND_PROMISE_H

#include <lua.h>

#include "runtime/core/actor.h"
#include "runtime/core/host.h"

struct tend_promise {
  uint8_t kind;        /* TEND_ENTITY_PROMISE; first, as in tend_actor */
  uint32_t id, gen;    /* slot in host->ids */
  tend_actor *asker;   /* waits in TEND_WAIT_ASK for this promise */
  tend_timer *timeout; /* the ASK timer that ends the wait, or NULL */
  tend_actor *target;  /* the actor asked, while p is in its held list */
  tend_promise *held_prev, *held_next; /* that list (target->ext->held) */
  uint32_t queued;                     /* its messages in target's user queue */
  uint32_t via_id, via_gen; /* the actor that sent it on to target, or 0 */
  uint8_t fiber;            /* 1: made in a fiber of its asker (see below) */
  uint8_t done;       /* a fiber's promise: its outcome is in `value`, `wake` */
  uint8_t wake;       /* that outcome (tend_wake): OK, FAILED or TIMEOUT */
  uint32_t fiber_tag; /* the tag of the fiber (fiber.h) */
  tend_value value;   /* the reply or the AskFailed error */
  tend_promise *fiber_prev, *fiber_next; /* asker's fibers or ready list */
};

/* Why a target's held requests fail. */
typedef enum tend_promise_end {
  TEND_PROMISE_RESTART, /* it restarts: the requests it took fail */
  TEND_PROMISE_DEATH    /* it died: every request it holds fails */
} tend_promise_end;

/* A new promise for the current actor a, timing out after timeout_ns
 * (< 0: never); a->promise is set. Raises (naming fn) when out of memory
 * or ids. */
tend_promise *tend_promise_new(lua_State *L, tend_host *h, tend_actor *a,
                               int64_t timeout_ns, const char *fn);
/* The reply v arrived for p: the asker wakes with it (v is its own) and
 * returns 1; 0 when the asker no longer waits for p (v is the caller's). */
int tend_promise_resolve(lua_State *L, tend_host *h, tend_promise *p,
                         tend_value v);
/* target holds the request of p (nothing when out of memory: p can
 * still time out). */
void tend_promise_hold(tend_host *h, tend_promise *p, tend_actor *target);
/* a restarts or died (why): the asks it holds fail as described above,
 * their askers woken with TEND_WAKE_FAILED and the AskFailed error as
 * their reply. cause: stack index of the error or reason string, or 0 for
 * a's restart cause (ext cause_ref). Called at the start of a restart
 * (supervise.c) and at death (lifecycle.c). */
void tend_promise_fail_held(lua_State *L, tend_host *h, tend_actor *a,
                            tend_promise_end why, int cause);
/* The slow paths of the two below (a message from a held promise). */
void tend_promise_enqueue_held(tend_host *h, tend_actor *a, tend_msg *m);
void tend_promise_dequeue_held(tend_host *h, const tend_actor *a,
                               const tend_msg *m);
/* m (its sender set) goes into a's user queue: when its sender is a held
 * promise, a holds it or takes it over (see above) and m is counted.
 * Nothing to do while no ask is held. */
static inline void tend_promise_enqueue(tend_host *h, tend_actor *a,
                                        tend_msg *m) {
  if (h->held) tend_promise_enqueue_held(h, a, m);
}
/* m left a's user queue (taken or dropped): no longer counted. */
static inline void tend_promise_dequeue(tend_host *h, const tend_actor *a,
                                        const tend_msg *m) {
  if (m->held) tend_promise_dequeue_held(h, a, m);
}
/* a stops waiting for its promise (if any): it is freed, its timer too. */
void tend_promise_cancel(lua_State *L, tend_host *h, tend_actor *a);
/* A message reached a's user queue: if a waits in tend.receive (its
 * timeout is a promise nobody answers, see inbox.h), the promise goes
 * and a wakes. */
void tend_promise_mail(lua_State *L, tend_host *h, tend_actor *a);
/* Fibers: a task's coroutines resumed by tend_sched_fiber_resume (sched.h).
 * A promise made in one for a wait (an ask, an HTTP request, a sleep)
 * does not suspend the task: tend_promise_to_fiber moves it from
 * a->promise to the task's fiber list, and the fiber yields to the task's
 * code. Its outcome (reply, failure, timeout) moves it to the task's
 * ready list, in the order outcomes come, and wakes the task if it waits
 * in tend.receive; tend.receive then answers TEND_FIBER_READY (lreceive)
 * until the task has taken them all (tend_promise_fiber_take). */
/* a's promise becomes the fiber tag's: 1, or 0 when it cannot (out of
 * memory: a waits for it). */
int tend_promise_to_fiber(tend_actor *a, uint32_t tag);
/* 1 when an outcome waits in a's ready list. */
static inline int tend_promise_fiber_ready(const tend_actor *a) {
  return a->ext && a->ext->fibers_ready;
}
/* Takes the oldest ready outcome: it becomes a's wake (tend_sched_woken,
 * tend_sched_take_reply), so its fiber continues as if a had waited for
 * it; returns the fiber's tag, or 0 when none is ready. */
uint32_t tend_promise_fiber_take(lua_State *L, tend_host *h, tend_actor *a);
/* a ends or restarts: its fibers' promises end, their outcomes dropped. */
void tend_promise_fiber_end(lua_State *L, tend_host *h, tend_actor *a);
/* The same for the fiber tag's promises only (its task dropped it: a
 * cancelled stage's). */
void tend_promise_fiber_drop(lua_State *L, tend_host *h, tend_actor *a,
                             uint32_t tag);
/* Its timer kinds (driver.h). */
extern const tend_driver tend_promise_driver;

#endif
