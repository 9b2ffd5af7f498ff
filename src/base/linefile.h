/* linefile: a file written in whole lines (the trace). Lines gather in a
 * buffer and go out with write(2); a write that fails (a full disk,
 * /dev/full) cuts the file back to its last whole line, closes it, and
 * keeps the error: no line is ever half written, and every later line is
 * dropped. */
#ifndef TEND_LINEFILE_H
#define TEND_LINEFILE_H

#include <stddef.h>
#include <stdint.h>

typedef struct tend_linefile {
  int fd;            /* -1 when closed */
  char *buf;         /* lines not written yet */
  size_t n, cap;     /* their bytes, and the buffer's size */
  int64_t written;   /* bytes in the file: whole lines only */
  int err;           /* errno of the write that failed, 0 while none */
  volatile int busy; /* 1 while put or close runs (in the owner's thread) */
} tend_linefile;

/* Opens (truncates) path; returns 0, or an errno (f stays closed). */
int tend_linefile_open(tend_linefile *f, const char *path);
/* Appends one whole line (text ending in '\n'); returns 0, or the errno
 * that stopped the file (now or earlier). */
int tend_linefile_put(tend_linefile *f, const char *line, size_t n);
/* Writes what is buffered and closes; returns 0 or the errno that stopped
 * the file. Closing a closed file is harmless. */
int tend_linefile_close(tend_linefile *f);
/* From another thread, just before the process ends (_exit): writes the
 * buffered lines unless the owner is inside put or close, without
 * blocking (O_NONBLOCK) and without freeing or closing anything. */
void tend_linefile_salvage(tend_linefile *f);
/* Is it open? */
static inline int tend_linefile_is_open(const tend_linefile *f) {
  return f->fd >= 0;
}

#endif
