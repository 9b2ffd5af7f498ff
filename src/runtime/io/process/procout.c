/* procout: a program's output (see process.h): lines and chunks to the
 * `to` actor, the log, or collected; overlong lines cut; back-pressure on
 * the `to` mailbox; the ready line and the tcp readiness check. */
#include <errno.h>
#include <lauxlib.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/io/process/procrec.h"
#include "runtime/core/send.h"

/* ------------------------------------------------------------ output */

/* Does the line match the ready pattern? (string.find, protected) */
static int matches_ready(lua_State *L, tend_process *p, const char *s,
                         size_t n) {
  int top = lua_gettop(L);
  int ok = 0;
  if (lua_getglobal(L, "string") == LUA_TTABLE &&
      lua_getfield(L, -1, "find") == LUA_TFUNCTION) {
    lua_pushlstring(L, s, n);
    lua_pushstring(L, p->ready_line);
    ok = lua_pcall(L, 2, 1, 0) == LUA_OK && !lua_isnil(L, -1);
  }
  lua_settop(L, top);
  return ok;
}

/* How a piece of text given to deliver ends. */
enum {
  WHOLE = 0,
  PIECE = 1,
  LAST = 2
}; /* a line; a cut piece; the end of
      the stream, without a newline */

/* One line (or a chunk, or a piece of an overlong line) of stream s. */
static void deliver(stream *s, const char *text, size_t n, int partial) {
  tend_process *p = s->p;
  tend_host *h = p->h;
  if (h == NULL) return;
  lua_State *L = h->L;
  if (s->idx == 0 && p->ready_line && !p->ready && matches_ready(L, p, text, n))
    tend_proc_set_ready(p);
  if (s->mode == TEND_OUT_PASS) {
    tend_host_pass(h, s->idx, text, n, partial == WHOLE);
    return;
  }
  if (s->mode == TEND_OUT_LOG) {
    tend_actor *a = tend_proc_owner_of(p);
    if (a == NULL) return;
    tend_actor_push_path(L, h, a);
    tend_host_log(h, s->idx ? TEND_LOG_WARN : TEND_LOG_INFO,
                  lua_tostring(L, -1), "%.*s", (int)n, text);
    lua_pop(L, 1);
    return;
  }
  if (p->to_id == 0) return;
  lua_createtable(L, 0, 3);
  lua_pushstring(L, s->idx ? "stderr" : "stdout");
  lua_setfield(L, -2, "tend");
  lua_pushlstring(L, text, n);
  lua_setfield(L, -2, s->mode == TEND_OUT_CHUNKS ? "chunk" : "line");
  if (partial == PIECE) {
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, "partial");
  }
  tend_actor_send(L, h, p->to_id, p->to_gen, -1, p->owner_id, p->owner_gen);
  lua_pop(L, 1);
}

static int reserve(stream *s, size_t more) {
  if (s->len + more <= s->cap) return 0;
  size_t cap = s->cap ? s->cap : 256;
  while (cap < s->len + more) cap *= 2;
  char *b = realloc(s->buf, cap);
  if (b == NULL) return -1;
  s->buf = b;
  s->cap = cap;
  return 0;
}

/* Splits data into lines; a line longer than TEND_PROCESS_LINE_MAX goes
 * out in pieces marked partial, so memory stays bounded. */
static void take_lines(stream *s, const char *data, size_t n) {
  while (n > 0) {
    const char *nl = memchr(data, '\n', n);
    size_t k = nl ? (size_t)(nl - data) : n;
    if (s->len + k >= TEND_PROCESS_LINE_MAX) { /* cut: a piece goes out */
      size_t room = TEND_PROCESS_LINE_MAX - s->len;
      if (s->len == 0) {
        deliver(s, data, room, PIECE);
      } else {
        if (reserve(s, room) == 0) memcpy(s->buf + s->len, data, room);
        deliver(s, s->buf, s->len + room, PIECE);
        s->len = 0;
      }
      data += room;
      n -= room;
      continue;
    }
    if (nl == NULL) { /* the start of a line: kept */
      if (reserve(s, k) == 0) {
        memcpy(s->buf + s->len, data, k);
        s->len += k;
      }
      return;
    }
    if (s->len == 0) {
      deliver(s, data, k, WHOLE);
    } else {
      if (reserve(s, k) == 0) memcpy(s->buf + s->len, data, k);
      deliver(s, s->buf, s->len + k, WHOLE);
      s->len = 0;
    }
    data += k + 1;
    n -= k + 1;
  }
}

