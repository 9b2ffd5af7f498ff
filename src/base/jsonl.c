/* jsonl: JSON lines without printf (see jsonl.h). */
#include "base/jsonl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Makes room for n more bytes and the NUL; 0 when memory is out. */
static int grow(tend_jsonl *b, size_t n) {
  size_t cap = b->cap * 2 + n + 1;
  char *p = b->p == b->small ? malloc(cap) : realloc(b->p, cap);
  if (p == NULL) return 0; /* the line is cut short */
  if (b->p == b->small) memcpy(p, b->small, b->n);
  b->p = p;
  b->cap = cap;
  return 1;
}

static inline int reserve(tend_jsonl *b, size_t n) {
  return b->n + n + 1 <= b->cap || grow(b, n);
}

static void put(tend_jsonl *b, const char *s, size_t n) {
  if (!reserve(b, n)) return;
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = '\0';
}

static void put_str(tend_jsonl *b, const char *s) {
  put(b, s, strlen(s));
}

/* The length of the valid UTF-8 sequence of 2 to 4 bytes at s (n bytes
 * left), or 0 when it is not one (RFC 3629: no overlong forms, no
 * surrogates, nothing past U+10FFFF). */
static size_t utf8_length(const unsigned char *s, size_t n) {
  unsigned char c = s[0], lo = 0x80, hi = 0xBF;
  size_t len;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (n < len || s[1] < lo || s[1] > hi) return 0;
  for (size_t i = 2; i < len; i++)
    if (s[i] < 0x80 || s[i] > 0xBF) return 0;
  return len;
}

/* Appends n bytes at s as a JSON string: runs of plain bytes copied at
 * once; quotes, backslashes and control bytes (NUL too) escaped; valid
 * UTF-8 kept; each byte of invalid UTF-8 written as U+FFFD. */
static void put_quoted(tend_jsonl *b, const char *str, size_t n) {
  const unsigned char *s = (const unsigned char *)str, *end = s + n;
  put(b, "\"", 1);
  while (s < end) {
    const unsigned char *run = s;
    while (s < end && *s >= 0x20 && *s < 0x80 && *s != '"' && *s != '\\') s++;
    if (s > run) put(b, (const char *)run, (size_t)(s - run));
    if (s == end) break;
    char esc[8];
    size_t len;
    if (*s == '"' || *s == '\\') {
      esc[0] = '\\';
      esc[1] = (char)*s;
      put(b, esc, 2);
    } else if (*s == '\n') {
      put(b, "\\n", 2);
    } else if (*s == '\t') {
      put(b, "\\t", 2);
    } else if (*s < 0x20) {
      snprintf(esc, sizeof esc, "\\u%04x", *s);
      put(b, esc, 6);
    } else if ((len = utf8_length(s, (size_t)(end - s))) > 0) {
      put(b, (const char *)s, len);
      s += len;
      continue;
    } else {
      put(b, "\\ufffd", 6);
    }
    s++;
  }
  put(b, "\"", 1);
}

/* ,"k": (no comma before the first key) */
static void put_key(tend_jsonl *b, const char *k) {
  size_t n = strlen(k);
  if (!reserve(b, n + 4)) return;
  char *p = b->p + b->n;
  if (b->fields++) *p++ = ',';
  *p++ = '"';
  memcpy(p, k, n);
  p += n;
  *p++ = '"';
  *p++ = ':';
  b->n = (size_t)(p - b->p);
  b->p[b->n] = '\0';
}

static void put_int(tend_jsonl *b, int64_t x) {
  char num[24];
  int n = 0;
  uint64_t u = x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x;
  do {
    num[sizeof num - 1 - n++] = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  if (x < 0) num[sizeof num - 1 - n++] = '-';
  put(b, num + sizeof num - n, (size_t)n);
}

/* Appends micro units as a fixed "%.6f" number: 1500000 -> 1.500000. */
static void put_micros(tend_jsonl *b, int64_t us) {
  if (us < 0) {
    put(b, "-", 1);
    us = -us;
  }
  put_int(b, us / 1000000);
  char frac[7];
  int64_t f = us % 1000000;
  for (int i = 5; i >= 0; i--) {
    frac[i] = (char)('0' + f % 10);
    f /= 10;
  }
  frac[6] = '.';
  put(b, frac + 6, 1);
  put(b, frac, 6);
}

static void put_seconds(tend_jsonl *b, int64_t ns) {
  put_micros(b, (ns + 500) / 1000);
}

void tend_jsonl_begin(tend_jsonl *b) {
  b->p = b->small;
  b->n = 0;
  b->cap = sizeof b->small;
  b->fields = 0;
  put(b, "{", 1);
}

void tend_jsonl_end(tend_jsonl *b) {
  put(b, "}\n", 2);
}

void tend_jsonl_free(tend_jsonl *b) {
  if (b->p != b->small) free(b->p);
  b->p = b->small;
  b->n = 0;
}

void tend_jsonl_put_string(tend_jsonl *b, const char *key, const char *s,
                           size_t n) {
  put_key(b, key);
  put_quoted(b, s, n);
}

void tend_jsonl_int(tend_jsonl *b, const char *key, int64_t x) {
  put_key(b, key);
  put_int(b, x);
}

void tend_jsonl_raw(tend_jsonl *b, const char *key, const char *text) {
  put_key(b, key);
  put_str(b, text);
}

void tend_jsonl_seconds(tend_jsonl *b, const char *key, int64_t ns) {
  put_key(b, key);
  put_seconds(b, ns);
}

void tend_jsonl_fraction(tend_jsonl *b, const char *key, double x) {
  put_key(b, key);
  put_micros(b, (int64_t)(x * 1e6 + 0.5));
}

void tend_jsonl_window(tend_jsonl *b, const char *key, int64_t a, int64_t c,
                       int64_t seconds_ns) {
  put_key(b, key);
  put(b, "[", 1);
  put_int(b, a);
  put(b, ",", 1);
  put_int(b, c);
  put(b, ",", 1);
  if (seconds_ns < 0)
    put_str(b, "null");
  else
    put_seconds(b, seconds_ns);
  put(b, "]", 1);
}
