/* schedulers: several schedulers in one process (see schedulers.h): the
 * set, its pump and threads, the names under /user; the envelopes between
 * them are schedmail.c's. */
#include "runtime/nodes/schedulers.h"

#include <lauxlib.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/nodes/schedrec.h"

int tend_schedulers_count(const tend_host *h) {
  return h->scheds ? h->scheds->n : 1;
}

int tend_schedulers_index(const tend_host *h) {
  return (int)h->sched_index;
}

/* The actors living on h (guardians and proxies are not counted). */
static uint64_t live_actors(const tend_host *h) {
  uint64_t n = 0;
  for (uint32_t i = 1; i < h->ids.n; i++) {
    tend_actor *a = h->ids.v[i].ptr;
    if (a && a->kind == TEND_ENTITY_ACTOR && a->role != TEND_ROLE_GUARDIAN &&
        a->role != TEND_ROLE_REMOTE)
      n++;
  }
  return n;
}

int tend_schedulers_threaded(const tend_host *h) {
  return h->scheds && h->scheds->threaded;
}

int tend_schedulers_least_loaded(const tend_host *h) {
  tend_scheds *s = h->scheds;
  if (s == NULL) return 0;
  if (s->threaded) /* the others' counts are theirs: each in turn */
    return (int)(atomic_fetch_add(&s->turn, 1) % (unsigned)s->n);
  int best = 0;
  uint64_t least = UINT64_MAX;
  for (int k = 0; k < s->n; k++) {
    if (s->h[k] == NULL) continue;
    uint64_t live = live_actors(s->h[k]);
    if (live < least) {
      least = live;
      best = k;
    }
  }
  return best;
}

void tend_sched_wake0(tend_scheds *s) {
  if (!s->threaded || atomic_load(&s->busy) != 0 ||
      atomic_load(&s->pending) != 0)
    return;
  uv_mutex_lock(&s->lock[0]);
  if (s->open[0]) uv_async_send(s->wake[0]);
  uv_mutex_unlock(&s->lock[0]);
}

/* Hands scheduler k (h) its inbox, oldest first. */
/* ------------------------------------------------------------ the pump */

/* Virtual clock: scheduler 0's pump, after its own turn: its inbox, then
 * each other scheduler's inbox and turn, in index order, on scheduler 0's
 * clock. */
static void step(tend_host *h) {
  tend_scheds *s = h->scheds;
  if (s == NULL || s->threaded || h->sched_index != 0) return;
  tend_sched_arrive_all(h);
  for (int k = 1; k < s->n; k++) {
    tend_host *o = s->h[k];
    if (o == NULL) continue;
    tend_clock_jump(&o->clock, h->clock.now);
    tend_sched_arrive_all(o);
    tend_host_turn(o);
  }
}

/* Real clock, on scheduler k >= 1: whether it has work now (something to
 * run, a timer, a handle or request of its own), kept in the shared count;
 * the last to go idle with nothing on its way wakes scheduler 0, which
 * may then end. */
void tend_sched_note_busy(tend_host *h) {
  tend_scheds *s = h->scheds;
  int k = (int)h->sched_index;
  uv_loop_t *l = &h->loop;
  unsigned handles = l->active_handles;
  handles -= uv_is_active((uv_handle_t *)&h->idle) ? 1u : 0u;
  handles -= uv_is_active((uv_handle_t *)&h->uvtimer) ? 1u : 0u;
  int busy = h->runq_head != NULL || tend_timer_heap_top(&h->timers) ||
             handles > 1 /* its wake-up */ || l->active_reqs.count > 0;
  if (busy == s->busy_flag[k]) return;
  s->busy_flag[k] = busy;
  if (busy)
    atomic_fetch_add(&s->busy, 1);
  else if (atomic_fetch_sub(&s->busy, 1) == 1)
    tend_sched_wake0(s);
}

/* Real clock, scheduler 0: its loop is held (its wake-up referenced)
 * while another scheduler works or an envelope is on its way. */
