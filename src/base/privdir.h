/* privdir: private temporary directories. tend_privdir_make creates one
 * with mkdtemp (mode 0700, under $TMPDIR or /tmp) and this process
 * removes it, with everything in it, when it exits through exit() (the
 * end of main, an error exit, os.exit) or when tend_privdir_remove is
 * called. A process forked from this one (which inherits the atexit
 * handler) removes nothing. At most TEND_PRIVDIR_MAX at once. */
#ifndef TEND_PRIVDIR_H
#define TEND_PRIVDIR_H

#include <stddef.h>

#define TEND_PRIVDIR_MAX 16

/* Creates $TMPDIR/tend-<prefix>-XXXXXX and writes its path to out (n
 * bytes); returns 0, or a negative errno (nothing created). prefix:
 * letters, digits, '-' or '_'. */
int tend_privdir_make(const char *prefix, char *out, size_t n);
/* Removes a directory made by tend_privdir_make and all it holds;
 * returns 0, -ENOENT when path is none of them (nothing removed), or the
 * negative errno of the first removal that failed. */
int tend_privdir_remove(const char *path);
/* Removes every directory made and not removed yet (the atexit hook). */
void tend_privdir_remove_all(void);

#endif
