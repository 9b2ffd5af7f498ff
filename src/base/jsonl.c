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

/* Appends s as a JSON string (runs of plain bytes copied at once). */
static void put_quoted(tend_jsonl *b, const char *s) {
  put(b, "\"", 1);
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    const unsigned char *run = c;
    while (*c >= 0x20 && *c != '"' && *c != '\\') c++;
    if (c > run) put(b, (const char *)run, (size_t)(c - run));
    if (*c == '\0') break;
    char esc[8];
    if (*c == '"' || *c == '\\') {
      esc[0] = '\\';
      esc[1] = (char)*c;
      put(b, esc, 2);
    } else if (*c == '\n') {
      put(b, "\\n", 2);
    } else if (*c == '\t') {
      put(b, "\\t", 2);
    } else {
      snprintf(esc, sizeof esc, "\\u%04x", *c);
      put(b, esc, 6);
    }
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

void tend_jsonl_put_string(tend_jsonl *b, const char *key, const char *s) {
  put_key(b, key);
  put_quoted(b, s);
}

void tend_jsonl_int(tend_jsonl *b, const char *key, int64_t x) {
  put_key(b, key);
  put_int(b, x);
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
