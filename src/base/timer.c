/* timer: binary min-heap of pooled timer records keyed by (due, seq). */
#include "base/timer.h"

#include <stdlib.h>
#include <string.h>

static int before(const tend_timer *a, const tend_timer *b) {
  return a->due < b->due ||
         (a->due == b->due && (int32_t)(a->seq - b->seq) < 0);
}

static void place(tend_timer_heap *h, uint32_t i, tend_timer *t) {
  h->v[i] = t;
  t->heap_index = i;
}

static void sift_up(tend_timer_heap *h, uint32_t i) {
  tend_timer *t = h->v[i];
  while (i > 0) {
    uint32_t parent = (i - 1) / 2;
    if (!before(t, h->v[parent])) break;
    place(h, i, h->v[parent]);
    i = parent;
  }
  place(h, i, t);
}

static void sift_down(tend_timer_heap *h, uint32_t i) {
  tend_timer *t = h->v[i];
  for (;;) {
    uint32_t child = 2 * i + 1;
    if (child >= h->n) break;
    if (child + 1 < h->n && before(h->v[child + 1], h->v[child])) child++;
    if (!before(h->v[child], t)) break;
    place(h, i, h->v[child]);
    i = child;
  }
  place(h, i, t);
}

void tend_timer_heap_init(tend_timer_heap *h) {
  memset(h, 0, sizeof *h);
  h->next_seq = 1;
  tend_pool_init(&h->records, sizeof(tend_timer));
}

void tend_timer_heap_free(tend_timer_heap *h) {
  free(h->v);
  tend_pool_free(&h->records);
  tend_timer_heap_init(h);
}

tend_timer *tend_timer_new(tend_timer_heap *h) {
  tend_timer *t = tend_pool_get(&h->records);
  if (t == NULL) return NULL;
  uint32_t gen = t->gen;
  memset(t, 0, sizeof *t);
  t->gen = gen;
  t->heap_index = TEND_TIMER_UNARMED;
  return t;
}

void tend_timer_release(tend_timer_heap *h, tend_timer *t) {
  t->kind = TEND_TIMER_FREE;
  t->gen++;
  tend_pool_put(&h->records, t);
}

int tend_timer_heap_push(tend_timer_heap *h, tend_timer *t) {
  if (h->n == h->cap) {
    uint32_t cap = h->cap ? h->cap * 2 : 16;
    tend_timer **v = realloc(h->v, (size_t)cap * sizeof *v);
    if (v == NULL) return -1;
    h->v = v;
    h->cap = cap;
  }
  t->seq = h->next_seq++;
  h->v[h->n] = t;
  sift_up(h, h->n++);
  return 0;
}

void tend_timer_heap_remove(tend_timer_heap *h, tend_timer *t) {
  uint32_t i = t->heap_index;
  if (i == TEND_TIMER_UNARMED) return;
  t->heap_index = TEND_TIMER_UNARMED;
  tend_timer *last = h->v[--h->n];
  if (i == h->n) return;
  place(h, i, last);
  if (i > 0 && before(last, h->v[(i - 1) / 2]))
    sift_up(h, i);
  else
    sift_down(h, i);
}
