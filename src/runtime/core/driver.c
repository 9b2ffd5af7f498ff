/* driver: the host's drivers and the owner of each kind (driver.h). */
#include "runtime/core/driver.h"

#include <stdio.h>
#include <stdlib.h>

#include "runtime/core/host.h"

/* A driver the host cannot take (a programming error): said, -1. */
static int refuse(const char *driver, const char *what, int kind,
                  const char *why) {
  fprintf(stderr, "tend: driver %s: %s %d %s\n", driver, what, kind, why);
  return -1;
}

/* Claims slot (one of the host's tables) for fn, or returns -1. */
#define CLAIM(slot, fn, what, kind)                                      \
  do {                                                                   \
    if ((slot) != NULL)                                                  \
      return refuse(d->name, what, (int)(kind), "has an owner already"); \
    (slot) = (fn);                                                       \
  } while (0)

int tend_driver_add(tend_host *h, const tend_driver *d) {
  if (h->n_drivers == h->cap_drivers) {
    uint32_t cap = h->cap_drivers ? 2 * h->cap_drivers : 16;
    const tend_driver **v = realloc(h->drivers, cap * sizeof *v);
    if (v == NULL) {
      fprintf(stderr, "tend: driver %s: out of memory\n", d->name);
      return -1;
    }
    h->drivers = v;
    h->cap_drivers = cap;
  }
  for (const tend_driver_timer *t = d->timers; t && t->kind; t++) {
    if (t->kind >= TEND_TIMER_KINDS)
      return refuse(d->name, "timer kind", t->kind, "is out of range");
    CLAIM(h->on_fire[t->kind], t->fire, "timer kind", t->kind);
  }
  for (const tend_driver_message *m = d->messages; m && m->kind; m++) {
    if (m->kind >= TEND_MSG_KINDS)
      return refuse(d->name, "message", m->kind, "is out of range");
    CLAIM(h->on_message[m->kind], m->handle, "message", m->kind);
  }
  for (const tend_driver_op *o = d->ops; o && o->op; o++) {
    if (o->op >= TEND_OP_KINDS)
      return refuse(d->name, "op", o->op, "is out of range");
    CLAIM(h->on_op[o->op], o->done, "op", o->op);
  }
  if (d->actor_flag & h->c_actor_flags) {
    fprintf(stderr, "tend: driver %s: its actors have an owner already\n",
            d->name);
    return -1;
  }
  h->c_actor_flags |= d->actor_flag;
  h->drivers[h->n_drivers++] = d;
  return 0;
}

const tend_driver *tend_driver_of(const tend_host *h, const tend_actor *a) {
  if (!(a->flags & h->c_actor_flags)) return NULL;
  for (uint32_t i = 0; i < h->n_drivers; i++)
    if (a->flags & h->drivers[i]->actor_flag) return h->drivers[i];
  return NULL;
}
