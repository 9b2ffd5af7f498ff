/* log: leveled log lines on stderr, stamped with the host clock. */
#ifndef TEND_LOG_H
#define TEND_LOG_H

typedef enum tend_log_level {
  TEND_LOG_ERROR,
  TEND_LOG_WARN,
  TEND_LOG_INFO,
  TEND_LOG_DEBUG
} tend_log_level;

/* Parses "error|warn|info|debug"; returns the level or -1. */
int tend_log_parse(const char *name);
const char *tend_log_name(tend_log_level level);

#endif
