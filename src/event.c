/* event: lifecycle events as JSON lines, Lua callbacks and log lines (see
 * event.h). */
#include "event.h"

#include <errno.h>
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#define TRACE_BUFFER (1 << 20)

/* A growable text buffer for one line. */
typedef struct line {
  char *p;
  size_t n, cap;
  char small[512];
} line;

static void put(line *b, const char *s, size_t n) {
  if (b->n + n + 1 > b->cap) {
    size_t cap = b->cap * 2 + n + 1;
    char *p = b->p == b->small ? malloc(cap) : realloc(b->p, cap);
    if (p == NULL) return; /* the line is cut short */
    if (b->p == b->small) memcpy(p, b->small, b->n);
    b->p = p;
    b->cap = cap;
  }
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = '\0';
}

static void puts_(line *b, const char *s) {
  put(b, s, strlen(s));
}

/* Appends s as a JSON string (runs of plain bytes copied at once). */
static void put_string(line *b, const char *s) {
  put(b, "\"", 1);
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    const unsigned char *run = c;
    while (*c >= 0x20 && *c != '"' && *c != '\\') c++;
    if (c > run) put(b, (const char *)run, (size_t)(c - run));
    if (*c == '\0') break;
    char esc[8];
    if (*c == '"' || *c == '\\') {
      esc[0] = '\\';
      esc[1] = (char)*c;
      put(b, esc, 2);
    } else if (*c == '\n') {
      put(b, "\\n", 2);
    } else if (*c == '\t') {
      put(b, "\\t", 2);
    } else if (*c < 0x20) {
      snprintf(esc, sizeof esc, "\\u%04x", *c);
      put(b, esc, 6);
    } else {
      put(b, (const char *)c, 1);
    }
  }
  put(b, "\"", 1);
}

static void put_key(line *b, const char *k) {
  put(b, ",\"", 2);
  puts_(b, k);
  put(b, "\":", 2);
}

