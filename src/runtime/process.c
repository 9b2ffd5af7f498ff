/* process: OS processes owned by actors (see process.h). */
#define _GNU_SOURCE /* pipe2 */
#include "runtime/process.h"

#include <errno.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/exechelper.h"
#include "runtime/event.h"
#include "runtime/promise.h"
#include "runtime/send.h"

#define READ_SIZE 65536 /* bytes per read */
#define GRACE_MS 200    /* pipes still open this long after the exit close */
#define TICK_MS 20      /* back-pressure and tcp polling */
#define TCP_EVERY 5     /* ticks between connect attempts */

/* One output stream of a program. */
typedef struct stream {
  uv_pipe_t pipe;   /* the read end (when open) */
  tend_process *p;  /* its process */
  int idx;          /* 0 stdout, 1 stderr */
  tend_output mode; /* where it goes */
  int open;         /* 1: the pipe is initialized and not closing */
  int reading;      /* 1: uv_read_start is in effect */
  char *buf;        /* a partial line, or what was collected */
  size_t len, cap;  /* its length and capacity */
  char *rbuf;       /* the read buffer (READ_SIZE), while open */
} stream;

struct tend_process {
  uv_process_t proc;            /* the helper, then the program */
  uv_pipe_t in;                 /* its stdin (when in_open) */
  stream out[2];                /* stdout, stderr */
  uv_timer_t tick;              /* back-pressure and tcp polling */
  uv_timer_t grace;             /* closes the pipes a while after the exit */
  uv_tcp_t tcp;                 /* a connect attempt (ready.tcp) */
  uv_connect_t conn;            /* its request */
  tend_host *h;                 /* the host */
  tend_process *prev, *next;    /* in h->processes */
  uint32_t owner_id, owner_gen; /* the owner actor (0: gone) */
  uint32_t to_id, to_gen;       /* who gets the output (0: nobody) */
  uint32_t wait_id, wait_gen;   /* the promise of a wait, or 0 */
  int wait_ready;               /* 1: readiness ends the wait too */
  int pid;                      /* the program's pid */
  int group;                    /* 1: its own group gets the signals */
  int exited;                   /* 1: reaped */
  int done;                     /* 1: reaped and pipes drained: reported */
  int ready;                    /* 1: the ready condition held */
  int lua_gone;                 /* 1: the Lua handle let go */
  int in_open;                  /* 1: stdin pipe open */
  int paused;                   /* 1: reads stopped for back-pressure */
  int tcp_busy;                 /* 1: a connect attempt is under way */
  int handles;                  /* uv handles not yet closed */
  unsigned ticks;               /* tick count (tcp every TCP_EVERY) */
  int64_t status;               /* exit status, or -1 when signalled */
  int signal;                   /* the signal that ended it, or 0 */
  int token_ref;                /* registry ref of the Lua handle while it
                                   runs (owned here), else LUA_NOREF */
  char *argv0;                  /* for events and messages */
  char *ready_line;             /* Lua pattern, or NULL */
  int ready_tcp;                /* port, or 0 */
};

/* ------------------------------------------------------------ signals */

static const struct {
  const char *name;
  int num;
} signals[] = {
    {"HUP", SIGHUP},       {"INT", SIGINT},   {"QUIT", SIGQUIT},
    {"ILL", SIGILL},       {"TRAP", SIGTRAP}, {"ABRT", SIGABRT},
    {"BUS", SIGBUS},       {"FPE", SIGFPE},   {"KILL", SIGKILL},
    {"USR1", SIGUSR1},     {"SEGV", SIGSEGV}, {"USR2", SIGUSR2},
    {"PIPE", SIGPIPE},     {"ALRM", SIGALRM}, {"TERM", SIGTERM},
    {"CHLD", SIGCHLD},     {"CONT", SIGCONT}, {"STOP", SIGSTOP},
    {"TSTP", SIGTSTP},     {"TTIN", SIGTTIN}, {"TTOU", SIGTTOU},
    {"URG", SIGURG},       {"XCPU", SIGXCPU}, {"XFSZ", SIGXFSZ},
    {"VTALRM", SIGVTALRM}, {"PROF", SIGPROF}, {"WINCH", SIGWINCH},
    {"IO", SIGIO},         {"SYS", SIGSYS},
};

