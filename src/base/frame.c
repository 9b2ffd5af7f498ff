/* frame: a byte stream cut into frames (see frame.h). */
#include "base/frame.h"

#include <stdlib.h>
#include <string.h>

void tend_framer_init(tend_framer *f, tend_framing mode, size_t max) {
  memset(f, 0, sizeof *f);
  f->mode = mode;
  f->max = max;
}

void tend_framer_free(tend_framer *f) {
  free(f->buf);
  f->buf = NULL;
  f->len = f->cap = 0;
}

/* Appends n bytes to the frame begun; -2 without memory. */
static int keep(tend_framer *f, const char *data, size_t n) {
  if (f->len + n > f->cap) {
    size_t cap = f->cap ? f->cap : 256;
    while (cap < f->len + n) cap *= 2;
    char *b = realloc(f->buf, cap);
    if (b == NULL) return -2;
    f->buf = b;
    f->cap = cap;
  }
  memcpy(f->buf + f->len, data, n);
  f->len += n;
  return 0;
}

/* A line's frame without its "\r\n" or "\n" end. */
static int emit_line(const char *s, size_t n, tend_frame_fn fn, void *ud) {
  if (n > 0 && s[n - 1] == '\r') n--;
  return fn(ud, s, n);
}

/* Releases a large buffer once its frame is out (idle connections keep
 * nothing big). */
static void reset(tend_framer *f) {
  f->len = 0;
  if (f->cap > 4096) tend_framer_free(f);
}

static int feed_lines(tend_framer *f, const char *data, size_t n,
                      tend_frame_fn fn, void *ud) {
  while (n > 0) {
    const char *nl = memchr(data, '\n', n);
    size_t k = nl ? (size_t)(nl - data) : n;
    if (f->len + k > f->max) return -1;
    if (nl == NULL) return keep(f, data, k);
    int stop;
    if (f->len == 0) {
      stop = emit_line(data, k, fn, ud);
    } else {
      if (keep(f, data, k) != 0) return -2;
      stop = emit_line(f->buf, f->len, fn, ud);
      reset(f);
    }
    if (stop) return 1;
    data += k + 1;
    n -= k + 1;
  }
  return 0;
}

static size_t be32(const unsigned char *p) {
  return (size_t)p[0] << 24 | (size_t)p[1] << 16 | (size_t)p[2] << 8 | p[3];
}

static int feed_lengths(tend_framer *f, const char *data, size_t n,
                        tend_frame_fn fn, void *ud) {
  while (n > 0) {
    if (f->len < 4) { /* the header */
      size_t k = 4 - f->len < n ? 4 - f->len : n;
      if (keep(f, data, k) != 0) return -2;
      data += k;
      n -= k;
      if (f->len < 4) return 0;
      if (be32((const unsigned char *)f->buf) > f->max) return -1;
      if (be32((const unsigned char *)f->buf) == 0) { /* an empty frame */
        f->len = 0;
        if (fn(ud, "", 0)) return 1;
        continue;
      }
    }
    size_t want = be32((const unsigned char *)f->buf);
    size_t have = f->len - 4;
    if (have == 0 && n >= want) { /* a whole frame in the piece: no copy */
      f->len = 0;
      int stop = fn(ud, data, want);
      if (stop) return 1;
      data += want;
      n -= want;
      continue;
    }
    size_t k = want - have < n ? want - have : n;
    if (keep(f, data, k) != 0) return -2;
    data += k;
    n -= k;
    if (f->len - 4 == want) {
      int stop = fn(ud, f->buf + 4, want);
      reset(f);
      if (stop) return 1;
    }
  }
  return 0;
}

int tend_framer_feed(tend_framer *f, const char *data, size_t n,
                     tend_frame_fn fn, void *ud) {
  switch (f->mode) {
    case TEND_FRAME_LINE: return feed_lines(f, data, n, fn, ud);
    case TEND_FRAME_LENGTH: return feed_lengths(f, data, n, fn, ud);
    case TEND_FRAME_RAW: return n > 0 && fn(ud, data, n) ? 1 : 0;
  }
  return 0;
}

void tend_framer_end(tend_framer *f, tend_frame_fn fn, void *ud) {
  if (f->mode == TEND_FRAME_LINE && f->len > 0)
    (void)emit_line(f->buf, f->len, fn, ud);
  tend_framer_free(f);
}

size_t tend_frame_overhead(tend_framing mode) {
  return mode == TEND_FRAME_LENGTH ? 4 : mode == TEND_FRAME_LINE ? 1 : 0;
}

void tend_frame_header(tend_framing mode, size_t n, char out[4]) {
  if (mode != TEND_FRAME_LENGTH) return;
  out[0] = (char)(n >> 24 & 0xff);
  out[1] = (char)(n >> 16 & 0xff);
  out[2] = (char)(n >> 8 & 0xff);
  out[3] = (char)(n & 0xff);
}

const char *tend_frame_trailer(tend_framing mode) {
  return mode == TEND_FRAME_LINE ? "\n" : "";
}
