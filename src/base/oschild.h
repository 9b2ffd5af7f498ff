/* oschild: forking and exec'ing a supervised program so that it cannot
 * outlive tend, and reaping it. Between fork and exec the child (only
 * async-signal-safe calls) resets every signal to its default and unblocks
 * them, moves into its own process group (terminal signals reach tend
 * alone; tend stops its children in tree order), sets
 * PR_SET_PDEATHSIG(SIGKILL) (the kernel kills it when tend dies, however
 * it dies, SIGKILL included) and checks that tend is still its parent.
 * A death signal reaches one process, not the children of `sh -c`, so for
 * a program that owns its group one watcher process per host (forked once,
 * it holds only the read end of a pipe whose one writer is tend, and
 * ignores every signal) is told the group before the program may exec;
 * when tend dies the read returns EOF and the watcher kills every group it
 * knows. tend kills what is left of a group when its program exits, and
 * tells the watcher to forget it. The child marks every other descriptor
 * close-on-exec and execs; a failed chdir or exec is reported back through
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
  int watch_fd;      /* the watcher's pipe (tend_oschild_watcher) when the
                        program owns a group the watcher must know, else -1 */
} tend_oschild;

/* Forks the watcher; returns the pipe to it (close-on-exec; closing it
 * makes the watcher kill what it knows and exit), or -errno. */
int tend_oschild_watcher(void);
/* Tells the watcher of pgid (> 0: watch it, < 0: forget -pgid). */
void tend_oschild_watch(int watch_fd, int pgid);
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
