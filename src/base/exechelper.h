/* exechelper: the few lines that run between tend's fork and the exec of
 * a supervised program, so that no program outlives tend. libuv's
 * uv_spawn offers no hook in the child, so tend spawns its own binary as
 *   tend --exec-helper PPID GROUP PATH ARGV0 ARGS...
 * and main() calls tend_exec_helper first thing. The helper puts the
 * program in its own process group (terminal signals reach tend alone;
 * tend stops its children in order), then:
 *   GROUP 0: PR_SET_PDEATHSIG(SIGKILL): the kernel kills the program when
 *            tend dies, however it dies (SIGKILL included);
 *   GROUP 1: forks a watcher into the group that holds the read end of a
 *            pipe whose only writer is tend (fd 3) and ignores every
 *            signal; when tend dies the read returns EOF and the watcher
 *            kills the whole group (a death signal reaches only one
 *            process, not the children of `sh -c`).
 * Either way it checks that tend (PPID) is still its parent, then execs
 * PATH. An exec that fails exits 127 with a line on stderr. */
#ifndef TEND_EXECHELPER_H
#define TEND_EXECHELPER_H

#define TEND_EXEC_HELPER_FLAG "--exec-helper"
#define TEND_EXEC_HELPER_FD 3 /* the watcher's end of tend's life pipe */

/* Runs the helper (argv as main got it); returns only on bad arguments. */
int tend_exec_helper(int argc, char **argv);

#endif
