/* log: level names (the writer lives in host.c, which owns the clock). */
#include "base/log.h"

#include <string.h>

static const char *const names[] = {"error", "warn", "info", "debug"};

int tend_log_parse(const char *name) {
  for (int i = 0; i < 4; i++)
    if (strcmp(name, names[i]) == 0) return i;
  return -1;
}

const char *tend_log_name(tend_log_level level) {
  return names[level];
}
