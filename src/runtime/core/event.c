/* event: lifecycle events as JSON lines, Lua callbacks and log lines (see
 * event.h). */
#include "runtime/core/event.h"

#include <errno.h>
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonl.h"

static const struct {
  const char *name;
  int loud; /* 1: logged at info; 0: at debug; -1: not here */
} kinds[TEND_EV_KINDS] = {
    [TEND_EV_TRACE] = {"trace", 0},
    [TEND_EV_SPAWN] = {"spawn", 0},
    [TEND_EV_START] = {"start", 0},
    [TEND_EV_FAIL] = {"fail", 0},
    [TEND_EV_DIRECTIVE] = {"directive", 0},
    [TEND_EV_RESTART] = {"restart", 0},
    [TEND_EV_BACKOFF] = {"backoff", 1},
    [TEND_EV_RESET] = {"reset", 1},
    [TEND_EV_GIVE_UP] = {"give_up", 1},
    [TEND_EV_STOP] = {"stop", 0},
    [TEND_EV_TERMINATED] = {"terminated", 0},
    [TEND_EV_ESCALATE] = {"escalate", 0},
    [TEND_EV_DEAD_LETTER] = {"dead_letter", -1}, /* deadletter.c logs it */
    [TEND_EV_STASH_DROP] = {"stash_drop", 1},
    [TEND_EV_CHAOS] = {"chaos", 1},
    [TEND_EV_SPAWN_OS] = {"spawn_os", 1},
    [TEND_EV_READY] = {"ready", 1},
    [TEND_EV_EXIT] = {"exit", 1},
    [TEND_EV_NODE] = {"node", 1},
    [TEND_EV_HTTP] = {"http", 1},
    [TEND_EV_STREAM_START] = {"stream_start", 0},
    [TEND_EV_STREAM_COMPLETE] = {"stream_complete", 0},
    [TEND_EV_STREAM_FAIL] = {"stream_fail", 1},
    [TEND_EV_STREAM_CANCEL] = {"stream_cancel", 0},
    [TEND_EV_STREAM_RESTART] = {"stream_restart", 1},
    [TEND_EV_STREAM_BACKOFF] = {"stream_backoff", 1},
    [TEND_EV_STREAM_DROP] = {"stream_drop", 1},
};

const char *tend_event_name(tend_event_kind ev) {
  return kinds[ev].name;
}

/* The trace file failed (full disk, /dev/full): said once; the file ends
 * at its last whole line, tracing to it stops, and the host exits 1. */
static void trace_lost(tend_host *h) {
  if (h->trace_lost) return;
  h->trace_lost = 1;
  fprintf(stderr,
          "tend: --trace %s: %s; the trace stops at its last whole line\n",
          h->trace_path ? h->trace_path : "", strerror(h->trace.err));
}

static tend_log_level level_of(tend_event_kind ev) {
  return kinds[ev].loud ? TEND_LOG_INFO : TEND_LOG_DEBUG;
}

/* The event as one JSON object, keys in a fixed order. */
static void to_json(tend_jsonl *b, int64_t t, const char *node, int sched,
                    const char *path, const tend_event *e) {
  tend_jsonl_begin(b);
  tend_jsonl_seconds(b, "t", t);
  tend_jsonl_string(b, "ev", tend_event_name(e->ev));
  tend_jsonl_string(b, "node", node);
  if (sched >= 0) tend_jsonl_int(b, "sched", sched);
  tend_jsonl_string(b, "path", path);
  tend_jsonl_string(b, "kind", e->kind);
  if (e->message)
    tend_jsonl_put_string(b, "message", e->message,
                          e->message_len ? e->message_len : strlen(e->message));
  tend_jsonl_string(b, "directive", e->directive);
  tend_jsonl_string(b, "clause", e->clause);
  if (e->window[1] >= 0)
    tend_jsonl_window(b, "window", e->window[0], e->window[1], e->window[2]);
  if (e->count >= 0) tend_jsonl_int(b, "count", e->count);
  if (e->incarnation >= 0) tend_jsonl_int(b, "incarnation", e->incarnation);
  if (e->delay_ns >= 0) tend_jsonl_seconds(b, "delay", e->delay_ns);
  if (e->draw >= 0) tend_jsonl_fraction(b, "draw", e->draw);
  tend_jsonl_string(b, "algorithm", e->algorithm);
  tend_jsonl_string(b, "reason", e->reason);
  tend_jsonl_string(b, "to", e->to);
  tend_jsonl_string(b, "detail", e->detail);
  if (e->pid >= 0) tend_jsonl_int(b, "pid", e->pid);
  tend_jsonl_string(b, "argv0", e->argv0);
  if (e->status >= 0) tend_jsonl_int(b, "status", e->status);
  tend_jsonl_string(b, "signal", e->signal);
  tend_jsonl_string(b, "method", e->method);
  tend_jsonl_string(b, "target", e->target);
  if (e->duration_ns >= 0) tend_jsonl_seconds(b, "duration", e->duration_ns);
  for (int i = 0; i < e->nfields; i++) {
    const tend_event_field *f = &e->fields[i];
    if (f->num_text)
      tend_jsonl_raw(b, f->key, f->num_text);
    else
      tend_jsonl_string(b, f->key, f->text);
  }
  tend_jsonl_end(b);
}

/* Writes s[0..len) at dst (room bytes, NUL-ended), each NUL byte as \0
 * (a log line is text: %s would end at it); returns the bytes written. */
