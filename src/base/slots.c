/* slots: generational id table (see slots.h). */
#include "base/slots.h"

#include <stdlib.h>

void tend_slots_init(tend_slots *s) {
  s->v = NULL;
  s->n = 1;
  s->cap = 0;
  s->free_head = 0;
  s->live = 0;
}

void tend_slots_free(tend_slots *s) {
  free(s->v);
  tend_slots_init(s);
}

uint32_t tend_slots_alloc(tend_slots *s, void *ptr, uint32_t *gen) {
  uint32_t id = s->free_head;
  if (id != 0) {
    s->free_head = s->v[id].next_free;
  } else {
    if (s->n >= s->cap) {
      uint32_t cap = s->cap ? s->cap * 2 : 64;
      if (cap <= s->cap) return 0; /* id space exhausted */
      tend_slot *v = realloc(s->v, (size_t)cap * sizeof *v);
      if (v == NULL) return 0;
      s->v = v;
      s->cap = cap;
      if (s->n == 1) v[0] = (tend_slot){NULL, 0, 0};
    }
    id = s->n++;
    s->v[id].gen = 1;
  }
  s->v[id].ptr = ptr;
  s->v[id].next_free = 0;
  s->live++;
  *gen = s->v[id].gen;
  return id;
}

void tend_slots_release(tend_slots *s, uint32_t id) {
  tend_slot *e = &s->v[id];
  e->ptr = NULL;
  e->gen++;
  if (e->gen == 0) e->gen = 1; /* generation 0 never names a live object */
  e->next_free = s->free_head;
  s->free_head = id;
  s->live--;
}
