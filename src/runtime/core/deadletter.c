/* deadletter: log lines of dead letters and unhandled messages (see
 * deadletter.h). */
#include "runtime/core/deadletter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/core/host.h"
#include "runtime/core/promise.h"
#include "runtime/core/ref.h"

#define MAX_KEYS 16 /* string keys shown (sorted) before "..." */

/* A bounded text: writing stops at TEND_DL_SHOWN characters (full). */
typedef struct text {
  char *p;     /* the caller's buffer */
  size_t n;    /* characters in it */
  size_t size; /* its size (room for "..." and the NUL included) */
  int full;    /* 1: something did not fit */
} text;

/* Appends s whole, or nothing (an escape is never cut) and t is full. */
static void put(text *t, const char *s, size_t len) {
  size_t max = TEND_DL_SHOWN < t->size - 4 ? TEND_DL_SHOWN : t->size - 4;
  if (t->full || len > max - t->n) {
    t->full = 1;
    return;
  }
  memcpy(t->p + t->n, s, len);
  t->n += len;
}

/* Drops a UTF-8 sequence the limit cut in two at the end of t. */
static void trim_utf8(text *t) {
  size_t k = t->n;
  while (k > 0 && ((unsigned char)t->p[k - 1] & 0xC0) == 0x80) k--;
  if (k == 0) return;
  unsigned char lead = (unsigned char)t->p[k - 1];
  size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
  if (t->n - (k - 1) < need) t->n = k - 1;
}

static void puts_(text *t, const char *s) {
  put(t, s, strlen(s));
}

static void put_string(text *t, const char *s, size_t len) {
  puts_(t, "\"");
  for (size_t i = 0; i < len && !t->full; i++) {
    unsigned char c = (unsigned char)s[i];
    char esc[8];
    if (c == '"' || c == '\\') {
      esc[0] = '\\';
      esc[1] = (char)c;
      put(t, esc, 2);
    } else if (c == '\n') {
      puts_(t, "\\n");
    } else if (c < 0x20 || c == 0x7f) {
      snprintf(esc, sizeof esc, "\\%d", c);
      puts_(t, esc);
    } else {
      put(t, (const char *)&c, 1);
    }
  }
  puts_(t, "\"");
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void put_value(lua_State *L, tend_host *h, int idx, text *t, int depth);

/* A table, one level deep: its list part, then its string keys sorted
 * (when there are at most MAX_KEYS; more, or other keys, show as "...",
 * so what is shown never depends on the order of a hash). Raw access
 * only. */
static void put_table(lua_State *L, tend_host *h, int idx, text *t) {
  puts_(t, "{");
  lua_Integer n = 0;
  while (!t->full) {
    int nil = lua_rawgeti(L, idx, n + 1) == LUA_TNIL;
    if (!nil) {
      if (n++ > 0) puts_(t, ", ");
      put_value(L, h, lua_gettop(L), t, 1);
    }
    lua_pop(L, 1);
    if (nil) break;
  }
  if (t->full) return;
  const char *keys[MAX_KEYS] = {NULL};
  size_t nkeys = 0;
  int more = 0;
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) { /* nothing is written meanwhile */
    lua_pop(L, 1);                /* the value */
    if (lua_isinteger(L, -1) && lua_tointeger(L, -1) >= 1 &&
        lua_tointeger(L, -1) <= n)
      continue;
    if (lua_type(L, -1) == LUA_TSTRING && nkeys < MAX_KEYS)
      keys[nkeys++] = lua_tostring(L, -1); /* the table keeps it */
    else if (lua_type(L, -1) == LUA_TSTRING)
      more = 2; /* too many to show: none is shown */
    else
      more = more ? more : 1;
  }
  if (more == 2) nkeys = 0;
  if (nkeys > 1) qsort(keys, nkeys, sizeof keys[0], by_name);
  for (size_t i = 0; i < nkeys && !t->full; i++) {
    if (n > 0 || i > 0) puts_(t, ", ");
    puts_(t, keys[i]);
    puts_(t, "=");
    lua_pushstring(L, keys[i]);
    lua_rawget(L, idx);
    put_value(L, h, lua_gettop(L), t, 1);
    lua_pop(L, 1);
  }
  if (more) puts_(t, n > 0 || nkeys > 0 ? ", ..." : "...");
  puts_(t, "}");
}

