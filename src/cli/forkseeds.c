/* forkseeds: a batch of scenario seeds, one forked child each (see the
 * header). */
#include "cli/forkseeds.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

int tend_fork_seeds_parse(const char *spec, long long *from, long long *to,
                          unsigned *limit) {
  char *end;
  errno = 0;
  *from = strtoll(spec, &end, 10);
  if (end == spec || strncmp(end, "..", 2) != 0) return -1;
  const char *b = end + 2;
  *to = strtoll(b, &end, 10);
  if (end == b || errno != 0 || *to < *from) return -1;
  *limit = 0;
  if (*end == '/') {
    const char *l = end + 1;
    unsigned long v = strtoul(l, &end, 10);
    if (end == l || v > 86400) return -1;
    *limit = (unsigned)v;
  }
  return *end == '\0' ? 0 : -1;
}

/* The child's output, read to its end; NULL if out of memory. */
static char *read_all(int fd, size_t *len) {
  size_t cap = 65536, n = 0;
  char *buf = malloc(cap);
  while (buf != NULL) {
    if (n == cap) {
      char *bigger = realloc(buf, cap * 2);
      if (bigger == NULL) break;
      buf = bigger;
      cap *= 2;
    }
    ssize_t r = read(fd, buf + n, cap - n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      *len = n;
      return buf;
    }
    n += (size_t)r;
  }
  free(buf);
  return NULL;
}

int tend_fork_seeds(long long from, long long to, unsigned limit,
                    uint64_t *seed) {
  for (long long s = from; s <= to; s++) {
    int fd[2];
    if (pipe(fd) != 0) {
      fprintf(stderr, "tend: --fork-seeds: pipe: %s\n", strerror(errno));
      return -1;
    }
    fflush(stdout); /* the child must not write the batch's records again */
    pid_t pid = fork();
    if (pid < 0) {
      fprintf(stderr, "tend: --fork-seeds: fork: %s\n", strerror(errno));
      close(fd[0]);
      close(fd[1]);
      return -1;
    }
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL); /* no child outlives its batch */
      close(fd[0]);
      dup2(fd[1], 1);
      dup2(fd[1], 2);
      close(fd[1]);
      if (limit > 0) alarm(limit);
      *seed = (uint64_t)s;
      return 1;
    }
    close(fd[1]);
    size_t len = 0;
    char *out = read_all(fd[0], &len);
    if (out == NULL) { /* out of memory: drained, the child must not block */
      char drain[4096];
      ssize_t r;
      while ((r = read(fd[0], drain, sizeof drain)) > 0 ||
             (r < 0 && errno == EINTR)) {
      }
    }
    close(fd[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (WIFSIGNALED(st))
      printf("@@seed %lld signal %d %zu\n", s, WTERMSIG(st), out ? len : 0);
    else
      printf("@@seed %lld status %d %zu\n", s, WEXITSTATUS(st), out ? len : 0);
    if (out) fwrite(out, 1, len, stdout);
    free(out);
  }
  fflush(stdout);
  return 0;
}