int tend_signal_number(const char *name) {
  if (strncmp(name, "SIG", 3) == 0) name += 3;
  for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++)
    if (strcmp(signals[i].name, name) == 0) return signals[i].num;
  return 0;
}

const char *tend_signal_name(int signum) {
  for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++)
    if (signals[i].num == signum) return signals[i].name;
  return NULL;
}

/* ------------------------------------------------------------ records */

static void on_close(uv_handle_t *handle) {
  tend_process *p = handle->data;
  if (--p->handles > 0 || !p->lua_gone) return;
  for (int i = 0; i < 2; i++) {
    free(p->out[i].buf);
    free(p->out[i].rbuf);
  }
  free(p->argv0);
  free(p->ready_line);
  free(p);
}

static void close_handle(tend_process *p, uv_handle_t *handle) {
  if (uv_is_closing(handle)) return;
  handle->data = p;
  uv_close(handle, on_close);
}

static void unlink_record(tend_process *p) {
  tend_host *h = p->h;
  if (h == NULL) return;
  if (p->prev)
    p->prev->next = p->next;
  else
    h->processes = p->next;
  if (p->next) p->next->prev = p->prev;
  p->prev = p->next = NULL;
  p->h = NULL;
}

static tend_actor *owner_of(tend_process *p) {
  return p->h && p->owner_id ? tend_actor_live(p->h, p->owner_id, p->owner_gen)
                             : NULL;
}

/* Sends signum to the program, or its group. */
static int send_signal(tend_process *p, int signum) {
  if (p->exited || p->pid <= 0) return 0;
  int r = kill(p->group ? -p->pid : p->pid, signum);
  return r == 0 || errno == ESRCH ? 0 : -errno;
}

static void emit(tend_process *p, tend_event_kind ev) {
  tend_actor *a = owner_of(p);
  if (a == NULL || !tend_event_on(p->h)) return;
  tend_event e = TEND_EVENT_INIT(ev, a);
  if (ev == TEND_EV_SPAWN_OS) {
    e.pid = p->pid;
    e.argv0 = p->argv0;
  } else if (ev == TEND_EV_EXIT) {
    e.pid = p->pid;
    if (p->signal)
      e.signal = tend_signal_name(p->signal);
    else
      e.status = p->status;
  }
  tend_event_emit(p->h->L, p->h, &e);
}

/* Ends a wait in progress with code (a tend_process_event). */
static void resolve(tend_process *p, int code) {
  if (p->wait_id == 0 || p->h == NULL) return;
  tend_promise *pr = tend_slots_get(&p->h->ids, p->wait_id, p->wait_gen);
  p->wait_id = 0;
  if (pr == NULL || pr->kind != TEND_ENTITY_PROMISE) return;
  tend_value v = {.type = TEND_VALUE_INT, .u.i = code};
  tend_promise_resolve(p->h->L, p->h, pr, v);
  tend_host_poke(p->h);
}

static void set_ready(tend_process *p) {
  if (p->ready) return;
  p->ready = 1;
  emit(p, TEND_EV_READY);
  if (p->wait_ready) resolve(p, TEND_PROCESS_READY);
}

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

/* One line (or a chunk, or a piece of an overlong line) of stream s. */
static void deliver(stream *s, const char *text, size_t n, int partial) {
  tend_process *p = s->p;
  tend_host *h = p->h;
  if (h == NULL) return;
  lua_State *L = h->L;
  if (s->idx == 0 && p->ready_line && !p->ready && matches_ready(L, p, text, n))
    set_ready(p);
  if (s->mode == TEND_OUT_LOG) {
    tend_actor *a = owner_of(p);
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
  if (partial) {
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
        deliver(s, data, room, 1);
      } else {
        if (reserve(s, room) == 0) memcpy(s->buf + s->len, data, room);
        deliver(s, s->buf, s->len + room, 1);
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
      deliver(s, data, k, 0);
    } else {
      if (reserve(s, k) == 0) memcpy(s->buf + s->len, data, k);
      deliver(s, s->buf, s->len + k, 0);
      s->len = 0;
    }
    data += k + 1;
    n -= k + 1;
  }
}

