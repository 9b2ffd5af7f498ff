/* repl: the interactive prompt on the event loop (see repl.c). */
#ifndef TEND_REPL_H
#define TEND_REPL_H

#include "host.h"

/* Spawns /user/repl, shows the prompt, reads stdin from the loop. */
int tend_repl_start(tend_host *h);
/* /user/repl finished a chunk: the prompt comes back. */
void tend_repl_done(tend_host *h);
/* SIGINT: stop the chunk that runs, or clear the line being edited. */
void tend_repl_interrupt(tend_host *h);
/* Around output while the prompt shows (begin 1, then 0). */
void tend_repl_output(tend_host *h, int begin);
/* Is the prompt taking input? */
int tend_repl_active(const tend_host *h);
/* No more input (shutdown): the prompt goes, stdin is no longer watched. */
void tend_repl_close(tend_host *h);
/* Its uv handle (to close), or NULL; then free. */
uv_handle_t *tend_repl_handle(tend_host *h);
void tend_repl_free(tend_host *h);

#endif
