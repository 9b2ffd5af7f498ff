/* mpsc: see mpsc.h. D. Vyukov's intrusive node-based queue: producers
 * exchange the head, then link the previous head to their node; the
 * consumer follows the links from the tail, putting the stub back when it
 * reaches the last node. */
#include "base/mpsc.h"

#include <stddef.h>

void tend_mpsc_init(tend_mpsc *q) {
  atomic_store_explicit(&q->stub.next, NULL, memory_order_relaxed);
  atomic_store_explicit(&q->head, &q->stub, memory_order_relaxed);
  q->tail = &q->stub;
}

void tend_mpsc_push(tend_mpsc *q, tend_mpsc_node *n) {
  atomic_store_explicit(&n->next, NULL, memory_order_relaxed);
  tend_mpsc_node *prev =
      atomic_exchange_explicit(&q->head, n, memory_order_acq_rel);
  /* until this store the consumer sees the queue end at prev */
  atomic_store_explicit(&prev->next, n, memory_order_release);
}

tend_mpsc_node *tend_mpsc_pop(tend_mpsc *q) {
  tend_mpsc_node *tail = q->tail;
  tend_mpsc_node *next =
      atomic_load_explicit(&tail->next, memory_order_acquire);
  if (tail == &q->stub) { /* skip the stub */
    if (next == NULL) return NULL;
    q->tail = tail = next;
    next = atomic_load_explicit(&tail->next, memory_order_acquire);
  }
  if (next != NULL) {
    q->tail = next;
    return tail;
  }
  /* tail is the last linked node: pop it only if it is also the head,
   * after putting the stub behind it so the queue is never unlinked */
  if (tail != atomic_load_explicit(&q->head, memory_order_acquire))
    return NULL; /* a push is half-done: its wake-up follows */
  tend_mpsc_push(q, &q->stub);
  next = atomic_load_explicit(&tail->next, memory_order_acquire);
  if (next == NULL) return NULL; /* another push got in between */
  q->tail = next;
  return tail;
}

int tend_mpsc_waiting(tend_mpsc *q) {
  return q->tail != &q->stub ||
         atomic_load_explicit(&q->head, memory_order_acquire) != &q->stub;
}
