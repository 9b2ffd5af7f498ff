/* oschild: fork, exec and reap (see oschild.h). */
#define _GNU_SOURCE /* pipe2, close_range */
#include "base/oschild.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

extern char **environ;

static void default_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_DFL;
  for (int s = 1; s < NSIG; s++) sigaction(s, &sa, NULL); /* some fail: ok */
  sigset_t all;
  sigemptyset(&all);
  sigprocmask(SIG_SETMASK, &all, NULL);
}

/* The watcher (one per host): registers the groups tend sends (a pgid;
 * minus a pgid forgets it) and, at EOF (tend is gone, however), kills
 * every group it knows. It keeps no other descriptor of tend's and
 * allocates nothing (it was forked from a threaded process). */
#define WATCH_MAX 65536
static int watched[WATCH_MAX];

static void watcher(int in) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_IGN;
  for (int s = 1; s < NSIG; s++)
    if (s != SIGKILL && s != SIGSTOP) sigaction(s, &sa, NULL);
  setpgid(0, 0); /* no terminal signal reaches it */
  if (in > 0) close_range(0, (unsigned)in - 1, 0);
  close_range((unsigned)in + 1, ~0U, 0);
  int n = 0, g;
  for (;;) {
    ssize_t r = read(in, &g, sizeof g);
    if (r < 0 && errno == EINTR) continue;
    if (r != (ssize_t)sizeof g) break; /* EOF: tend is gone */
    if (g > 0 && n < WATCH_MAX) {
      watched[n++] = g;
    } else if (g < 0) {
      for (int i = 0; i < n; i++)
        if (watched[i] == -g) {
          watched[i] = watched[--n];
          break;
        }
    }
  }
  for (int i = 0; i < n; i++) kill(-watched[i], SIGKILL);
  _exit(0);
}

int tend_oschild_watcher(void) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return -errno;
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(fds[0]);
    close(fds[1]);
    return -e;
  }
  if (pid == 0) watcher(fds[0]);
  close(fds[0]);
  return fds[1];
}

void tend_oschild_watch(int watch_fd, int pgid) {
  if (watch_fd < 0) return;
  while (write(watch_fd, &pgid, sizeof pgid) < 0 && errno == EINTR) {
  }
}

/* In the child: set up, exec; on failure write errno to report. */
static void child(const tend_oschild *c, pid_t parent, int report, int go) {
  default_signals();
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127); /* tend died before we got here */
  if (go >= 0) { /* wait until the watcher knows the group */
    char b;
    ssize_t n;
    while ((n = read(go, &b, 1)) < 0 && errno == EINTR) {
    }
    if (n != 1) _exit(127); /* tend died meanwhile */
  }
  for (int i = 0; i < 3; i++)
    if (c->fd[i] >= 0 && dup2(c->fd[i], i) < 0) goto fail;
  /* nothing else of tend's reaches the program */
  close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
  if (c->cwd && chdir(c->cwd) != 0) goto fail;
  execve(c->path, c->argv, c->envp ? c->envp : environ);
fail:;
  int e = errno;
  while (write(report, &e, sizeof e) < 0 && errno == EINTR) {
  }
  _exit(127);
}

static const struct {
  const char *name;
  int num;
} signals[] = {
    {"HUP", SIGHUP},       {"INT", SIGINT},   {"QUIT", SIGQUIT},
    {"ILL", SIGILL},       {"TRAP", SIGTRAP}, {"ABRT", SIGABRT},
    {"BUS", SIGBUS},       {"FPE", SIGFPE},   {"KILL", SIGKILL},
    {"USR1", SIGUSR1},     {"SEGV", SIGSEGV}, {"USR2", SIGUSR2},
    {"PIPE", SIGPIPE},     {"ALRM", SIGALRM}, {"TERM", SIGTERM},
    {"CHLD", SIGCHLD},     {"CONT", SIGCONT}, {"STOP", SIGSTOP},
    {"TSTP", SIGTSTP},     {"TTIN", SIGTTIN}, {"TTOU", SIGTTOU},
    {"URG", SIGURG},       {"XCPU", SIGXCPU}, {"XFSZ", SIGXFSZ},
    {"VTALRM", SIGVTALRM}, {"PROF", SIGPROF}, {"WINCH", SIGWINCH},
    {"IO", SIGIO},         {"SYS", SIGSYS},
};

int tend_signal_number(const char *name) {
  if (strncmp(name, "SIG", 3) == 0) name += 3;
  for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++)
    if (strcmp(signals[i].name, name) == 0) return signals[i].num;
  return 0;
}

const char *tend_signal_name(int signum) {
  for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++)
    if (signals[i].num == signum) return signals[i].name;
  return NULL;
}

int tend_oschild_spawn(const tend_oschild *c) {
  int rep[2], go[2] = {-1, -1};
  if (pipe2(rep, O_CLOEXEC) != 0) return -errno;
  if (c->watch_fd >= 0 && pipe2(go, O_CLOEXEC) != 0) {
    int e = errno;
    close(rep[0]);
    close(rep[1]);
    return -e;
  }
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(rep[0]);
    close(rep[1]);
    if (go[0] >= 0) {
      close(go[0]);
      close(go[1]);
    }
    return -e;
  }
  if (pid == 0) {
    if (go[1] >= 0) close(go[1]);
    child(c, parent, rep[1], go[0]);
  }
  close(rep[1]);
  if (go[0] >= 0) { /* the group is registered before the program runs */
    setpgid(pid, pid);
    tend_oschild_watch(c->watch_fd, pid);
    close(go[0]);
    while (write(go[1], "g", 1) < 0 && errno == EINTR) {
    }
    close(go[1]);
  }
  int e = 0;
  ssize_t n;
  do {
    n = read(rep[0], &e, sizeof e);
  } while (n < 0 && errno == EINTR);
  close(rep[0]);
  if (n == (ssize_t)sizeof e) { /* exec failed: reap it, report */
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
    return -(e ? e : ENOEXEC);
  }
  return pid;
}

int tend_oschild_reap(int pid, int64_t *status, int *signum, int *core) {
  int st;
  pid_t r = waitpid(pid, &st, WNOHANG);
  if (r == 0) return 0;
  if (r < 0) return -1;
  if (WIFSIGNALED(st)) {
    *status = -1;
    *signum = WTERMSIG(st);
    *core = WCOREDUMP(st) ? 1 : 0;
  } else {
    *status = WEXITSTATUS(st);
    *signum = 0;
    *core = 0;
  }
  return 1;
}
