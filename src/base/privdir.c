/* privdir: private temporary directories removed at exit (privdir.h). */
#define _GNU_SOURCE /* nftw's FTW_DEPTH, FTW_PHYS */
#include "base/privdir.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The directories to remove: a slot is free when its path is "". Only
 * the process that made them (owner) removes them. */
static char dirs[TEND_PRIVDIR_MAX][4096];
static pid_t owner;
static int hooked;      /* atexit(tend_privdir_remove_all) done */
static int first_error; /* the first failed removal of one walk (-errno) */

static int remove_one(const char *path, const struct stat *st, int flag,
                      struct FTW *ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  if (remove(path) != 0 && first_error == 0) first_error = -errno;
  return 0; /* go on: remove what can be removed */
}

/* Removes path and all it holds (symlinks as links, never followed). */
static int remove_tree(const char *path) {
  first_error = 0;
  if (nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS) != 0 && first_error == 0)
    first_error = errno ? -errno : -EIO;
  return first_error;
}

int tend_privdir_make(const char *prefix, char *out, size_t n) {
  for (const char *c = prefix; *c; c++)
    if (!(*c == '-' || *c == '_' || (*c >= '0' && *c <= '9') ||
          (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z')))
      return -EINVAL;
  int slot = -1;
  for (int i = 0; i < TEND_PRIVDIR_MAX && slot < 0; i++)
    if (dirs[i][0] == '\0') slot = i;
  if (slot < 0) return -EMFILE;
  const char *tmp = getenv("TMPDIR");
  if (tmp == NULL || tmp[0] == '\0') tmp = "/tmp";
  char path[sizeof dirs[0]];
  int len = snprintf(path, sizeof path, "%s/tend-%s-XXXXXX", tmp, prefix);
  if (len < 0 || (size_t)len >= sizeof path || (size_t)len >= n)
    return -ENAMETOOLONG;
  if (mkdtemp(path) == NULL) return -errno;
  if (!hooked && atexit(tend_privdir_remove_all) != 0) {
    rmdir(path);
    return -ENOMEM;
  }
  hooked = 1;
  owner = getpid();
  memcpy(dirs[slot], path, (size_t)len + 1);
  memcpy(out, path, (size_t)len + 1);
  return 0;
}

int tend_privdir_remove(const char *path) {
  for (int i = 0; i < TEND_PRIVDIR_MAX; i++) {
    if (dirs[i][0] == '\0' || strcmp(dirs[i], path) != 0) continue;
    int r = owner == getpid() ? remove_tree(dirs[i]) : 0;
    dirs[i][0] = '\0';
    return r;
  }
  return -ENOENT;
}

void tend_privdir_remove_all(void) {
  for (int i = 0; i < TEND_PRIVDIR_MAX; i++)
    if (dirs[i][0] != '\0') tend_privdir_remove(dirs[i]);
}
