/* clock: real (uv_hrtime) and virtual time sources (see clock.h). */
#include "base/clock.h"

#include <uv.h>

#define NS_LIMIT (INT64_MAX / 4)

void tend_clock_init(tend_clock *c, int is_virtual) {
  c->is_virtual = is_virtual;
  c->origin = uv_hrtime();
  c->now = 0;
}

int64_t tend_clock_now(tend_clock *c) {
  if (!c->is_virtual) c->now = (int64_t)(uv_hrtime() - c->origin);
  return c->now;
}

void tend_clock_jump(tend_clock *c, int64_t t) {
  if (c->is_virtual && t > c->now) c->now = t;
}

int64_t tend_clock_ns(double seconds) {
  double ns = seconds * 1e9;
  if (!(ns < (double)NS_LIMIT)) return NS_LIMIT;
  if (ns <= 0) return 0;
  if (ns < 1) return 1; /* never 0: a positive wait must move the clock */
  return (int64_t)(ns + 0.5);
}
