/* jsonl: one JSON object per line, written into a growable buffer: keys
 * in the order the caller puts them, strings escaped, numbers in a fixed
 * format without printf (so lines compare byte for byte and are fast to
 * make). */
#ifndef TEND_JSONL_H
#define TEND_JSONL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct tend_jsonl {
  char *p;         /* the text so far, NUL-terminated */
  size_t n, cap;   /* its length and capacity */
  int fields;      /* keys written so far (commas go between them) */
  char small[512]; /* p points here until the line outgrows it */
} tend_jsonl;

/* Starts a line: "{". */
void tend_jsonl_begin(tend_jsonl *b);
/* Ends it: "}\n". The text is b->p[0..b->n). */
void tend_jsonl_end(tend_jsonl *b);
/* Frees what the line allocated beyond its small buffer. */
void tend_jsonl_free(tend_jsonl *b);

/* "key": "s" for the n bytes at s (NUL bytes too), escaped; invalid
 * UTF-8 written as U+FFFD, byte by byte. */
void tend_jsonl_put_string(tend_jsonl *b, const char *key, const char *s,
                           size_t n);
/* The same for a C string; NULL writes nothing (no call for absent
 * fields). */
static inline void tend_jsonl_string(tend_jsonl *b, const char *key,
                                     const char *s) {
  if (s) tend_jsonl_put_string(b, key, s, strlen(s));
}
void tend_jsonl_int(tend_jsonl *b, const char *key, int64_t x);
/* "key": text, as it is (a number the caller wrote: no quotes). */
void tend_jsonl_raw(tend_jsonl *b, const char *key, const char *text);
/* Nanoseconds as seconds with 6 decimals (rounded to the microsecond). */
void tend_jsonl_seconds(tend_jsonl *b, const char *key, int64_t ns);
/* A fraction in [0, 1) with 6 decimals. */
void tend_jsonl_fraction(tend_jsonl *b, const char *key, double x);
/* "key": [a, b, seconds or null when seconds_ns < 0]. */
void tend_jsonl_window(tend_jsonl *b, const char *key, int64_t a, int64_t c,
                       int64_t seconds_ns);

#endif
