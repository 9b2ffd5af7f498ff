/* timer: every timer of the host lives in one binary min-heap, ordered by
 * (due, seq), so timers due at the same instant fire in the order they were
 * armed. Timer records come from a pool (base/pool.h) and are 64 bytes (72
 * with their heap slot), so a hundred thousand pending backoffs stay cheap.
 * The heap knows nothing of what a timer does: the runtime dispatches a
 * fired timer on its kind (runtime/timers.h). */
#ifndef TEND_TIMER_H
#define TEND_TIMER_H

#include <stddef.h>
#include <stdint.h>

#include "base/mailbox.h"
#include "base/pool.h"

typedef enum tend_timer_kind {
  TEND_TIMER_FREE, /* in the pool's free list */
  TEND_TIMER_SEND, /* deliver the value to the target (ctx:after/every) */
  TEND_TIMER_WAKE, /* end the target's sleep number `tag` */
  TEND_TIMER_ASK,  /* the target's ask number `tag` timed out */
  TEND_TIMER_TASK, /* run the function value as a task (tend.after) */
  TEND_TIMER_KILL, /* the target's post_stop overran its shutdown */
  TEND_TIMER_BACKOFF_START,   /* a backoff supervisor starts its child (`tag`:
                                 the incarnation it was set for) */
  TEND_TIMER_BACKOFF_RESET,   /* incarnation `tag` ran long enough: reset */
  TEND_TIMER_BACKOFF_WINDOW,  /* the strategy's `within` after a first
                                 restart: reset if the count is still `tag` */
  TEND_TIMER_TYPED_RESTART,   /* typed backoff: restart the target (`tag`) */
  TEND_TIMER_TYPED_RESET,     /* typed backoff: incarnation `tag` ran long
                                 enough: reset */
  TEND_TIMER_RECEIVE_TIMEOUT, /* the target's receive timeout may be due */
  TEND_TIMER_KINDS
} tend_timer_kind;

#define TEND_TIMER_UNARMED UINT32_MAX
#define TEND_TASK_INTERNAL 1 /* the tag of a TASK timer of tend's own */

/* A repeating timer keeps its message and period out of line. */
typedef struct tend_timer_repeat {
  tend_value value; /* the message, owned */
  int64_t interval; /* period in ns */
} tend_timer_repeat;

typedef struct tend_timer tend_timer;
struct tend_timer {
  int64_t due; /* host-clock nanoseconds at which it fires */
  union {
    int64_t i;                 /* TEND_VALUE_INT */
    double n;                  /* TEND_VALUE_NUM */
    uint32_t slot;             /* TEND_VALUE_REF */
    tend_timer_repeat *repeat; /* repeating: message and period */
  } v;                         /* the value it carries (owned) */
  tend_timer *next, *prev;     /* the owner's timers (unlinked in O(1)) */
  uint32_t seq;                /* arming order; ties between equal dues */
  uint32_t heap_index; /* index in the heap, TEND_TIMER_UNARMED if not in it */
  uint32_t target_id;  /* actor acted on, 0 for none */
  uint32_t target_gen; /* its generation: a stale timer does nothing */
  uint32_t tag;        /* WAKE: wait number; BACKOFF: incarnation; TASK:
                          TEND_TASK_INTERNAL for a task of tend's own */
  uint32_t gen;        /* bumped when freed; tend.Timer handles hold it */
  uint8_t kind;        /* tend_timer_kind */
  uint8_t vtype;       /* tend_value_type of v, unless repeating */
  uint8_t repeating;   /* 1: v.repeat */
  uint8_t owned;       /* 1: in its target's timer list (dies with it) */
};

typedef struct tend_timer_heap {
  tend_timer **v;    /* v[0..n-1], heap-ordered */
  uint32_t n;        /* armed timers */
  uint32_t cap;      /* allocated length of v */
  uint32_t next_seq; /* seq for the next timer armed */
  tend_pool records; /* where the records come from */
} tend_timer_heap;

void tend_timer_heap_init(tend_timer_heap *h);
/* Frees the heap and every record (whatever they still hold is lost). */
void tend_timer_heap_free(tend_timer_heap *h);
/* A fresh record (kind FREE, fields zero but gen), or NULL. */
tend_timer *tend_timer_new(tend_timer_heap *h);
/* Returns t to the pool (it must not be armed); handles become stale. */
void tend_timer_release(tend_timer_heap *h, tend_timer *t);
/* Arms t at t->due; returns 0, or -1 when memory is exhausted. */
int tend_timer_heap_push(tend_timer_heap *h, tend_timer *t);
/* Disarms t (no-op if it is not armed). */
void tend_timer_heap_remove(tend_timer_heap *h, tend_timer *t);
/* The earliest timer, or NULL. */
static inline tend_timer *tend_timer_heap_top(const tend_timer_heap *h) {
  return h->n ? h->v[0] : NULL;
}

/* The value a non-repeating timer carries. */
static inline tend_value tend_timer_value(const tend_timer *t) {
  tend_value v;
  v.type = (tend_value_type)t->vtype;
  v.u.i = t->v.i;
  if (t->vtype == TEND_VALUE_REF) v.u.slot = t->v.slot;
  if (t->vtype == TEND_VALUE_NUM) v.u.n = t->v.n;
  return v;
}

static inline void tend_timer_set_value(tend_timer *t, tend_value v) {
  t->vtype = (uint8_t)v.type;
  t->v.i = v.u.i;
  if (v.type == TEND_VALUE_REF) t->v.slot = v.u.slot;
  if (v.type == TEND_VALUE_NUM) t->v.n = v.u.n;
}

#endif
