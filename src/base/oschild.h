/* oschild: forking and exec'ing a supervised program so that it cannot
 * outlive tend, and reaping it. Between fork and exec the child (only
 * async-signal-safe calls) resets every signal to its default and unblocks
 * them, moves into its own process group (terminal signals reach tend
 * alone; tend stops its children in tree order), and then:
 *   group 0: PR_SET_PDEATHSIG(SIGKILL): the kernel kills the program when
 *            tend dies, however it dies (SIGKILL included);
 *   group 1: forks a watcher into the group that keeps only the read end of
 *            tend's life pipe (whose only writer is tend) and ignores every
 *            signal; when tend dies the read returns EOF and the watcher
 *            kills the whole group (a death signal reaches one process, not
 *            the children of `sh -c`). tend kills what is left of the group
 *            (the watcher too) when the program exits.
 * It checks that tend is still its parent, marks every other descriptor
 * close-on-exec, and execs. A failed chdir or exec is reported back through
 * a pipe, so the caller learns ENOENT or EACCES as a spawn error. */
#ifndef TEND_OSCHILD_H
#define TEND_OSCHILD_H

#include <stdint.h>

typedef struct tend_oschild {
  const char *path;  /* executable */
  char *const *argv; /* NULL-ended */
  char *const *envp; /* NULL-ended, or NULL for tend's environment */
  const char *cwd;   /* or NULL */
  int fd[3];         /* the child's stdin, stdout, stderr: a
                        descriptor (>= 3), or -1 to keep tend's */
  int group;         /* 1: a watcher kills the group if tend dies */
  int life_fd;       /* read end of tend's life pipe (group) */
} tend_oschild;

/* Forks and execs c. Returns the pid (> 0), or -errno (nothing runs). */
int tend_oschild_spawn(const tend_oschild *c);
/* Reaps pid if it has ended: returns 1 and its exit status (or -1), the
 * signal that ended it (or 0) and whether it dumped core; 0 while it runs;
 * -1 when it is not a child of ours. */
int tend_oschild_reap(int pid, int64_t *status, int *signum, int *core);

/* Signal names ("TERM" or "SIGTERM") <-> numbers; 0 / NULL when unknown. */
int tend_signal_number(const char *name);
const char *tend_signal_name(int signum);

#endif
