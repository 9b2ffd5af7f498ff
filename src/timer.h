/* timer: every timer of the host lives in one binary min-heap, ordered by
 * (due, seq), so timers due at the same instant fire in the order they were
 * armed. The heap knows nothing of Lua; what a timer does when it fires is
 * the host's business (ltimer.c). */
#ifndef TEND_TIMER_H
#define TEND_TIMER_H

#include <stdint.h>

#include "mailbox.h"

typedef enum tend_timer_kind {
  TEND_TIMER_SEND, /* deliver `value` to the target actor (ctx:after/every) */
  TEND_TIMER_WAKE, /* end the target's wait number `wait_seq` (sleep, ask) */
  TEND_TIMER_TASK, /* run the function in `value` as a task (tend.after) */
  TEND_TIMER_KILL  /* the target's post_stop overran its shutdown time */
} tend_timer_kind;

#define TEND_TIMER_UNARMED UINT32_MAX

typedef struct tend_timer tend_timer;
struct tend_timer {
  int64_t due;          /* host-clock nanoseconds at which it fires */
  uint64_t seq;         /* arming order; ties between equal dues */
  uint32_t heap_index;  /* index in the heap, TEND_TIMER_UNARMED if not in it */
  uint32_t id, gen;     /* own slot in the host's timer table (tend.Timer) */
  tend_timer_kind kind; /* what firing does */
  int64_t interval;     /* > 0: re-armed this long after each firing */
  uint32_t target_id;   /* actor acted on (slot id), 0 for tasks */
  uint32_t target_gen;  /* its generation: a stale timer does nothing */
  uint32_t wait_seq;    /* WAKE: the wait it ends (stale waits ignored) */
  tend_value value;     /* SEND: the message; TASK: the function; owned */
  void *owner;          /* actor whose death cancels it, or NULL */
  tend_timer *owner_prev, *owner_next; /* siblings in the owner's list */
};

typedef struct tend_timer_heap {
  tend_timer **v;    /* v[0..n-1], heap-ordered */
  uint32_t n;        /* armed timers */
  uint32_t cap;      /* allocated length of v */
  uint64_t next_seq; /* seq for the next timer armed */
} tend_timer_heap;

void tend_timer_heap_init(tend_timer_heap *h);
void tend_timer_heap_free(tend_timer_heap *h);
/* Arms t at t->due; returns 0, or -1 when memory is exhausted. */
int tend_timer_heap_push(tend_timer_heap *h, tend_timer *t);
/* Disarms t (no-op if it is not armed). */
void tend_timer_heap_remove(tend_timer_heap *h, tend_timer *t);
/* The earliest timer, or NULL. */
static inline tend_timer *tend_timer_heap_top(const tend_timer_heap *h) {
  return h->n ? h->v[0] : NULL;
}

#endif
