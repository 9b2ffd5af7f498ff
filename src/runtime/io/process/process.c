/* process: OS processes owned by actors (see process.h). */
#define _GNU_SOURCE /* pipe2 */
#include "runtime/io/process/procrec.h"

#include <errno.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/oschild.h"
#include "runtime/core/event.h"
#include "runtime/core/promise.h"
#include "runtime/core/send.h"

/* One output stream of a program. */
/* ------------------------------------------------------------ records */

static void free_if_unused(tend_process *p);

void tend_proc_on_close(uv_handle_t *handle) {
  tend_process *p = handle->data;
  p->handles--;
  free_if_unused(p);
}

void tend_proc_close_handle(tend_process *p, uv_handle_t *handle) {
  if (uv_is_closing(handle)) return;
  handle->data = p;
  uv_close(handle, tend_proc_on_close);
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

tend_actor *tend_proc_owner_of(tend_process *p) {
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
  tend_actor *a = tend_proc_owner_of(p);
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

/* Ends a wait in progress with code (a tend_process_event); returns 1
 * when a waiter woke, 0 when none waits (a wait that timed out, such as
 * ready.after's, leaves a stale id: it wakes nobody). */
static int resolve(tend_process *p, int code) {
  if (p->wait_id == 0 || p->h == NULL) return 0;
  tend_promise *pr = tend_slots_get(&p->h->ids, p->wait_id, p->wait_gen);
  p->wait_id = 0;
  if (pr == NULL || pr->kind != TEND_ENTITY_PROMISE) return 0;
  tend_value v = {.type = TEND_VALUE_INT, .u.i = code};
  int woke = tend_promise_resolve(p->h->L, p->h, pr, v);
  tend_host_poke(p->h);
  return woke;
}

void tend_proc_set_ready(tend_process *p) {
  if (p->ready) return;
  p->ready = 1;
  emit(p, TEND_EV_READY);
  if (p->wait_ready) resolve(p, TEND_PROCESS_READY);
}

/* ------------------------------------------------------------ exit */

static void close_all_handles(tend_process *p) {
  for (int i = 0; i < 2; i++) tend_proc_close_stream(&p->out[i]);
  if (p->in_open) {
    p->in_open = 0;
    tend_proc_close_handle(p, (uv_handle_t *)&p->in);
  }
  tend_proc_close_handle(p, (uv_handle_t *)&p->tick);
  tend_proc_close_handle(p, (uv_handle_t *)&p->drain);
  tend_proc_close_handle(p, (uv_handle_t *)&p->grace);
}

/* Reaped and drained: the owner learns it (a wait ends, or the token is
 * sent to it). */
void tend_proc_maybe_finish(tend_process *p) {
  if (!p->exited || p->done || p->out[0].open || p->out[1].open) return;
  p->done = 1;
  close_all_handles(p);
  tend_host *h = p->h;
  if (h == NULL) return;
  lua_State *L = h->L;
  if (!resolve(p, TEND_PROCESS_EXITED) && p->token_ref != LUA_NOREF) {
    tend_actor *a = tend_proc_owner_of(p);
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
  for (int i = 0; i < 2; i++) { /* held open by a grandchild: what is
                                   there is read, then the pipe closes */
    tend_proc_drain(&p->out[i]);
    tend_proc_close_stream(&p->out[i]);
  }
  tend_proc_maybe_finish(p);
}

static void free_if_unused(tend_process *p) {
  if (p->handles > 0 || !p->lua_gone || (!p->exited && p->h)) return;
  unlink_record(p);
  for (int i = 0; i < 2; i++) {
    free(p->out[i].buf);
    free(p->out[i].rbuf);
  }
  free(p->argv0);
  free(p->ready_line);
  free(p);
}

static void on_proc_exit(tend_process *p, int64_t status, int signum,
                         int core) {
  p->exited = 1;
  p->status = status;
  p->signal = signum;
  p->core = core;
  if (p->h && p->h->running) p->h->running--;
  if (p->group) { /* what is left of its group; the watcher forgets it */
    kill(-p->pid, SIGKILL);
    if (p->h && p->h->life_made) tend_oschild_watch(p->h->life_fd[1], -p->pid);
  }
  if (p->h && !p->lua_gone) emit(p, TEND_EV_EXIT);
  if (p->out[0].open || p->out[1].open) {
    if (p->paused) { /* drain what is there */
      p->paused = 0;
      tend_proc_start_reading(p);
    }
    if (!uv_is_closing((uv_handle_t *)&p->grace))
      uv_timer_start(&p->grace, on_grace, GRACE_MS, 0);
  }
  tend_proc_maybe_finish(p);
  free_if_unused(p);
}

static void on_signal_closed(uv_handle_t *handle) {
  free(handle);
}

/* SIGCHLD: reap the programs that ended. */
static void on_sigchld(uv_signal_t *sig, int signum) {
  (void)signum;
  tend_host *h = sig->data;
  tend_process *p = h->processes;
  while (p) {
    tend_process *next = p->next; /* p may be freed */
    int64_t status;
    int s, core;
    if (!p->exited && tend_oschild_reap(p->pid, &status, &s, &core) != 0)
      on_proc_exit(p, status, s, core);
    p = next;
  }
  if (h->running == 0 && h->sigchld) uv_unref((uv_handle_t *)h->sigchld);
}

/* ------------------------------------------------------------ spawn */

static int start_watcher(tend_host *h) {
  if (h->life_made) return 0;
  int fd = tend_oschild_watcher();
  if (fd < 0) return fd;
  h->life_fd[1] = fd;
  h->life_made = 1;
  return 0;
}

static int watch_children(tend_host *h) {
  if (h->sigchld) return 0;
  uv_signal_t *s = malloc(sizeof *s);
  if (s == NULL) return UV_ENOMEM;
  uv_signal_init(&h->loop, s);
  s->data = h;
  int r = uv_signal_start(s, on_sigchld, SIGCHLD);
  if (r != 0) {
    uv_close((uv_handle_t *)s, on_signal_closed);
    return r;
  }
  uv_unref((uv_handle_t *)s);
  h->sigchld = s;
  return 0;
}

/* A descriptor that is >= 3 and close-on-exec (the child dup2s it). */
static int high_fd(int fd) {
  if (fd < 0 || fd >= 3) return fd;
  int h = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  close(fd);
  return h;
}

/* The descriptors of one stdio slot: the child's and ours (or -1). */
static int open_slot(const tend_process_spec *spec, int i, int *mine,
                     int *theirs) {
  *mine = *theirs = -1;
  int fds[2];
  tend_output mode = i == 0
                         ? (spec->stdin_pipe ? TEND_OUT_LINES : TEND_OUT_NULL)
                         : spec->out[i - 1];
  switch (mode) {
    case TEND_OUT_INHERIT: return 0;
    case TEND_OUT_NULL: *theirs = open("/dev/null", O_RDWR | O_CLOEXEC); break;
    case TEND_OUT_FILE:
      *theirs = open(spec->file[i - 1],
                     O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
      break;
    default:
      if (pipe2(fds, O_CLOEXEC) != 0) return -errno;
      *mine = high_fd(fds[i == 0 ? 1 : 0]);
      *theirs = fds[i == 0 ? 0 : 1];
      break;
  }
  if (*theirs < 0) return -errno;
  *theirs = high_fd(*theirs);
  return 0;
}

tend_process *tend_process_spawn(lua_State *L, tend_host *h, tend_actor *owner,
                                 uint32_t to_id, uint32_t to_gen,
                                 const tend_process_spec *spec, int *err) {
  (void)L;
  int r, mine[3] = {-1, -1, -1}, theirs[3] = {-1, -1, -1};
  tend_process *p = NULL;
  if ((r = watch_children(h)) != 0) goto fail;
  if (spec->group && (r = start_watcher(h)) != 0) goto fail;
  for (int i = 0; i < 3; i++)
    if ((r = open_slot(spec, i, &mine[i], &theirs[i])) != 0) goto fail;
  p = calloc(1, sizeof *p);
  if (p == NULL) {
    r = UV_ENOMEM;
    goto fail;
  }
  tend_oschild c = {.path = spec->path,
                    .argv = (char *const *)spec->argv,
                    .envp = spec->env,
                    .cwd = spec->cwd,
                    .fd = {theirs[0], theirs[1], theirs[2]},
                    .watch_fd = spec->group ? h->life_fd[1] : -1};
  int pid = tend_oschild_spawn(&c);
  if (pid < 0) {
    r = pid;
    goto fail;
  }
  for (int i = 0; i < 3; i++)
    if (theirs[i] >= 0) close(theirs[i]);
  p->token_ref = LUA_NOREF;
  p->argv0 = strdup(spec->argv[0]);
  p->ready_line = spec->ready_line ? strdup(spec->ready_line) : NULL;
  p->ready_tcp = spec->ready_tcp;
  p->group = spec->group;
  p->pid = pid;
  p->h = h;
  h->running++;
  uv_ref((uv_handle_t *)h->sigchld); /* a running program keeps the loop */
  if (mine[0] >= 0 && uv_pipe_init(&h->loop, &p->in, 0) == 0) {
    p->handles++;
    p->in.data = p;
    if (uv_pipe_open(&p->in, mine[0]) == 0)
      p->in_open = 1;
    else
      tend_proc_close_handle(p, (uv_handle_t *)&p->in);
  }
  for (int i = 0; i < 2; i++) {
    stream *s = &p->out[i];
    s->p = p;
    s->idx = i;
    s->mode = spec->out[i];
    if (mine[1 + i] < 0 || uv_pipe_init(&h->loop, &s->pipe, 0) != 0) continue;
    p->handles++;
    s->pipe.data = s;
    if (uv_pipe_open(&s->pipe, mine[1 + i]) == 0) {
      s->open = 1;
    } else {
      tend_proc_close_handle(p, (uv_handle_t *)&s->pipe);
    }
  }
  uv_prepare_init(&h->loop, &p->drain);
  p->drain.data = p;
  p->handles++;
  uv_timer_init(&h->loop, &p->tick);
  uv_timer_init(&h->loop, &p->grace);
  p->tick.data = p->grace.data = p;
  p->handles += 2;
  p->owner_id = owner ? owner->id : 0;
  p->owner_gen = owner ? owner->gen : 0;
  if (owner) owner->flags |= TEND_AF_PROCESS;
  p->to_id = to_id;
  p->to_gen = to_gen;
  p->next = h->processes;
  if (h->processes) h->processes->prev = p;
  h->processes = p;
  tend_proc_start_reading(p);
  if (p->ready_tcp) tend_proc_start_tick(p);
  emit(p, TEND_EV_SPAWN_OS);
  return p;
fail:
  for (int i = 0; i < 3; i++) {
    if (mine[i] >= 0) close(mine[i]);
    if (theirs[i] >= 0) close(theirs[i]);
  }
  free(p);
  *err = r;
  return NULL;
}

void tend_process_set_token(lua_State *L, tend_process *p, int handle) {
  lua_pushvalue(L, handle);
  p->token_ref = luaL_ref(L, LUA_REGISTRYINDEX);
}

void tend_process_release(tend_process *p) {
  if (!p->exited) send_signal(p, SIGKILL); /* reaped by on_sigchld */
  p->owner_id = p->to_id = p->wait_id = 0;
  p->lua_gone = 1;
  p->handles++; /* so that closing the rest cannot free p under us */
  close_all_handles(p);
  p->handles--;
  free_if_unused(p);
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
  tend_proc_set_ready(p);
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
  tend_proc_close_handle(
      p, (uv_handle_t *)&p->in); /* pending writes are cancelled */
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
  }
  if (h->sigchld) {
    uv_close((uv_handle_t *)h->sigchld, on_signal_closed);
    h->sigchld = NULL;
  }
  if (h->life_made) { /* the watcher sees EOF: it kills what is left */
    close(h->life_fd[1]);
    h->life_made = 0;
  }
}

int tend_process_core_dump(const tend_process *p) {
  return p->core;
}

/* ------------------------------------------------------------ driver */

static void owner_died(lua_State *L, tend_host *h, tend_actor *a) {
  (void)L;
  if (a->flags & TEND_AF_PROCESS) tend_process_owner_died(h, a);
}

const tend_driver tend_process_driver = {.name = "process",
                                         .death = owner_died,
                                         .close_all = tend_process_close_all};
