/* mailbox: per-actor message queues built from pooled nodes.
 * A mailbox has a system queue (lifecycle signals, served first) and a user
 * queue (messages). Nodes come from a pool (base/pool.h), so a steady
 * message flow allocates nothing. Message values are opaque here (see value.h).
 */
#ifndef TEND_MAILBOX_H
#define TEND_MAILBOX_H

#include <stddef.h>
#include <stdint.h>

#include "base/pool.h"

/* How a message value is held: small values inline, the rest in a Lua-side
 * store at `slot` (value.c). */
typedef enum tend_value_type {
  TEND_VALUE_NIL,
  TEND_VALUE_FALSE,
  TEND_VALUE_TRUE,
  TEND_VALUE_INT,
  TEND_VALUE_NUM,
  TEND_VALUE_REF /* any other Lua value, held in the value store */
} tend_value_type;

/* A value's payload, kept apart from its type where a record packs the
 * type with its other small fields (an actor's reply). */
typedef union tend_value_u {
  int64_t i;     /* TEND_VALUE_INT */
  double n;      /* TEND_VALUE_NUM */
  uint32_t slot; /* TEND_VALUE_REF: index in the value store */
} tend_value_u;

typedef struct tend_value {
  tend_value_type type;
  tend_value_u u;
} tend_value;

typedef enum tend_msg_kind {
  TEND_MSG_USER,         /* a message for the behavior */
  TEND_MSG_TERMINATED,   /* user queue: a watched actor (sender) died */
  TEND_MSG_KILL,         /* user queue: tend.kill; fails the actor with
                            Killed when reached, in order (Akka's Kill) */
  TEND_MSG_POISON,       /* user queue: tend.poison; stops the actor (as its
                            behavior returning tend.stopped) when reached,
                            in order (Akka's PoisonPill) */
  TEND_MSG_START,        /* run the factory (first thing an actor does) */
  TEND_MSG_STOP,         /* stop: children first, then post_stop, then die */
  TEND_MSG_CHILD_GONE,   /* a child died; a stopping actor may go on */
  TEND_MSG_CHILD_FAILED, /* a child (sender) failed: decide */
  TEND_MSG_CHILD_EXITED, /* a permanent child (sender) stopped by itself:
                            restart it */
  TEND_MSG_RESTART,      /* restart with a failed sibling or the parent */
  TEND_MSG_RESTART_SELF, /* restart that ends its own failure */
  TEND_MSG_GROUP_STEP,   /* to a parent: a member of its group restart is
                            stopped (held) or gone: the next one goes */
  TEND_MSG_RESTART_GO,   /* to a held member: its group is stopped: build
                            the new instance */
  TEND_MSG_KINDS
} tend_msg_kind;

typedef struct tend_msg tend_msg;
struct tend_msg {
  tend_msg *next;      /* next in its queue (first: the pool's link) */
  tend_msg_kind kind;  /* user message or system signal */
  uint32_t sender_id;  /* sender actor slot, 0 for none; for system
                          messages, the actor they are about */
  uint32_t sender_gen; /* sender generation */
  uint32_t held;       /* 1: a request of an ask its recipient holds,
                          counted there while queued (runtime/promise.h);
                          0 from tend_msg_alloc */
  tend_value value;    /* TEND_MSG_USER: the message, owned by the node */
};

typedef struct tend_queue {
  tend_msg *head, *tail; /* FIFO; both NULL when empty */
} tend_queue;

typedef struct tend_mailbox {
  tend_queue sys;  /* system signals, served before user messages */
  tend_queue user; /* user messages in arrival order */
  uint32_t n_user; /* length of the user queue */
} tend_mailbox;

/* Nodes come from the host's message pool (base/pool.h). */
static inline tend_msg *tend_msg_alloc(tend_pool *p) {
  tend_msg *m = tend_pool_get(p);
  if (m) m->held = 0;
  return m;
}
static inline void tend_msg_release(tend_pool *p, tend_msg *m) {
  tend_pool_put(p, m);
}

static inline void tend_queue_push(tend_queue *q, tend_msg *m) {
  m->next = NULL;
  if (q->tail)
    q->tail->next = m;
  else
    q->head = m;
  q->tail = m;
}

static inline tend_msg *tend_queue_pop(tend_queue *q) {
  tend_msg *m = q->head;
  if (m) {
    q->head = m->next;
    if (q->head == NULL) q->tail = NULL;
  }
  return m;
}

#endif