static void put_int(line *b, int64_t x) {
  char num[24];
  int n = 0;
  uint64_t u = x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x;
  do {
    num[sizeof num - 1 - n++] = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  if (x < 0) num[sizeof num - 1 - n++] = '-';
  put(b, num + sizeof num - n, (size_t)n);
}

/* Appends micro units as a fixed "%.6f" number: 1500000 -> 1.500000. */
static void put_micros(line *b, int64_t us) {
  if (us < 0) {
    put(b, "-", 1);
    us = -us;
  }
  put_int(b, us / 1000000);
  char frac[7];
  int64_t f = us % 1000000;
  for (int i = 5; i >= 0; i--) {
    frac[i] = (char)('0' + f % 10);
    f /= 10;
  }
  frac[6] = '.';
  put(b, frac + 6, 1);
  put(b, frac, 6);
}

/* Nanoseconds as seconds with 6 decimals (rounded to the microsecond). */
static void put_seconds(line *b, int64_t ns) {
  put_micros(b, (ns + 500) / 1000);
}

static void put_field(line *b, const char *k, const char *v) {
  if (v == NULL) return;
  put_key(b, k);
  put_string(b, v);
}

/* The event as one JSON object, keys in a fixed order. */
static void to_json(line *b, int64_t t, const char *path, const tend_event *e) {
  puts_(b, "{\"t\":");
  put_seconds(b, t);
  put_field(b, "ev", e->ev);
  put_field(b, "path", path);
  put_field(b, "kind", e->kind);
  put_field(b, "message", e->message);
  put_field(b, "directive", e->directive);
  put_field(b, "clause", e->clause);
  if (e->window[1] >= 0) {
    put_key(b, "window");
    put(b, "[", 1);
    put_int(b, e->window[0]);
    put(b, ",", 1);
    put_int(b, e->window[1]);
    put(b, ",", 1);
    if (e->window[2] < 0)
      puts_(b, "null");
    else
      put_seconds(b, e->window[2]);
    put(b, "]", 1);
  }
  if (e->count >= 0) {
    put_key(b, "count");
    put_int(b, e->count);
  }
  if (e->incarnation >= 0) {
    put_key(b, "incarnation");
    put_int(b, e->incarnation);
  }
  if (e->delay_ns >= 0) {
    put_key(b, "delay");
    put_seconds(b, e->delay_ns);
  }
  if (e->draw >= 0) {
    put_key(b, "draw");
    put_micros(b, (int64_t)(e->draw * 1e6 + 0.5));
  }
  put_field(b, "algorithm", e->algorithm);
  put_field(b, "reason", e->reason);
  put_field(b, "to", e->to);
  put_field(b, "detail", e->detail);
  put(b, "}\n", 2);
}

/* Events worth a log line at info (the others at debug). */
static int loud(const char *ev) {
  static const char *const names[] = {"backoff",    "reset", "give_up",
                                      "stash_drop", "chaos", NULL};
  for (int i = 0; names[i]; i++)
    if (strcmp(ev, names[i]) == 0) return 1;
  return 0;
}

static void log_line(tend_host *h, const char *path, const tend_event *e) {
  char extra[256];
  int n = 0;
  extra[0] = '\0';
#define ADD(...)             \
  if (n < (int)sizeof extra) \
  n += snprintf(extra + n, sizeof extra - (size_t)n, __VA_ARGS__)
  if (e->directive) ADD(" %s", e->directive);
  if (e->count >= 0) ADD(" #%lld", (long long)e->count);
  if (e->delay_ns >= 0) ADD(" in %.3f s", (double)e->delay_ns / 1e9);
  if (e->kind) ADD(" (%s: %s)", e->kind, e->message ? e->message : "");
  if (e->reason) ADD(" %s", e->reason);
  if (e->to) ADD(" -> %s", e->to);
  if (e->detail) ADD(": %s", e->detail);
#undef ADD
  tend_host_log(h, loud(e->ev) ? TEND_LOG_INFO : TEND_LOG_DEBUG, path, "%s%s",
                e->ev, extra);
}

/* Pushes the event as a Lua table (the fields that are set). */
static void push_table(lua_State *L, double t, const char *path,
                       const tend_event *e) {
  lua_createtable(L, 0, 8);
  lua_pushnumber(L, t);
  lua_setfield(L, -2, "t");
#define STR(k, v)           \
  if (v) {                  \
    lua_pushstring(L, v);   \
    lua_setfield(L, -2, k); \
  }
#define NUM(k, v, cond)     \
  if (cond) {               \
    lua_pushnumber(L, v);   \
    lua_setfield(L, -2, k); \
  }
  STR("ev", e->ev);
  STR("path", path);
  STR("kind", e->kind);
  STR("message", e->message);
  STR("directive", e->directive);
  STR("clause", e->clause);
  if (e->window[1] >= 0) {
    lua_createtable(L, 3, 0);
    lua_pushinteger(L, e->window[0]);
    lua_rawseti(L, -2, 1);
    lua_pushinteger(L, e->window[1]);
    lua_rawseti(L, -2, 2);
    if (e->window[2] >= 0)
      lua_pushnumber(L, (double)e->window[2] / 1e9);
    else
      lua_pushnil(L);
    lua_rawseti(L, -2, 3);
    lua_setfield(L, -2, "window");
  }
  NUM("count", (double)e->count, e->count >= 0);
  NUM("incarnation", (double)e->incarnation, e->incarnation >= 0);
  NUM("delay", (double)e->delay_ns / 1e9, e->delay_ns >= 0);
  NUM("draw", e->draw, e->draw >= 0);
  STR("algorithm", e->algorithm);
  STR("reason", e->reason);
  STR("to", e->to);
  STR("detail", e->detail);
#undef STR
#undef NUM
}

void tend_event_emit(lua_State *L, tend_host *h, const tend_event *e) {
  int traced = tend_event_traced(h);
  int logged = h->log_level >= (loud(e->ev) ? TEND_LOG_INFO : TEND_LOG_DEBUG);
  if (!traced && !logged) return;
  int top = lua_gettop(L);
  const char *path = e->path;
  if (e->actor) {
    tend_actor_push_path(L, h, e->actor);
    path = lua_tostring(L, -1);
  }
  if (path == NULL) path = "/";
  if (logged) log_line(h, path, e);
  if (traced) {
    int64_t now = tend_clock_now(&h->clock);
    double t = (double)now / 1e9;
    if (h->trace_file || h->trace_stderr) {
      line b;
      b.p = b.small;
      b.n = 0;
      b.cap = sizeof b.small;
      to_json(&b, now, path, e);
      if (h->trace_file) fwrite(b.p, 1, b.n, h->trace_file);
      if (h->trace_stderr) fwrite(b.p, 1, b.n, stderr);
      if (b.p != b.small) free(b.p);
    }
    if (h->trace_fn_ref > 0) { /* queued: the function runs between turns */
      lua_rawgeti(L, LUA_REGISTRYINDEX, h->trace_queue_ref);
      push_table(L, t, path, e);
      lua_rawseti(L, -2, ++h->trace_queued);
    }
  }
  lua_settop(L, top);
}

void tend_event_flush(lua_State *L, tend_host *h) {
  if (h->trace_queued == 0) return;
  int top = lua_gettop(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->trace_queue_ref);
  int q = lua_gettop(L);
  lua_newtable(L); /* a fresh queue for events the function causes */
  lua_rawseti(L, LUA_REGISTRYINDEX, h->trace_queue_ref);
  uint32_t n = h->trace_queued;
  h->trace_queued = 0;
  for (uint32_t i = 1; i <= n && h->trace_fn_ref > 0; i++) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, h->trace_fn_ref); /* the listeners */
    lua_Integer k = luaL_len(L, -1);
    for (lua_Integer j = 1; j <= k; j++) {
      lua_rawgeti(L, -1, j);
      lua_rawgeti(L, q, i);
      if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
        tend_host_log(h, TEND_LOG_WARN, NULL, "trace function failed: %s",
                      lua_tostring(L, -1));
        lua_pop(L, 1);
      }
    }
    lua_pop(L, 1);
  }
  lua_settop(L, top);
}

int tend_trace_open(tend_host *h, const char *path) {
  FILE *f = fopen(path, "w");
  if (f == NULL) return -1;
  setvbuf(f, NULL, _IOFBF, TRACE_BUFFER);
  h->trace_file = f;
  return 0;
}

void tend_trace_close(tend_host *h) {
  if (h->trace_file) fclose(h->trace_file);
  h->trace_file = NULL;
}
