/* mailbox: node pool for message queues (see mailbox.h). */
#include "mailbox.h"

#include <stdlib.h>

#define NODES_PER_CHUNK 1024

typedef struct chunk {
  struct chunk *next;
  tend_msg nodes[NODES_PER_CHUNK];
} chunk;

void tend_msg_pool_init(tend_msg_pool *p) {
  p->free = NULL;
  p->chunks = NULL;
  p->allocated = 0;
}

void tend_msg_pool_free(tend_msg_pool *p) {
  chunk *c = p->chunks;
  while (c) {
    chunk *next = c->next;
    free(c);
    c = next;
  }
  tend_msg_pool_init(p);
}

tend_msg *tend_msg_alloc(tend_msg_pool *p) {
  if (p->free == NULL) {
    chunk *c = malloc(sizeof *c);
    if (c == NULL) return NULL;
    c->next = p->chunks;
    p->chunks = c;
    for (int i = NODES_PER_CHUNK - 1; i >= 0; i--)
      tend_msg_release(p, &c->nodes[i]);
    p->allocated += NODES_PER_CHUNK;
  }
  tend_msg *m = p->free;
  p->free = m->next;
  return m;
}