/* Passes data through to tend's own stdout or stderr, whole lines at a
 * time, one write a read (a line is not cut by another program's; a flood
 * costs a write per 64 KiB, not per line). A partial line waits in s->buf
 * up to TEND_PROCESS_LINE_MAX bytes, then goes as it is. While a ready
 * line is awaited, line by line (each is matched). */
static void take_pass(stream *s, const char *data, size_t n) {
  tend_process *p = s->p;
  if (s->idx == 0 && p->ready_line && !p->ready) {
    take_lines(s, data, n);
    return;
  }
  if (reserve(s, n) != 0) { /* no memory: what is kept, then this, as is */
    tend_host_pass(p->h, s->idx, s->buf, s->len, 0);
    tend_host_pass(p->h, s->idx, data, n, 0);
    s->len = 0;
    return;
  }
  memcpy(s->buf + s->len, data, n);
  s->len += n;
  size_t k = s->len; /* up to the last newline */
  while (k > 0 && s->buf[k - 1] != '\n') k--;
  if (s->len - k >= TEND_PROCESS_LINE_MAX) k = s->len;
  if (k == 0) return;
  tend_host_pass(p->h, s->idx, s->buf, k, 0);
  memmove(s->buf, s->buf + k, s->len - k);
  s->len -= k;
}

static void flush_partial(stream *s) {
  if ((s->mode == TEND_OUT_LINES || s->mode == TEND_OUT_LOG ||
       s->mode == TEND_OUT_PASS) &&
      s->len > 0) {
    deliver(s, s->buf, s->len, LAST);
    s->len = 0;
  }
}

void tend_proc_close_stream(stream *s) {
  if (!s->open) return;
  flush_partial(s);
  s->open = 0;
  s->reading = 0;
  tend_proc_close_handle(s->p, (uv_handle_t *)&s->pipe);
}

static tend_actor *target_of(tend_process *p) {
  return p->h && p->to_id ? tend_actor_live(p->h, p->to_id, p->to_gen) : NULL;
}

#ifndef LINES_READ_SIZE
#define LINES_READ_SIZE 8192
#endif
/* Bytes per read: lines go out a message each, so a read of lines is kept
 * small (the burst of messages one read makes stays near the high-water
 * mark, the pause comes sooner and the tables freed are reused hot);
 * chunks, the log and collecting take the whole READ_SIZE. */
static size_t read_size(const stream *s) {
  return s->mode == TEND_OUT_LINES ? LINES_READ_SIZE : READ_SIZE;
}

static void on_alloc(uv_handle_t *handle, size_t hint, uv_buf_t *buf) {
  (void)hint;
  stream *s = handle->data;
  if (s->rbuf == NULL) s->rbuf = malloc(READ_SIZE);
  *buf = uv_buf_init(s->rbuf, s->rbuf ? (unsigned)read_size(s) : 0);
}

/* nread bytes arrived in s->rbuf. */
static void take(stream *s, ssize_t nread) {
  switch (s->mode) {
    case TEND_OUT_LINES:
    case TEND_OUT_LOG: take_lines(s, s->rbuf, (size_t)nread); break;
    case TEND_OUT_PASS: take_pass(s, s->rbuf, (size_t)nread); break;
    case TEND_OUT_CHUNKS: deliver(s, s->rbuf, (size_t)nread, WHOLE); break;
    case TEND_OUT_COLLECT:
      if (reserve(s, (size_t)nread) == 0) {
        memcpy(s->buf + s->len, s->rbuf, (size_t)nread);
        s->len += (size_t)nread;
      }
      break;
    default: break;
  }
}

static void on_read(uv_stream_t *pipe, ssize_t nread, const uv_buf_t *buf) {
  (void)buf;
  stream *s = pipe->data;
  tend_process *p = s->p;
  if (nread < 0) { /* EOF or an error: this stream is over */
    tend_proc_close_stream(s);
    tend_proc_maybe_finish(p);
    return;
  }
  if (nread == 0 || p->h == NULL) return;
  take(s, nread);
  if (p->h->stdout_closed && !p->h->shutdown) /* passed to a closed pipe */
    tend_host_shutdown(p->h, 128 + SIGPIPE);  /* as a print, host.c */
  tend_actor *to = target_of(p);
  if (to && !p->paused && s->mode != TEND_OUT_LOG && s->mode != TEND_OUT_PASS &&
      to->mbox.n_user >= TEND_PROCESS_HIGH_WATER) { /* back-pressure */
    tend_proc_pause(p);
  }
  if (p->h) tend_host_poke(p->h);
}