static int put_escaped(char *dst, size_t room, const char *s, size_t len) {
  size_t n = 0;
  for (size_t i = 0; i < len && n + 3 < room; i++) {
    if (s[i] == '\0') {
      dst[n++] = '\\';
      dst[n++] = '0';
    } else {
      dst[n++] = s[i];
    }
  }
  if (room > 0) dst[n] = '\0';
  return (int)n;
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
  if (e->kind) {
    ADD(" (%s: ", e->kind);
    if (e->message && n < (int)sizeof extra)
      n += put_escaped(extra + n, sizeof extra - (size_t)n, e->message,
                       e->message_len ? e->message_len : strlen(e->message));
    ADD(")");
  }
  if (e->method) ADD(" %s %s", e->method, e->target ? e->target : "");
  if (e->reason) ADD(" %s", e->reason);
  if (e->to) ADD(" -> %s", e->to);
  if (e->detail) ADD(": %s", e->detail);
  if (e->pid >= 0) ADD(" pid %lld", (long long)e->pid);
  if (e->argv0) ADD(" %s", e->argv0);
  if (e->status >= 0) ADD(" status %lld", (long long)e->status);
  if (e->signal) ADD(" signal %s", e->signal);
  if (e->duration_ns >= 0) ADD(" in %.3f ms", (double)e->duration_ns / 1e6);
#undef ADD
  tend_host_log(h, level_of(e->ev), path, "%s%s", tend_event_name(e->ev),
                extra);
}

/* Pushes the event as a Lua table (the fields that are set). */
static void push_table(lua_State *L, double t, const char *node, int sched,
                       const char *path, const tend_event *e) {
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
  STR("ev", tend_event_name(e->ev));
  STR("node", node);
  if (sched >= 0) {
    lua_pushinteger(L, sched);
    lua_setfield(L, -2, "sched");
  }
  STR("path", path);
  STR("kind", e->kind);
  if (e->message) {
    lua_pushlstring(L, e->message,
                    e->message_len ? e->message_len : strlen(e->message));
    lua_setfield(L, -2, "message");
  }
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
  if (e->pid >= 0) {
    lua_pushinteger(L, e->pid);
    lua_setfield(L, -2, "pid");
  }
  STR("argv0", e->argv0);
  if (e->status >= 0) {
    lua_pushinteger(L, e->status);
    lua_setfield(L, -2, "status");
  }
  STR("signal", e->signal);
  STR("method", e->method);
  STR("target", e->target);
  NUM("duration", (double)e->duration_ns / 1e9, e->duration_ns >= 0);
  for (int i = 0; i < e->nfields; i++) {
    const tend_event_field *f = &e->fields[i];
    if (f->num_text && (*f->num_text == 't' || *f->num_text == 'f'))
      lua_pushboolean(L, *f->num_text == 't');
    else if (f->num_text)
      lua_pushnumber(L, strtod(f->num_text, NULL));
    else
      lua_pushstring(L, f->text);
    lua_setfield(L, -2, f->key);
  }
#undef STR
#undef NUM
}

/* Queues the event for the tend.trace functions of host q (L: a thread
 * of q's state). */
static void queue(lua_State *L, tend_host *q, double t, const char *node,
                  int sched, const char *path, const tend_event *e) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, q->trace_queue_ref);
  push_table(L, t, node, sched, path, e);
  lua_rawseti(L, -2, ++q->trace_queued);
  lua_pop(L, 1);
}

void tend_event_emit(lua_State *L, tend_host *h, const tend_event *e) {
  int traced = tend_event_traced(h);
  int logged = kinds[e->ev].loud >= 0 && h->log_level >= level_of(e->ev);
  if (!traced && !logged) return;
  if (e->actor && (e->actor->flags & TEND_AF_INTERNAL) &&
      !tend_event_internal_shown(h))
    return; /* one of tend's own tasks: out of the user's view */
  int top = lua_gettop(L);
  const char *path = e->path;
  if (e->actor) {
    tend_actor_push_path(L, h, e->actor);
    path = lua_tostring(L, -1);
  }
  if (path == NULL) path = "/";
  if (logged) log_line(h, path, e);
  if (traced) { /* a simulated node's go to its world, with its name */
    tend_host *o = h->world ? h->world : h;
    const char *node = h->world ? h->node_name : NULL;
    /* with several schedulers, each event says which one it is on */
    int sched = h->scheds ? (int)h->sched_index : -1;
    int64_t now = tend_clock_now(&h->clock);
    double t = (double)now / 1e9;
    int to_file = tend_linefile_is_open(&o->trace);
    if (to_file || o->trace_stderr) {
      tend_jsonl b;
      to_json(&b, now, node, sched, path, e);
      if (to_file && tend_linefile_put(&o->trace, b.p, b.n) != 0) trace_lost(o);
      if (o->trace_stderr) fwrite(b.p, 1, b.n, stderr);
      tend_jsonl_free(&b);
    }
    /* queued: the functions run between turns (a node's own too) */
    if (o->trace_fn_ref > 0)
      queue(o == h ? L : o->L, o, t, node, sched, path, e);
    if (o != h && h->trace_fn_ref > 0) queue(L, h, t, node, sched, path, e);
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
  tend_trace_close(h);
  int e = tend_linefile_open(&h->trace, path);
  if (e) {
    errno = e;
    return -1;
  }
  free(h->trace_path);
  h->trace_path = strdup(path);
  return 0;
}

void tend_trace_salvage(tend_host *h) {
  tend_linefile_salvage(&h->trace);
}

void tend_trace_close(tend_host *h) {
  if (tend_linefile_close(&h->trace) != 0) trace_lost(h);
}
