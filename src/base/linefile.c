/* linefile: whole lines or nothing (see linefile.h). */
#include "base/linefile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BUFFER (1 << 20)

int tend_linefile_open(tend_linefile *f, const char *path) {
  memset(f, 0, sizeof *f);
  f->fd = -1;
  f->buf = malloc(BUFFER);
  if (f->buf == NULL) return ENOMEM;
  f->cap = BUFFER;
  f->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (f->fd < 0) {
    int e = errno;
    free(f->buf);
    f->buf = NULL;
    return e;
  }
  return 0;
}

/* The file failed with errno e: back to its last whole line, closed. A
 * file that cannot be cut (not a regular one) keeps what it has. */
static int fail(tend_linefile *f, int e) {
  int cut = ftruncate(f->fd, (off_t)f->written);
  (void)cut;
  close(f->fd);
  f->fd = -1;
  f->err = e;
  f->n = 0;
  return e;
}

/* Writes n bytes at p; returns 0 or the errno of the failure, the bytes
 * that went out in *done. */
static int write_all(int fd, const char *p, size_t n, size_t *done) {
  *done = 0;
  while (*done < n) {
    ssize_t w = write(fd, p + *done, n - *done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return errno;
    if (w == 0) return ENOSPC;
    *done += (size_t)w;
  }
  return 0;
}

/* Writes n bytes of whole lines at p; on a failure, the lines that went
 * out whole are kept. */
static int put_lines(tend_linefile *f, const char *p, size_t n) {
  size_t done;
  int e = write_all(f->fd, p, n, &done);
  while (done > 0 && p[done - 1] != '\n') done--; /* the last whole line */
  f->written += (int64_t)done;
  return e ? fail(f, e) : 0;
}

/* Writes the buffered lines. */
static int flush(tend_linefile *f) {
  size_t n = f->n;
  f->n = 0;
  return put_lines(f, f->buf, n);
}

static int put(tend_linefile *f, const char *line, size_t n) {
  if (f->fd < 0) return f->err;
  if (f->n + n > f->cap && flush(f) != 0) return f->err;
  if (n > f->cap) return put_lines(f, line, n); /* longer than the buffer */
  memcpy(f->buf + f->n, line, n);
  f->n += n;
  return 0;
}

int tend_linefile_put(tend_linefile *f, const char *line, size_t n) {
  f->busy = 1;
  int e = put(f, line, n);
  f->busy = 0;
  return e;
}

int tend_linefile_close(tend_linefile *f) {
  f->busy = 1;
  if (f->fd >= 0 && flush(f) == 0) {
    close(f->fd);
    f->fd = -1;
  }
  free(f->buf);
  f->buf = NULL;
  f->n = f->cap = 0;
  f->busy = 0;
  return f->err;
}

void tend_linefile_salvage(tend_linefile *f) {
  if (f->busy || f->fd < 0 || f->n == 0) return;
  int flags = fcntl(f->fd, F_GETFL);
  if (flags >= 0) (void)fcntl(f->fd, F_SETFL, flags | O_NONBLOCK);
  size_t done;
  (void)write_all(f->fd, f->buf, f->n, &done); /* the process ends next */
}
