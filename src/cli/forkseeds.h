/* forkseeds: `tend scenario FILE --fork-seeds A..B[/LIMIT]`, the batch
 * runner of `tend explore`. One process loads tend's libraries once and
 * forks a child per seed before any host exists, so a seed costs a fork
 * and a host, not an exec and the dynamic linking of libcurl's tree (about
 * 25 ms of CPU). Each child runs the scenario as `--seed N` would, its
 * stdout and stderr into one pipe, killed by SIGALRM after LIMIT seconds
 * of wall time (0: no limit) and by SIGKILL if the batch dies; the parent
 * writes, per seed in order, a header line
 *   @@seed N status CODE BYTES    or    @@seed N signal SIG BYTES
 * then the child's BYTES bytes of output. */
#ifndef TEND_FORKSEEDS_H
#define TEND_FORKSEEDS_H

#include <stdint.h>

/* Parses A..B[/LIMIT] into *from, *to, *limit; 0, or -1 if malformed. */
int tend_fork_seeds_parse(const char *spec, long long *from, long long *to,
                          unsigned *limit);

/* Runs the seeds from..to: returns 1 in each child, with its seed in
 * *seed (the child goes on as a plain run); in the batch process 0 after
 * the last seed, or -1 if a fork or a pipe failed (said on stderr). */
int tend_fork_seeds(long long from, long long to, unsigned limit,
                    uint64_t *seed);

#endif
