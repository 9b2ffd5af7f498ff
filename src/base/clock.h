/* clock: the host's one clock, with two sources. Real: monotonic time since
 * the host started (uv_hrtime). Virtual: a counter that moves only when the
 * host jumps it to the next timer. Time is integer nanoseconds, so virtual
 * sums are exact; Lua sees seconds as floats. */
#ifndef TEND_CLOCK_H
#define TEND_CLOCK_H

#include <stdint.h>

typedef struct tend_clock {
  int is_virtual;  /* 1: virtual source, 0: real */
  uint64_t origin; /* real: uv_hrtime() at start */
  int64_t now;     /* virtual: current time; real: last reading */
} tend_clock;

void tend_clock_init(tend_clock *c, int is_virtual);
/* Current host time in ns (reads the real source when real). */
int64_t tend_clock_now(tend_clock *c);
/* Virtual only: moves the clock forward to t (never backward). */
void tend_clock_jump(tend_clock *c, int64_t t);

/* The longest duration the API takes, in seconds (about 31 years; the
 * clock's nanoseconds saturate at about 2.3e9 s). Longer is refused with
 * an error; math.huge means "never" where that makes sense. */
#define TEND_MAX_SECONDS 1e9

/* Seconds (finite, >= 0) to nanoseconds, rounded to the nearest,
 * saturating at INT64_MAX / 4. A positive duration is at least 1 ns: a
 * wait of what is left until a deadline (a float, off by an ulp) always
 * moves the virtual clock, so a loop that waits until then ends. */
int64_t tend_clock_ns(double seconds);

#endif
