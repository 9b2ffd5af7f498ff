/* pool: chunked node pools (see pool.h). */
#include "base/pool.h"

#include <stdlib.h>

#define NODES_PER_CHUNK 1024

void tend_pool_init(tend_pool *p, size_t node_size) {
  p->free = NULL;
  p->chunks = NULL;
  p->size = node_size < sizeof(void *) ? sizeof(void *) : node_size;
  p->carved = 0;
}

void tend_pool_free(tend_pool *p) {
  void *c = p->chunks;
  while (c) {
    void *next = *(void **)c;
    free(c);
    c = next;
  }
  tend_pool_init(p, p->size);
}

int tend_pool_grow(tend_pool *p) {
  /* a chunk: one link word (padded to the node size), then the nodes */
  char *c = calloc(NODES_PER_CHUNK + 1, p->size);
  if (c == NULL) return -1;
  *(void **)c = p->chunks;
  p->chunks = c;
  for (size_t i = NODES_PER_CHUNK; i >= 1; i--)
    tend_pool_put(p, c + i * p->size);
  p->carved += NODES_PER_CHUNK;
  return 0;
}
