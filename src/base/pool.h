/* pool: fixed-size nodes carved from chunks and recycled through a free
 * list, so a steady flow of messages or timers allocates nothing. The
 * mailbox's message nodes and the timer records both come from one. A free
 * node's first word links the free list; the rest of it is left as it was
 * (the timer heap keeps a generation there). */
#ifndef TEND_POOL_H
#define TEND_POOL_H

#include <stddef.h>
#include <stdint.h>

typedef struct tend_pool {
  void *free;      /* first free node; its first word links the next */
  void *chunks;    /* allocated chunks, linked through their first word */
  size_t size;     /* bytes per node (at least a pointer) */
  uint64_t carved; /* nodes ever carved from chunks */
} tend_pool;

void tend_pool_init(tend_pool *p, size_t node_size);
/* Frees every chunk (nodes still in use are lost). */
void tend_pool_free(tend_pool *p);
/* Adds a chunk of zeroed nodes to the free list; returns 0, or -1 when
 * memory is exhausted. */
int tend_pool_grow(tend_pool *p);

/* A node (contents as the last user left them; zero when new), or NULL. */
static inline void *tend_pool_get(tend_pool *p) {
  if (p->free == NULL && tend_pool_grow(p) != 0) return NULL;
  void *n = p->free;
  p->free = *(void **)n;
  return n;
}

static inline void tend_pool_put(tend_pool *p, void *n) {
  *(void **)n = p->free;
  p->free = n;
}

#endif