static void hold0(tend_scheds *s) {
  if (atomic_load(&s->busy) > 0 || atomic_load(&s->pending) > 0)
    uv_ref((uv_handle_t *)s->wake[0]);
  else
    uv_unref((uv_handle_t *)s->wake[0]);
}

static int64_t next_due(tend_host *h, int *busy) {
  tend_scheds *s = h->scheds;
  int64_t next = -1;
  *busy = 0;
  if (s == NULL) return -1;
  if (s->threaded) {
    if (h->sched_index == 0) { /* alive while the others work */
      hold0(s);
    } else {
      tend_sched_note_busy(h);
    }
    return -1;
  }
  if (h->sched_index != 0) return -1;
  if (atomic_load(&s->pending) > 0) *busy = 1; /* envelopes to hand over */
  for (int k = 1; k < s->n; k++) {
    tend_host *o = s->h[k];
    if (o == NULL) continue;
    if (o->runq_head) *busy = 1;
    tend_timer *t = tend_timer_heap_top(&o->timers);
    if (t && (next < 0 || t->due < next)) next = t->due;
  }
  return next;
}

/* Real clock, scheduler k >= 1: its tree is gone, so its loop may end
 * (its wake-up no longer holds it) and it counts as idle. */
static void tree_gone(tend_host *h) {
  tend_scheds *s = h->scheds;
  if (s == NULL || !s->threaded || h->sched_index == 0) return;
  int k = (int)h->sched_index;
  uv_unref((uv_handle_t *)s->wake[k]);
  if (s->busy_flag[k]) {
    s->busy_flag[k] = 0;
    atomic_fetch_sub(&s->busy, 1);
  }
  uv_mutex_lock(&s->lock[0]);
  if (s->open[0]) uv_async_send(s->wake[0]);
  uv_mutex_unlock(&s->lock[0]);
}

/* Scheduler 0's tree starts stopping: so do the others'. */
static void stop_all(tend_host *h) {
  tend_scheds *s = h->scheds;
  if (s == NULL || h->sched_index != 0) return;
  for (int k = 1; k < s->n; k++) {
    if (s->threaded)
      tend_sched_post(h, k, ENV_QUIT, 0, 0, h->shutdown == TEND_SHUTDOWN_FORCED,
                      0, NULL, 0);
    else if (s->h[k])
      tend_host_shutdown(s->h[k], 0);
  }
}

static void free_handle(uv_handle_t *handle) {
  free(handle);
}

/* Drops what is still queued for scheduler k. */
static void drain(tend_scheds *s, int k) {
  tend_mpsc_node *n;
  while ((n = tend_mpsc_pop(&s->inbox[k])) != NULL) {
    free(n);
    atomic_fetch_sub(&s->pending, 1);
  }
}

static void free_scheds(tend_scheds *s) {
  tend_sched_names_free(s);
  if (s->threaded) {
    for (int k = 0; k < s->n; k++) uv_mutex_destroy(&s->lock[k]);
    uv_sem_destroy(&s->ready);
  }
  uv_mutex_destroy(&s->names_lock);
  free(s);
}

static void close_all(tend_host *h) {
  tend_scheds *s = h->scheds;
  if (s == NULL) return;
  int k0 = (int)h->sched_index;
  if (s->threaded) { /* its wake-up goes first: nothing more is posted */
    uv_mutex_lock(&s->lock[k0]);
    s->open[k0] = 0;
    uv_mutex_unlock(&s->lock[k0]);
    uv_close((uv_handle_t *)s->wake[k0], free_handle);
    if (s->look[k0]) uv_close((uv_handle_t *)s->look[k0], free_handle);
  }
  if (k0 != 0) {
    drain(s, k0);
    h->scheds = NULL;
    return;
  }
  for (int k = 1; k < s->n; k++) {
    if (s->threaded) {
      /* each stops at once if it has not yet, then its thread ends */
      tend_sched_post(h, k, ENV_QUIT, 0, 0, 1, 0, NULL, 0);
      uv_thread_join(&s->thread[k]);
    } else if (s->h[k]) {
      tend_host *o = s->h[k];
      s->h[k] = NULL;
      tend_clock_jump(&o->clock, h->clock.now);
      tend_host_close(o);
    }
  }
  drain(s, 0);
  h->scheds = NULL;
  free_scheds(s);
}

