/* wire: envelopes and batches of the nodes (see wire.h). */
#include "runtime/nodes/wire.h"

#include <string.h>

static size_t get_be(const unsigned char *p, int width) {
  size_t n = 0;
  for (int i = 0; i < width; i++) n = (n << 8) | p[i];
  return n;
}

static void put_be(unsigned char *p, size_t n, int width) {
  for (int i = width - 1; i >= 0; i--, n >>= 8) p[i] = (unsigned char)n;
}

void tend_wire_put_length(unsigned char *p, size_t n) {
  put_be(p, n, TEND_WIRE_LENGTH_PREFIX);
}

int tend_wire_next(const char *batch, size_t n, size_t *pos, const char **env,
                   size_t *len) {
  if (*pos >= n) return 0;
  if (n - *pos < TEND_WIRE_LENGTH_PREFIX) return -1;
  const unsigned char *p = (const unsigned char *)batch + *pos;
  size_t m = get_be(p, TEND_WIRE_LENGTH_PREFIX);
  if (m > n - *pos - TEND_WIRE_LENGTH_PREFIX) return -1;
  *env = batch + *pos + TEND_WIRE_LENGTH_PREFIX;
  *len = m;
  *pos += TEND_WIRE_LENGTH_PREFIX + m;
  return 1;
}

size_t tend_wire_envelope_size(size_t hn, size_t bn) {
  if (hn > TEND_WIRE_HEADER_MAX) return 0;
  return TEND_WIRE_HEADER_PREFIX + hn + bn;
}

void tend_wire_envelope_put(char *dst, const char *header, size_t hn,
                            const char *body, size_t bn) {
  put_be((unsigned char *)dst, hn, TEND_WIRE_HEADER_PREFIX);
  memcpy(dst + TEND_WIRE_HEADER_PREFIX, header, hn);
  memcpy(dst + TEND_WIRE_HEADER_PREFIX + hn, body, bn);
}

int tend_wire_split(const char *env, size_t n, const char **header, size_t *hn,
                    const char **body, size_t *bn) {
  if (n < TEND_WIRE_HEADER_PREFIX) return -1;
  size_t len = get_be((const unsigned char *)env, TEND_WIRE_HEADER_PREFIX);
  if (len > n - TEND_WIRE_HEADER_PREFIX) return -1;
  *header = env + TEND_WIRE_HEADER_PREFIX;
  *hn = len;
  *body = *header + len;
  *bn = n - TEND_WIRE_HEADER_PREFIX - len;
  return 0;
}