void tend_proc_drain(stream *s) {
  uv_os_fd_t fd;
  if (!s->open || s->p->h == NULL ||
      uv_fileno((uv_handle_t *)&s->pipe, &fd) != 0)
    return;
  if (s->rbuf == NULL && (s->rbuf = malloc(READ_SIZE)) == NULL) return;
  for (int i = 0; i < DRAIN_READS; i++) {
    ssize_t n = read(fd, s->rbuf, READ_SIZE);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    take(s, n);
  }
}

void tend_proc_start_reading(tend_process *p) {
  for (int i = 0; i < 2; i++) {
    stream *s = &p->out[i];
    if (s->open && !s->reading) {
      s->pipe.data = s;
      if (uv_read_start((uv_stream_t *)&s->pipe, on_alloc, on_read) == 0)
        s->reading = 1;
    }
  }
}

/* ------------------------------------------------------------ pauses */

/* Resumes reading once `to` is down to the low-water mark. Looked at in
 * each turn of the loop after the scheduler's (the idle phase) and before
 * the poll (the drain prepare): a `to` that emptied its mailbox in that
 * turn gets more at once, not after a poll that would wait for the next
 * tick (nothing else wakes it while reads are stopped). For a `to` that
 * sleeps meanwhile, every tick as well. */
static void look_at_drain(tend_process *p) {
  tend_actor *to = target_of(p);
  if (p->paused && to && to->mbox.n_user > TEND_PROCESS_LOW_WATER) return;
  uv_prepare_stop(&p->drain);
  if (p->paused) {
    p->paused = 0;
    tend_proc_start_reading(p);
  }
}

static void on_drain_prepare(uv_prepare_t *c) {
  look_at_drain(c->data);
}

void tend_proc_pause(tend_process *p) {
  p->paused = 1;
  for (int i = 0; i < 2; i++)
    if (p->out[i].reading) {
      uv_read_stop((uv_stream_t *)&p->out[i].pipe);
      p->out[i].reading = 0;
    }
  if (!uv_is_closing((uv_handle_t *)&p->drain))
    uv_prepare_start(&p->drain, on_drain_prepare);
  tend_proc_start_tick(p);
}

/* ------------------------------------------------------------ ticks */

static void on_tcp_closed(uv_handle_t *handle) {
  tend_process *p = handle->data;
  p->tcp_busy = 0; /* the handle may be used again */
  tend_proc_on_close(handle);
}

static void close_tcp(tend_process *p) {
  if (!uv_is_closing((uv_handle_t *)&p->tcp))
    uv_close((uv_handle_t *)&p->tcp, on_tcp_closed);
}

static void on_connect(uv_connect_t *req, int status) {
  tend_process *p = req->data;
  if (status == 0 && !p->exited && p->h) tend_proc_set_ready(p);
  close_tcp(p);
}

static void try_connect(tend_process *p) {
  struct sockaddr_in addr;
  uv_ip4_addr("127.0.0.1", p->ready_tcp, &addr);
  if (uv_tcp_init(&p->h->loop, &p->tcp) != 0) return;
  p->handles++;
  p->tcp.data = p;
  p->conn.data = p;
  p->tcp_busy = 1;
  if (uv_tcp_connect(&p->conn, &p->tcp, (const struct sockaddr *)&addr,
                     on_connect) != 0)
    close_tcp(p);
}

static void on_tick(uv_timer_t *t) {
  tend_process *p = t->data;
  p->ticks++;
  if (p->paused) look_at_drain(p);
  int tcp = p->ready_tcp && !p->ready && !p->exited && p->h;
  if (tcp && !p->tcp_busy && p->ticks % TCP_EVERY == 1) try_connect(p);
  if (!tcp && !p->paused) uv_timer_stop(t);
}

void tend_proc_start_tick(tend_process *p) {
  if (p->h == NULL || uv_is_closing((uv_handle_t *)&p->tick)) return;
  if (!uv_is_active((uv_handle_t *)&p->tick))
    uv_timer_start(&p->tick, on_tick, TICK_MS, TICK_MS);
}
