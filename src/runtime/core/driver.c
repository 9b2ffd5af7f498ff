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

/* Appends d to list l; -1 when out of memory. */
static int append(tend_driver_list *l, const tend_driver *d) {
  if (l->n == l->cap) {
    uint32_t cap = l->cap ? 2 * l->cap : 4;
    const tend_driver **v = realloc(l->v, cap * sizeof *v);
    if (v == NULL) return refuse(d->name, "moment", 0, "is out of memory");
    l->v = v;
    l->cap = cap;
  }
  l->v[l->n++] = d;
  return 0;
}

int tend_driver_add(tend_host *h, const tend_driver *d) {
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
  if (d->role >= TEND_ROLES)
    return refuse(d->name, "role", d->role, "is out of range");
  if (d->role) CLAIM(h->role_driver[d->role], d, "role", d->role);
  const int hooks[TEND_MOMENTS] = {
      [TEND_AT_REBUILD] = d->rebuild != NULL,
      [TEND_AT_DEATH] = d->death != NULL,
      [TEND_AT_RELEASE] = d->release != NULL,
      [TEND_AT_FAILED] = d->failed != NULL,
      [TEND_AT_SHUTDOWN] = d->shutdown != NULL,
      [TEND_AT_TREE_GONE] = d->tree_gone != NULL,
      [TEND_AT_CLOSE] = d->close_all != NULL,
      [TEND_AT_PUMP] = d->next_due != NULL || d->step != NULL};
  for (int m = 0; m < TEND_MOMENTS; m++)
    if (hooks[m] && append(&h->at[m], d)) return -1;
  return 0;
}

void tend_driver_free(tend_host *h) {
  for (int m = 0; m < TEND_MOMENTS; m++) {
    free(h->at[m].v);
    h->at[m] = (tend_driver_list){0};
  }
}

const tend_driver *tend_driver_of(const tend_host *h, const tend_actor *a) {
  return h->role_driver[a->role];
}
