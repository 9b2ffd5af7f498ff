/* strategy: restart limits and windows (see strategy.h). */
#include "base/strategy.h"

#include <stdlib.h>
#include <string.h>

tend_limit tend_limit_make(int64_t max_retries, int64_t within_ns,
                           tend_window_kind window) {
  tend_limit l = {max_retries, within_ns, window};
  if (max_retries < 0 && within_ns != INT64_MAX) l.max = 1;
  return l;
}

/* Drops sliding entries that left the window: those more than `within`
 * old. A restart exactly `within` old still counts (OTP's add_restart keeps
 * entries >= Now - Period). */
static void expire(tend_window *w, const tend_limit *lim, int64_t now) {
  while (w->n > 0 && now - w->times[w->head] > lim->within) {
    w->head = (w->head + 1) % w->cap;
    w->n--;
  }
}

int tend_window_allow(tend_window *w, const tend_limit *lim, int64_t now) {
  if (lim->max < 0) return 1; /* unlimited */
  if (lim->max == 0) return 0;
  if (lim->within == INT64_MAX || lim->window == TEND_WINDOW_FIXED) {
    if (lim->within != INT64_MAX && w->count > 0 &&
        now - w->start > lim->within)
      w->count = 0; /* the fixed window expired (more than `within` after it
                       opened; at exactly `within` it is still open): a new
                       one opens */
    if (w->count == 0) w->start = now;
    if (w->count >= lim->max) return 0;
    w->count++;
    return 1;
  }
  if (w->cap < (uint64_t)lim->max) { /* sliding: keep the last max times */
    if (lim->max > UINT32_MAX / 2) return -1;
    uint32_t cap = (uint32_t)lim->max;
    int64_t *t = malloc(cap * sizeof *t);
    if (t == NULL) return -1;
    for (uint32_t i = 0; i < w->n; i++) t[i] = w->times[(w->head + i) % w->cap];
    free(w->times);
    w->times = t;
    w->cap = cap;
    w->head = 0;
  }
  expire(w, lim, now);
  if (w->n >= lim->max) return 0;
  w->times[(w->head + w->n) % w->cap] = now;
  w->n++;
  return 1;
}

int64_t tend_window_used(const tend_window *w, const tend_limit *lim,
                         int64_t now) {
  if (lim->within == INT64_MAX || lim->window == TEND_WINDOW_FIXED) {
    if (lim->within != INT64_MAX && w->count > 0 &&
        now - w->start > lim->within)
      return 0;
    return w->count;
  }
  int64_t n = 0;
  for (uint32_t i = 0; i < w->n; i++)
    if (now - w->times[(w->head + i) % w->cap] <= lim->within) n++;
  return n;
}

void tend_window_free(tend_window *w) {
  free(w->times);
  memset(w, 0, sizeof *w);
}

static const char *const directive_names[] = {"resume", "restart", "stop",
                                              "escalate"};

const char *tend_directive_name(tend_directive d) {
  return directive_names[d];
}

int tend_directive_parse(const char *name) {
  for (int i = 0; i < 4; i++)
    if (strcmp(name, directive_names[i]) == 0) return i;
  return -1;
}

tend_strategy tend_strategy_default(void) {
  tend_strategy s = {TEND_ONE_FOR_ONE,
                     {-1, INT64_MAX, TEND_WINDOW_FIXED},
                     TEND_ON_LIMIT_STOP_CHILD,
                     1,
                     0};
  return s;
}

tend_strategy tend_strategy_stopping(void) {
  tend_strategy s = tend_strategy_default();
  s.stopping = 1;
  return s;
}
