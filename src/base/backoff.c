/* backoff: delay formulas (see backoff.h). */
#include "base/backoff.h"

static const char *const jitter_names[] = {"akka",  "capped",       "full",
                                           "equal", "decorrelated", "none"};

const char *tend_jitter_name(tend_jitter j) {
  return jitter_names[j];
}

void tend_delay_reset(const tend_delay_cfg *c, tend_delay_state *s) {
  s->n = 0;
  s->prev = c->min_ns;
  s->slot = 1;
}

static double clamp_max(double x, const tend_delay_cfg *c) {
  return x > (double)c->max_ns ? (double)c->max_ns : x;
}

int64_t tend_delay_next(const tend_delay_cfg *c, tend_delay_state *s,
                        tend_rng *rng, double *draw) {
  double d;
  *draw = -1;
  if (c->algorithm == TEND_ALG_SLOTTED) {
    uint64_t e = tend_rng_upto(rng, s->slot);
    *draw = (double)e;
    d = (double)c->slot_ns * (double)((e >= 63 ? UINT64_MAX : (1ULL << e)) - 1);
    s->slot++;
    if (s->slot > c->ceiling) s->slot = c->stay_at_ceiling ? c->ceiling : 1;
  } else {
    /* base = min(max, min * 2^n), without overflowing for large n */
    double base = (double)c->min_ns;
    for (uint32_t i = 0; i < s->n && base > 0 && base < (double)c->max_ns; i++)
      base *= 2;
    base = clamp_max(base, c);
    double u = 0;
    if (c->jitter != TEND_JITTER_NONE) u = *draw = tend_rng_double(rng);
    switch (c->jitter) {
      case TEND_JITTER_AKKA: d = base * (1 + u * c->random_factor); break;
      case TEND_JITTER_CAPPED:
        d = clamp_max(base * (1 + u * c->random_factor), c);
        break;
      case TEND_JITTER_FULL: d = u * base; break;
      case TEND_JITTER_EQUAL: d = base / 2 + u * base / 2; break;
      case TEND_JITTER_DECORRELATED:
        d = clamp_max(
            (double)c->min_ns + u * (3 * (double)s->prev - (double)c->min_ns),
            c);
        break;
      default: d = base; break;
    }
  }
  if (s->n < UINT32_MAX) s->n++;
  int64_t ns = d >= 9.2e18 ? INT64_MAX / 4 : (int64_t)(d + 0.5);
  s->prev = ns;
  return ns;
}

void tend_reset_trap_reset(tend_reset_trap *t) {
  t->reset = 1;
}

int tend_reset_trap_failed(tend_reset_trap *t) {
  t->in_a_row = t->reset ? t->in_a_row + 1 : 0;
  t->reset = 0;
  if (t->told || t->in_a_row < TEND_RESET_TRAP_FAILURES) return 0;
  t->told = 1;
  return 1;
}
