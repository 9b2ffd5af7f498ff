/* slots: a table of generational ids.
 * An id names a slot; a slot's generation is bumped each time it is freed,
 * so an (id, gen) pair taken while an object lived never reaches the next
 * object that reuses the slot. Id 0 is never handed out: it means "none". */
#ifndef TEND_SLOTS_H
#define TEND_SLOTS_H

#include <stddef.h>
#include <stdint.h>

typedef struct tend_slot {
  void *ptr;          /* the live object, or NULL while free */
  uint32_t gen;       /* generation of the current (or next) occupant */
  uint32_t next_free; /* next free slot when free; 0 ends the list */
} tend_slot;

typedef struct tend_slots {
  tend_slot *v;       /* v[0] unused; v[1..n-1] slots */
  uint32_t n;         /* slots in use or on the free list, plus one */
  uint32_t cap;       /* allocated length of v */
  uint32_t free_head; /* first free slot, 0 when none */
  uint32_t live;      /* slots holding an object */
} tend_slots;

void tend_slots_init(tend_slots *s);
void tend_slots_free(tend_slots *s);
/* Takes a slot for ptr; returns its id (>0) and its generation in *gen,
 * or 0 when memory is exhausted. */
uint32_t tend_slots_alloc(tend_slots *s, void *ptr, uint32_t *gen);
/* Frees slot id; later lookups with the old generation fail. */
void tend_slots_release(tend_slots *s, uint32_t id);
/* The object at (id, gen), or NULL if it is gone. */
static inline void *tend_slots_get(const tend_slots *s, uint32_t id,
                                   uint32_t gen) {
  if (id == 0 || id >= s->n) return NULL;
  const tend_slot *e = &s->v[id];
  return e->gen == gen ? e->ptr : NULL;
}

#endif
