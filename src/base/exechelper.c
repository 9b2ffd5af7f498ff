/* exechelper: between fork and exec (see exechelper.h). */
#include "base/exechelper.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

/* The watcher: waits for EOF on tend's life pipe, then kills the group. */
static void watch_tend(void) {
  for (int s = 1; s < NSIG; s++)
    if (s != SIGKILL && s != SIGSTOP) signal(s, SIG_IGN);
  int null = open("/dev/null", O_RDWR);
  if (null >= 0) { /* hold no pipe of the program: its EOF is not ours */
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
    if (null > 2) close(null);
  }
  char c;
  ssize_t n;
  do {
    n = read(TEND_EXEC_HELPER_FD, &c, 1);
  } while (n < 0 && errno == EINTR);
  kill(0, SIGKILL); /* tend is gone (or the pipe broke): the group goes */
  _exit(0);
}

int tend_exec_helper(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "tend %s: expected PPID GROUP PATH ARGV0 [ARGS...]\n",
            TEND_EXEC_HELPER_FLAG);
    return 2;
  }
  pid_t ppid = (pid_t)strtol(argv[2], NULL, 10);
  int group = strcmp(argv[3], "1") == 0;
  const char *path = argv[4];
  setpgid(0, 0);
  if (group) {
    pid_t w = fork();
    if (w == 0) watch_tend();
    close(TEND_EXEC_HELPER_FD);
  } else {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
  }
  if (getppid() != ppid) _exit(127); /* tend died before we got here */
  execv(path, argv + 5);
  fprintf(stderr, "tend: cannot run %s: %s\n", path, strerror(errno));
  _exit(127);
}
