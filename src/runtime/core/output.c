/* output: log lines on stderr and text on stdout, written around the
 * front's output hook (so the REPL's prompt moves below them). */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>

#include "runtime/core/host.h"

void tend_host_log(tend_host *h, tend_log_level level, const char *path,
                   const char *fmt, ...) {
  if (level > h->log_level) return;
  char raw[1024], msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(raw, sizeof raw, fmt, ap);
  va_end(ap);
  size_t n = 0; /* one line: a newline in a message is written as \n */
  for (const char *c = raw; *c && n + 2 < sizeof msg; c++) {
    if (*c == '\n' || *c == '\r') {
      msg[n++] = '\\';
      msg[n++] = *c == '\n' ? 'n' : 'r';
    } else {
      msg[n++] = *c;
    }
  }
  msg[n] = '\0';
  double t = (double)tend_clock_now(&h->clock) / 1e9;
  if (h->front.output) h->front.output(h, 1);
  /* a node's lines carry its name, a simulated node's as a real one's */
  const char *node = h->node_name && h->node_name[0] ? h->node_name : NULL;
  fprintf(stderr, "[%.3f] %-5s %s%s%s%s%s\n", t, tend_log_name(level),
          path ? path : "", node ? "@" : "", node ? node : "",
          path || node ? ": " : "", msg);
  fflush(stderr);
  if (h->front.output) h->front.output(h, 0);
}

void tend_host_print(tend_host *h, const char *text, size_t len) {
  tend_host_pass(h, 0, text, len, 0);
}

void tend_host_pass(tend_host *h, int err, const char *text, size_t len,
                    int eol) {
  FILE *f = err ? stderr : stdout;
  if (!err && h->stdout_closed) return; /* the tree stops: nobody reads */
  if (h->front.output) h->front.output(h, 1);
  int broken = fwrite(text, 1, len, f) != len ||
               (eol && fputc('\n', f) == EOF) || fflush(f) != 0;
  int e = errno;
  if (h->front.output) h->front.output(h, 0);
  if (err) {
    clearerr(stderr); /* a closed stderr loses the line, as a log line */
    return;
  }
  if (broken && e == EPIPE && !h->stdout_closed) { /* SIGPIPE is ignored */
    h->stdout_closed = 1;
    clearerr(stdout);
    fprintf(stderr, "tend: stdout is closed (EPIPE); stopping every actor\n");
    /* the pump stops the tree when this turn ends (host.c) */
  }
}
