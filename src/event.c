/* event: lifecycle events (see event.h). */
#include "event.h"

#include <stdio.h>

void tend_event_emit(lua_State *L, tend_host *h, const tend_event *e) {
  if (h->log_level < TEND_LOG_INFO) return;
  char extra[256];
  int n = 0;
  extra[0] = '\0';
  if (e->count >= 0)
    n += snprintf(extra + n, sizeof extra - (size_t)n, " #%lld",
                  (long long)e->count);
  if (e->delay_ns >= 0 && n < (int)sizeof extra)
    n += snprintf(extra + n, sizeof extra - (size_t)n, " in %.3f s",
                  (double)e->delay_ns / 1e9);
  if (e->kind && n < (int)sizeof extra)
    n += snprintf(extra + n, sizeof extra - (size_t)n, " (%s: %s)", e->kind,
                  e->message ? e->message : "");
  tend_actor_push_path(L, h, e->actor);
  tend_host_log(h, TEND_LOG_INFO, lua_tostring(L, -1), "%s%s%s%s", e->ev, extra,
                e->detail ? ": " : "", e->detail ? e->detail : "");
  lua_pop(L, 1);
}