/* ------------------------------------------------------------ opening */

/* How long an idle scheduler looks at its inbox before its loop sleeps:
 * an envelope that comes meanwhile costs neither side a system call or a
 * thread wake-up (BEAM's schedulers spin before they sleep too). */
#define LOOK_NS 20000
/* Looks in a row that found nothing before it stops looking (the machine
 * is busy, or the work is not a conversation between schedulers); a
 * wake-up that comes within LOOK_NS of its sleep starts it again. */
#define LOOK_MISSES 8

static void on_wake(uv_async_t *handle) {
  tend_host *h = handle->data;
  if (h->scheds == NULL) return;
  int k = (int)h->sched_index;
  if (h->scheds->look[k] && !h->scheds->looks[k] &&
      uv_hrtime() - h->scheds->slept_at[k] < LOOK_NS) {
    h->scheds->looks[k] = 1; /* a look would have caught it: look again */
    h->scheds->misses[k] = 0;
  }
  tend_sched_arrive_all(h);
  tend_host_poke(h);
  if (h->sched_index == 0) hold0(h->scheds); /* (its tree may be gone) */
}

/* Real clock, scheduler k's loop about to sleep (a prepare handle, when
 * the process has a processor for each scheduler): it looks at its inbox
 * for up to LOOK_NS (less when a timer is due sooner) and takes what
 * came. While it looks, posts do not wake it; after it stops, a fence,
 * then one more look: a post either sees it stopped and wakes it, or is
 * seen here (tend_sched_post). */
static void on_look(uv_prepare_t *handle) {
  tend_host *h = handle->data;
  tend_scheds *s = h->scheds;
  int timeout = uv_backend_timeout(handle->loop);
  if (s == NULL || timeout == 0) return;
  int k = (int)h->sched_index;
  if (!s->looks[k]) {
    s->slept_at[k] = uv_hrtime();
    return;
  }
  uint64_t budget = LOOK_NS;
  if (timeout > 0 && (uint64_t)timeout * 1000000u < budget)
    budget = (uint64_t)timeout * 1000000u;
  uint64_t end = uv_hrtime() + budget;
  atomic_store_explicit(&s->spinning[k], 1, memory_order_relaxed);
  atomic_thread_fence(memory_order_seq_cst);
  int found = 0;
  while (!(found = tend_mpsc_waiting(&s->inbox[k])) && uv_hrtime() < end)
    sched_yield(); /* a busy machine's other threads (the sender) go first */
  atomic_store_explicit(&s->spinning[k], 0, memory_order_relaxed);
  atomic_thread_fence(memory_order_seq_cst);
  if (found || tend_mpsc_waiting(&s->inbox[k])) {
    s->misses[k] = 0;
    tend_sched_arrive_all(h);
    tend_host_poke(h);
    if (k == 0) hold0(s);
  } else if (++s->misses[k] >= LOOK_MISSES) {
    s->looks[k] = 0;
    s->slept_at[k] = uv_hrtime();
  }
}