static void flush_partial(stream *s) {
  if ((s->mode == TEND_OUT_LINES || s->mode == TEND_OUT_LOG) && s->len > 0) {
    deliver(s, s->buf, s->len, 0);
    s->len = 0;
  }
}

static void maybe_finish(tend_process *p);
static void start_tick(tend_process *p);

static void close_stream(stream *s) {
  if (!s->open) return;
  flush_partial(s);
  s->open = 0;
  s->reading = 0;
  close_handle(s->p, (uv_handle_t *)&s->pipe);
}

static tend_actor *target_of(tend_process *p) {
  return p->h && p->to_id ? tend_actor_live(p->h, p->to_id, p->to_gen) : NULL;
}

static void on_alloc(uv_handle_t *handle, size_t hint, uv_buf_t *buf) {
  (void)hint;
  stream *s = handle->data;
  if (s->rbuf == NULL) s->rbuf = malloc(READ_SIZE);
  *buf = uv_buf_init(s->rbuf, s->rbuf ? READ_SIZE : 0);
}

static void on_read(uv_stream_t *pipe, ssize_t nread, const uv_buf_t *buf) {
  (void)buf;
  stream *s = pipe->data;
  tend_process *p = s->p;
  if (nread < 0) { /* EOF or an error: this stream is over */
    close_stream(s);
    maybe_finish(p);
    return;
  }
  if (nread == 0 || p->h == NULL) return;
  switch (s->mode) {
    case TEND_OUT_LINES:
    case TEND_OUT_LOG: take_lines(s, s->rbuf, (size_t)nread); break;
    case TEND_OUT_CHUNKS: deliver(s, s->rbuf, (size_t)nread, 0); break;
    case TEND_OUT_COLLECT:
      if (reserve(s, (size_t)nread) == 0) {
        memcpy(s->buf + s->len, s->rbuf, (size_t)nread);
        s->len += (size_t)nread;
      }
      break;
    default: break;
  }
  tend_actor *to = target_of(p);
  if (to && !p->paused && s->mode != TEND_OUT_LOG &&
      to->mbox.n_user >= TEND_PROCESS_HIGH_WATER) { /* back-pressure */
    p->paused = 1;
    for (int i = 0; i < 2; i++)
      if (p->out[i].reading) {
        uv_read_stop((uv_stream_t *)&p->out[i].pipe);
        p->out[i].reading = 0;
      }
    start_tick(p);
  }
  if (p->h) tend_host_poke(p->h);
}

static void start_reading(tend_process *p) {
  for (int i = 0; i < 2; i++) {
    stream *s = &p->out[i];
    if (s->open && !s->reading) {
      s->pipe.data = s;
      if (uv_read_start((uv_stream_t *)&s->pipe, on_alloc, on_read) == 0)
        s->reading = 1;
    }
  }
}

/* ------------------------------------------------------------ ticks */

static void on_tcp_closed(uv_handle_t *handle) {
  tend_process *p = handle->data;
  p->tcp_busy = 0; /* the handle may be used again */
  on_close(handle);
}

static void close_tcp(tend_process *p) {
  if (!uv_is_closing((uv_handle_t *)&p->tcp))
    uv_close((uv_handle_t *)&p->tcp, on_tcp_closed);
}

static void on_connect(uv_connect_t *req, int status) {
  tend_process *p = req->data;
  if (status == 0 && !p->exited && p->h) set_ready(p);
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
  if (p->paused) {
    tend_actor *to = target_of(p);
    if (to == NULL || to->mbox.n_user <= TEND_PROCESS_LOW_WATER) {
      p->paused = 0;
      start_reading(p);
    }
  }
  int tcp = p->ready_tcp && !p->ready && !p->exited && p->h;
  if (tcp && !p->tcp_busy && p->ticks % TCP_EVERY == 1) try_connect(p);
  if (!p->paused && !tcp) uv_timer_stop(t);
}

static void start_tick(tend_process *p) {
  if (p->h == NULL || uv_is_closing((uv_handle_t *)&p->tick)) return;
  if (!uv_is_active((uv_handle_t *)&p->tick))
    uv_timer_start(&p->tick, on_tick, TICK_MS, TICK_MS);
}

/* ------------------------------------------------------------ exit */

