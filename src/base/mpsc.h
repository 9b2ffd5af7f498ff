/* mpsc: a lock-free queue with many producers and one consumer: the way
 * into a scheduler from the other threads of the process.
 *
 * Intrusive: a producer pushes a node it embeds in its own record; the
 * consumer pops nodes in the order each producer pushed them (the order
 * between producers is the order of their pushes' exchanges). A push is
 * one atomic exchange and one store, wait-free; nothing is allocated.
 *
 * tend_mpsc_pop may return NULL while the queue is not empty: a producer
 * is between its two steps. The producer's wake-up of the consumer comes
 * after its push returns, so a consumer that pops until NULL at each
 * wake-up misses nothing. */
#ifndef TEND_MPSC_H
#define TEND_MPSC_H

#include <stdatomic.h>

typedef struct tend_mpsc_node {
  struct tend_mpsc_node *_Atomic next;
} tend_mpsc_node;

typedef struct tend_mpsc {
  tend_mpsc_node *_Atomic head; /* the last pushed: producers swap here */
  tend_mpsc_node *tail;         /* the next to pop: the consumer's own */
  tend_mpsc_node stub;          /* stands in when the queue is empty */
} tend_mpsc;

/* An empty queue (q is not moved after this: the stub is inside it). */
void tend_mpsc_init(tend_mpsc *q);
/* Any thread: appends n (not in a queue). */
void tend_mpsc_push(tend_mpsc *q, tend_mpsc_node *n);
/* The consumer's thread only: the oldest node, or NULL (see above). */
tend_mpsc_node *tend_mpsc_pop(tend_mpsc *q);
/* The consumer's thread only: 1 when a push has begun that no pop took
 * yet (a pop may still return NULL for it: see above), 0 when empty. */
int tend_mpsc_waiting(tend_mpsc *q);

#endif