static void put_value(lua_State *L, tend_host *h, int idx, text *t, int depth) {
  if (!lua_checkstack(L, 4)) {
    puts_(t, "?");
    return;
  }
  switch (lua_type(L, idx)) {
    case LUA_TNIL: puts_(t, "nil"); return;
    case LUA_TBOOLEAN:
      puts_(t, lua_toboolean(L, idx) ? "true" : "false");
      return;
    case LUA_TNUMBER:
      lua_pushvalue(L, idx);
      puts_(t, lua_tostring(L, -1)); /* a copy: no metamethod */
      lua_pop(L, 1);
      return;
    case LUA_TSTRING: {
      size_t len;
      const char *s = lua_tolstring(L, idx, &len);
      put_string(t, s, len);
      return;
    }
    case LUA_TTABLE:
      if (depth > 0)
        puts_(t, "{...}");
      else
        put_table(L, h, idx, t);
      return;
    case LUA_TUSERDATA:
      if (tend_ref_test(L, idx)) {
        tend_ref_push_path(L, h, idx);
        puts_(t, "Ref(");
        puts_(t, lua_tostring(L, -1));
        puts_(t, ")");
        lua_pop(L, 1);
        return;
      }
      break;
    default: break;
  }
  puts_(t, lua_typename(L, lua_type(L, idx)));
}

void tend_deadletter_describe(lua_State *L, tend_host *h, int idx, char *buf,
                              size_t size) {
  text t = {buf, 0, size, 0};
  if (size < 8) {
    if (size) buf[0] = '\0';
    return;
  }
  int top = lua_gettop(L);
  put_value(L, h, lua_absindex(L, idx), &t, 0);
  lua_settop(L, top);
  if (t.full) {
    trim_utf8(&t);
    memcpy(t.p + t.n, "...", 3);
    t.n += 3;
  }
  t.p[t.n] = '\0';
}

/* Pushes who sent a message: a path, "<path> (ask)" for an ask, "nobody"
 * or "a dead actor". */
static void push_sender(lua_State *L, tend_host *h, uint32_t id, uint32_t gen) {
  void *e = id ? tend_slots_get(&h->ids, id, gen) : NULL;
  if (id == 0) {
    lua_pushliteral(L, "nobody");
  } else if (e == NULL) {
    lua_pushliteral(L, "a dead actor");
  } else if (((tend_actor *)e)->kind == TEND_ENTITY_PROMISE) {
    tend_actor_push_path(L, h, ((tend_promise *)e)->asker);
    lua_pushfstring(L, "%s (ask)", lua_tostring(L, -1));
    lua_remove(L, -2);
  } else {
    tend_actor_push_path(L, h, e);
  }
}

static double secs(int64_t ns) {
  return (double)ns / 1e9;
}

void tend_deadletter_flush(tend_host *h) {
  tend_dl_limit *d = &h->dl_limit;
  if (d->open && d->suppressed > 0) {
    int64_t end = tend_clock_now(&h->clock);
    if (end > d->since + TEND_DL_INTERVAL_NS)
      end = d->since + TEND_DL_INTERVAL_NS;
    tend_host_log(h, TEND_LOG_INFO, "/deadLetters",
                  "%llu dead letters suppressed from %.3f s to %.3f s",
                  (unsigned long long)d->suppressed, secs(d->since), secs(end));
  }
  d->open = 0;
  d->suppressed = 0;
}

int tend_deadletter_on(const tend_host *h) {
  return h->log_level >= TEND_LOG_INFO && !h->shutdown;
}

void tend_deadletter_log(lua_State *L, tend_host *h, const tend_letter *l) {
  if (!tend_deadletter_on(h)) return;
  tend_dl_limit *d = &h->dl_limit;
  int64_t now = tend_clock_now(&h->clock);
  if (d->open && now - d->since >= TEND_DL_INTERVAL_NS)
    tend_deadletter_flush(h);
  if (!d->open) {
    d->open = 1;
    d->since = now;
    d->logged = 0;
    d->suppressed = 0;
  }
  if (d->logged >= TEND_DL_FIRST) {
    d->suppressed++;
    return;
  }
  d->logged++;
  int top = lua_gettop(L);
  char msg[TEND_DL_SHOWN + 8];
  if (l->msg)
    tend_deadletter_describe(L, h, l->msg, msg, sizeof msg);
  else
    snprintf(msg, sizeof msg, "(a message)");
  push_sender(L, h, l->from_id, l->from_gen);
  if (l->to)
    tend_actor_push_path(L, h, l->to);
  else if (l->to_ref)
    tend_ref_push_path(L, h, l->to_ref);
  else
    lua_pushstring(L, l->to_name ? l->to_name : "nobody");
  char more[96] = "";
  if (d->logged == TEND_DL_FIRST)
    snprintf(more, sizeof more, "; no more are logged until %.3f s",
             secs(d->since + TEND_DL_INTERVAL_NS));
  if (l->why)
    tend_host_log(h, TEND_LOG_INFO, "/deadLetters",
                  "dead letter: %s from %s to %s (%s) [%u]%s", msg,
                  lua_tostring(L, -2), lua_tostring(L, -1), l->why,
                  (unsigned)d->logged, more);
  else
    tend_host_log(h, TEND_LOG_INFO, "/deadLetters",
                  "unhandled: %s from %s to %s [%u]%s", msg,
                  lua_tostring(L, -2), lua_tostring(L, -1), (unsigned)d->logged,
                  more);
  lua_settop(L, top);
}
