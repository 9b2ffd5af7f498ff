/* rng: xoshiro256** (Blackman and Vigna), state filled by splitmix64. */
#include "base/rng.h"

static uint64_t rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void tend_rng_seed(tend_rng *r, uint64_t seed) {
  uint64_t x = seed;
  for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
}

uint64_t tend_rng_next(tend_rng *r) {
  uint64_t *s = r->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

double tend_rng_double(tend_rng *r) {
  return (double)(tend_rng_next(r) >> 11) * 0x1.0p-53;
}

uint64_t tend_rng_upto(tend_rng *r, uint64_t n) {
  if (n == UINT64_MAX) return tend_rng_next(r);
  /* smallest all-ones mask covering n, then reject draws above n */
  uint64_t mask = n;
  mask |= mask >> 1;
  mask |= mask >> 2;
  mask |= mask >> 4;
  mask |= mask >> 8;
  mask |= mask >> 16;
  mask |= mask >> 32;
  uint64_t x;
  do {
    x = tend_rng_next(r) & mask;
  } while (x > n);
  return x;
}