/* Makes h scheduler k of s (on h's own thread under the real clock). */
static int join(tend_scheds *s, tend_host *h, int k) {
  h->scheds = s;
  h->sched_index = (uint32_t)k;
  h->sched_send = tend_sched_send;
  h->sched_control = tend_sched_control;
  if (s->threaded)
    h->seq_shared = &s->seq; /* taken atomically (actor.c) */
  else if (k > 0)
    h->seq = s->h[0]->seq;
  s->h[k] = h;
  if (!s->threaded) return 0;
  s->wake[k] = malloc(sizeof(uv_async_t));
  if (s->wake[k] == NULL || uv_async_init(&h->loop, s->wake[k], on_wake) != 0)
    return -1;
  s->wake[k]->data = h;
  if (k == 0) uv_unref((uv_handle_t *)s->wake[k]);
  /* with more schedulers than processors, one's look would hold the
     processor another needs to answer it */
  if ((unsigned)s->n <= uv_available_parallelism()) {
    s->look[k] = malloc(sizeof(uv_prepare_t));
    if (s->look[k] == NULL || uv_prepare_init(&h->loop, s->look[k]) != 0)
      return -1;
    s->look[k]->data = h;
    uv_prepare_start(s->look[k], on_look);
    s->looks[k] = 1;
    uv_unref((uv_handle_t *)s->look[k]); /* it keeps no loop alive */
  }
  uv_mutex_lock(&s->lock[k]);
  s->open[k] = 1;
  uv_mutex_unlock(&s->lock[k]);
  return 0;
}

typedef struct thread_arg {
  tend_scheds *s;
  int k;
  tend_host_config cfg;
} thread_arg;

/* Scheduler k's thread: its host opened, run until told to quit, closed. */
static void run_thread(void *arg) {
  thread_arg *t = arg;
  tend_scheds *s = t->s;
  int k = t->k;
  tend_host *h = tend_host_open(&t->cfg);
  free(t);
  if (h == NULL || join(s, h, k) != 0) {
    s->failed = 1;
    uv_sem_post(&s->ready);
    if (h) tend_host_close(h);
    return;
  }
  uv_sem_post(&s->ready);
  tend_host_run(h);
  tend_host_close(h);
  /* gone: it counts as idle, and scheduler 0 looks again */
  if (s->busy_flag[k]) {
    s->busy_flag[k] = 0;
    atomic_fetch_sub(&s->busy, 1);
  }
  uv_mutex_lock(&s->lock[0]);
  if (s->open[0]) uv_async_send(s->wake[0]);
  uv_mutex_unlock(&s->lock[0]);
}

int tend_schedulers_open(tend_host *h, int n) {
  if (n <= 1) return 0;
  tend_scheds *s = calloc(1, sizeof *s);
  if (s == NULL) return -1;
  s->n = n;
  s->threaded = !h->clock.is_virtual;
  uv_mutex_init(&s->names_lock);
  for (int k = 0; k < n; k++) tend_mpsc_init(&s->inbox[k]);
  if (s->threaded) {
    for (int k = 0; k < n; k++) uv_mutex_init(&s->lock[k]);
    uv_sem_init(&s->ready, 0);
    atomic_store(&s->seq, h->next_seq);
  }
  if (join(s, h, 0) != 0) return -1;
  for (int k = 1; k < n; k++) {
    tend_host_config cfg = {
        .virtual_time = !s->threaded,
        .has_seed = 1,
        .seed = h->seed + (uint64_t)k * 0x9E3779B97F4A7C15ull,
        .log_level = h->log_level,
        .copy_messages = h->copy_messages,
        .drivers = h->drivers,
        .open = h->open,
        .world = s->threaded ? NULL : h, /* its pump is scheduler 0's */
        .no_signals = 1,
    };
    if (!s->threaded) {
      tend_host *o = tend_host_open(&cfg);
      if (o == NULL) return -1;
      join(s, o, k);
      tend_clock_jump(&o->clock, h->clock.now);
      continue;
    }
    thread_arg *t = malloc(sizeof *t);
    if (t == NULL) return -1;
    *t = (thread_arg){s, k, cfg};
    if (uv_thread_create(&s->thread[k], run_thread, t) != 0) {
      free(t);
      return -1;
    }
    uv_sem_wait(&s->ready);
    if (s->failed) {
      fprintf(stderr, "tend: --schedulers: scheduler %d could not start\n", k);
      return -1;
    }
  }
  return 0;
}

const tend_driver tend_schedulers_driver = {
    .name = "schedulers",
    .death = tend_sched_death,
    .shutdown = stop_all,
    .tree_gone = tree_gone,
    .close_all = close_all,
    .next_due = next_due,
    .step = step,
};