static void close_all_handles(tend_process *p) {
  for (int i = 0; i < 2; i++) close_stream(&p->out[i]);
  if (p->in_open) {
    p->in_open = 0;
    close_handle(p, (uv_handle_t *)&p->in);
  }
  close_handle(p, (uv_handle_t *)&p->tick);
  close_handle(p, (uv_handle_t *)&p->grace);
  if (p->exited) close_handle(p, (uv_handle_t *)&p->proc);
}

/* Reaped and drained: the owner learns it (a wait ends, or the token is
 * sent to it). */
static void maybe_finish(tend_process *p) {
  if (!p->exited || p->done || p->out[0].open || p->out[1].open) return;
  p->done = 1;
  close_all_handles(p);
  tend_host *h = p->h;
  if (h == NULL) return;
  lua_State *L = h->L;
  if (p->wait_id) {
    resolve(p, TEND_PROCESS_EXITED);
  } else if (p->token_ref != LUA_NOREF) {
    tend_actor *a = owner_of(p);
    if (a) {
      lua_rawgeti(L, LUA_REGISTRYINDEX, p->token_ref);
      tend_actor_send(L, h, a->id, a->gen, -1, 0, 0);
      lua_pop(L, 1);
      tend_host_poke(h);
    }
  }
  luaL_unref(L, LUA_REGISTRYINDEX, p->token_ref);
  p->token_ref = LUA_NOREF;
}

static void on_grace(uv_timer_t *t) {
  tend_process *p = t->data;
  for (int i = 0; i < 2; i++) close_stream(&p->out[i]);
  maybe_finish(p);
}

static void on_proc_exit(uv_process_t *proc, int64_t status, int signum) {
  tend_process *p = proc->data;
  p->exited = 1;
  p->status = signum ? -1 : status;
  p->signal = signum;
  if (p->group) kill(-p->pid, SIGKILL); /* what is left of its group */
  if (p->h) emit(p, TEND_EV_EXIT);
  close_handle(p, (uv_handle_t *)&p->proc);
  if (p->out[0].open || p->out[1].open) {
    if (p->paused) { /* drain what is there */
      p->paused = 0;
      start_reading(p);
    }
    uv_timer_start(&p->grace, on_grace, GRACE_MS, 0);
  }
  maybe_finish(p);
}

/* ------------------------------------------------------------ spawn */

static char exe_path[4096]; /* this binary (the exec helper) */

static int make_life_pipe(tend_host *h) {
  if (h->life_made) return 0;
  if (pipe2(h->life_fd, O_CLOEXEC) != 0) return -errno;
  h->life_made = 1;
  return 0;
}

static int init_pipe(tend_host *h, tend_process *p, uv_pipe_t *pipe) {
  int r = uv_pipe_init(&h->loop, pipe, 0);
  if (r == 0) {
    pipe->data = p;
    p->handles++;
  }
  return r;
}

