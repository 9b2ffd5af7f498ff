/* rng: the host's one seeded generator (xoshiro256**, seeded by splitmix64).
 * Every random choice in tend draws from it, so one seed fixes them all. */
#ifndef TEND_RNG_H
#define TEND_RNG_H

#include <stdint.h>

typedef struct tend_rng {
  uint64_t s[4]; /* xoshiro256** state; never all zero */
} tend_rng;

void tend_rng_seed(tend_rng *r, uint64_t seed);
uint64_t tend_rng_next(tend_rng *r);
/* Uniform double in [0, 1), 53 random bits. */
double tend_rng_double(tend_rng *r);
/* Uniform integer in [0, n] (inclusive), without modulo bias. */
uint64_t tend_rng_upto(tend_rng *r, uint64_t n);

#endif
