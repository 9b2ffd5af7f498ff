/* repl: the interactive prompt on the event loop (see repl.c). It installs
 * the host's front hooks (output around the prompt, Ctrl-C, shutdown,
 * close). */
#ifndef TEND_REPL_H
#define TEND_REPL_H

#include "runtime/tend.h"

/* Spawns /user/repl, shows the prompt, reads stdin from the loop. */
int tend_repl_start(tend_host *h);
/* tend -i: the REPL starts once the main chunk is done. */
void tend_repl_after_main(tend_host *h);

#endif