tend_process *tend_process_spawn(lua_State *L, tend_host *h, tend_actor *owner,
                                 uint32_t to_id, uint32_t to_gen,
                                 const tend_process_spec *spec, int *err) {
  (void)L;
  int r = 0, files[2] = {-1, -1};
  size_t n = 0;
  while (spec->argv[n]) n++;
  if (exe_path[0] == '\0') {
    size_t len = sizeof exe_path;
    if ((r = uv_exepath(exe_path, &len)) != 0) goto early;
  }
  if (spec->group && (r = make_life_pipe(h)) != 0) goto early;
  tend_process *p = calloc(1, sizeof *p);
  const char **args = calloc(n + 6, sizeof *args);
  if (p == NULL || args == NULL) {
    free(p);
    free(args);
    r = UV_ENOMEM;
    goto early;
  }
  p->token_ref = LUA_NOREF;
  p->argv0 = strdup(spec->argv[0]);
  p->ready_line = spec->ready_line ? strdup(spec->ready_line) : NULL;
  p->ready_tcp = spec->ready_tcp;
  p->group = spec->group;
  p->lua_gone = 1; /* until spawned: a failure frees it on close */
  char ppid[24];
  snprintf(ppid, sizeof ppid, "%d", (int)getpid());
  args[0] = exe_path;
  args[1] = TEND_EXEC_HELPER_FLAG;
  args[2] = ppid;
  args[3] = spec->group ? "1" : "0";
  args[4] = spec->path;
  for (size_t i = 0; i < n; i++) args[5 + i] = spec->argv[i];
  uv_stdio_container_t stdio[4];
  memset(stdio, 0, sizeof stdio);
  stdio[0].flags = UV_IGNORE;
  if (spec->stdin_pipe && (r = init_pipe(h, p, &p->in)) == 0) {
    p->in_open = 1;
    stdio[0].flags = UV_CREATE_PIPE | UV_READABLE_PIPE;
    stdio[0].data.stream = (uv_stream_t *)&p->in;
  }
  for (int i = 0; i < 2 && r == 0; i++) {
    stream *s = &p->out[i];
    s->p = p;
    s->idx = i;
    s->mode = spec->out[i];
    uv_stdio_container_t *c = &stdio[1 + i];
    switch (s->mode) {
      case TEND_OUT_INHERIT:
        c->flags = UV_INHERIT_FD;
        c->data.fd = 1 + i;
        break;
      case TEND_OUT_NULL: c->flags = UV_IGNORE; break;
      case TEND_OUT_FILE:
        files[i] = open(spec->file[i],
                        O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (files[i] < 0) {
          r = -errno;
          break;
        }
        c->flags = UV_INHERIT_FD;
        c->data.fd = files[i];
        break;
      default:
        if ((r = init_pipe(h, p, &s->pipe)) != 0) break;
        s->pipe.data = s;
        s->open = 1;
        c->flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
        c->data.stream = (uv_stream_t *)&s->pipe;
        break;
    }
  }
  if (r == 0) {
    stdio[3].flags = UV_INHERIT_FD;
    stdio[3].data.fd = h->life_made ? h->life_fd[0] : 0;
    uv_process_options_t o;
    memset(&o, 0, sizeof o);
    o.exit_cb = on_proc_exit;
    o.file = exe_path;
    o.args = (char **)args;
    o.env = spec->env;
    o.cwd = spec->cwd;
    o.stdio = stdio;
    o.stdio_count = spec->group ? 4 : 3;
    p->proc.data = p; /* also says: uv_spawn was called */
    r = uv_spawn(&h->loop, &p->proc, &o);
  }
  free(args);
  for (int i = 0; i < 2; i++)
    if (files[i] >= 0) close(files[i]);
  if (r != 0) { /* nothing runs: close what was opened, p goes with it */
    p->exited = 1;
    if (p->proc.data == p) { /* uv_spawn initialized the handle */
      p->handles++;
      close_handle(p, (uv_handle_t *)&p->proc);
    }
    for (int i = 0; i < 2; i++)
      if (p->out[i].open) {
        p->out[i].open = 0;
        close_handle(p, (uv_handle_t *)&p->out[i].pipe);
      }
    if (p->in_open) close_handle(p, (uv_handle_t *)&p->in);
    if (p->handles == 0) {
      p->handles = 1; /* on_close frees it */
      p->proc.data = p;
      on_close((uv_handle_t *)&p->proc);
    }
    *err = r;
    return NULL;
  }
  p->handles++; /* proc */
  uv_timer_init(&h->loop, &p->tick);
  uv_timer_init(&h->loop, &p->grace);
  p->tick.data = p->grace.data = p;
  p->handles += 2;
  p->lua_gone = 0;
  p->h = h;
  p->pid = p->proc.pid;
  p->owner_id = owner ? owner->id : 0;
  p->owner_gen = owner ? owner->gen : 0;
  if (owner) owner->flags |= TEND_AF_PROCESS;
  p->to_id = to_id;
  p->to_gen = to_gen;
  p->next = h->processes;
  if (h->processes) h->processes->prev = p;
  h->processes = p;
  start_reading(p);
  if (p->ready_tcp) start_tick(p);
  emit(p, TEND_EV_SPAWN_OS);
  return p;
early:
  *err = r;
  return NULL;
}

void tend_process_set_token(lua_State *L, tend_process *p, int handle) {
  lua_pushvalue(L, handle);
  p->token_ref = luaL_ref(L, LUA_REGISTRYINDEX);
}

void tend_process_release(tend_process *p) {
  if (!p->exited) send_signal(p, SIGKILL);
  unlink_record(p);
  p->owner_id = p->to_id = p->wait_id = 0;
  p->lua_gone = 1;
  p->handles++; /* so that closing the rest cannot free p under us */
  close_all_handles(p);
  p->proc.data = p;
  on_close((uv_handle_t *)&p->proc); /* the extra count */
}

/* ------------------------------------------------------------ use */

int tend_process_pid(const tend_process *p) {
  return p->pid;
}
int tend_process_done(const tend_process *p) {
  return p->done;
}
int tend_process_is_ready(const tend_process *p) {
  return p->ready;
}

void tend_process_status(const tend_process *p, int64_t *status, int *signum) {
  *status = p->status;
  *signum = p->signal;
}

void tend_process_mark_ready(lua_State *L, tend_process *p) {
  (void)L;
  set_ready(p);
}

int tend_process_signal(tend_process *p, int signum) {
  return send_signal(p, signum);
}

static void on_written(uv_write_t *req, int status) {
  (void)status;
  free(req);
}

int tend_process_write(tend_process *p, const char *data, size_t n) {
  if (!p->in_open) return UV_EPIPE;
  uv_write_t *req = malloc(sizeof *req + n);
  if (req == NULL) return UV_ENOMEM;
  char *copy = (char *)(req + 1);
  memcpy(copy, data, n);
  uv_buf_t b = uv_buf_init(copy, (unsigned)n);
  int r = uv_write(req, (uv_stream_t *)&p->in, &b, 1, on_written);
  if (r != 0) free(req);
  return r;
}

void tend_process_close_stdin(tend_process *p) {
  if (!p->in_open) return;
  p->in_open = 0;
  close_handle(p, (uv_handle_t *)&p->in); /* pending writes are cancelled */
}

void tend_process_push_collected(lua_State *L, const tend_process *p, int i) {
  lua_pushlstring(L, p->out[i].buf ? p->out[i].buf : "", p->out[i].len);
}

int tend_process_wait(lua_State *L, tend_host *h, tend_actor *a,
                      tend_process *p, int for_ready, int64_t timeout_ns,
                      const char *fn) {
  if (p->done || (for_ready && p->ready)) return 1;
  tend_promise *pr = tend_promise_new(L, h, a, timeout_ns, fn);
  p->wait_id = pr->id;
  p->wait_gen = pr->gen;
  p->wait_ready = for_ready;
  return 0;
}

/* ------------------------------------------------------------ the host */

tend_process *tend_process_of(const tend_host *h, const tend_actor *a) {
  if (!(a->flags & TEND_AF_PROCESS)) return NULL;
  for (tend_process *p = h->processes; p; p = p->next)
    if (p->owner_id == a->id && p->owner_gen == a->gen && !p->done) return p;
  return NULL;
}

int tend_process_pid_of(const tend_host *h, const tend_actor *a) {
  const tend_process *p = tend_process_of(h, a);
  return p ? p->pid : 0;
}

void tend_process_owner_died(tend_host *h, const tend_actor *a) {
  for (tend_process *p = h->processes; p; p = p->next) {
    if (p->owner_id != a->id || p->owner_gen != a->gen) continue;
    send_signal(p, SIGKILL);
    p->owner_id = p->to_id = 0;
  }
}

void tend_process_close_all(tend_host *h) {
  while (h->processes) {
    tend_process *p = h->processes;
    send_signal(p, SIGKILL);
    unlink_record(p);
    p->owner_id = p->to_id = p->wait_id = 0;
    luaL_unref(h->L, LUA_REGISTRYINDEX, p->token_ref);
    p->token_ref = LUA_NOREF;
    close_all_handles(p);
    if (!p->exited) close_handle(p, (uv_handle_t *)&p->proc);
  }
  if (h->life_made) { /* the watchers see EOF: their groups are gone */
    close(h->life_fd[0]);
    close(h->life_fd[1]);
    h->life_made = 0;
  }
}

int tend_process_core_dump(const tend_process *p) {
  switch (p->signal) {
    case SIGQUIT:
    case SIGILL:
    case SIGTRAP:
    case SIGABRT:
    case SIGBUS:
    case SIGFPE:
    case SIGSEGV:
    case SIGSYS:
    case SIGXCPU:
    case SIGXFSZ: {
      struct rlimit rl;
      return getrlimit(RLIMIT_CORE, &rl) == 0 && rl.rlim_cur != 0;
    }
    default: return 0;
  }
}
