/* procrec: the process record and its streams, shared by process.c (life,
 * spawn, exit, the host) and procout.c (output, readiness polling). Not
 * for other files: they use process.h. */
#ifndef TEND_PROCREC_H
#define TEND_PROCREC_H

#include "runtime/io/process/process.h"

#define READ_SIZE 65536 /* bytes per read */
#define GRACE_MS 200    /* pipes still open this long after the exit close */
#define TICK_MS 20      /* tcp polling */
#define TCP_EVERY 5     /* ticks between connect attempts */
#define DRAIN_READS 16  /* reads of a pipe's last data before its close */

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
  uv_pipe_t in;                 /* its stdin (when in_open) */
  stream out[2];                /* stdout, stderr */
  uv_timer_t tick;              /* tcp polling */
  uv_prepare_t drain;           /* while paused: after each turn of the
                                   scheduler, before the loop would block in
                                   its poll, looks whether `to` drained */
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
  int core;                     /* 1: it dumped core */
  int token_ref;                /* registry ref of the Lua handle while it
                                   runs (owned here), else LUA_NOREF */
  char *argv0;                  /* for events and messages */
  char *ready_line;             /* Lua pattern, or NULL */
  int ready_tcp;                /* port, or 0 */
};

/* process.c */
/* The close callback of every handle of a record (frees it when unused). */
void tend_proc_on_close(uv_handle_t *handle);
void tend_proc_close_handle(tend_process *p, uv_handle_t *handle);
tend_actor *tend_proc_owner_of(tend_process *p);
/* The ready condition holds: the event, and a wait for it ends. */
void tend_proc_set_ready(tend_process *p);
/* Reaped and drained: the owner learns it. */
void tend_proc_maybe_finish(tend_process *p);

/* procout.c */
void tend_proc_start_reading(tend_process *p);
/* Reads what the pipe holds now (at most DRAIN_READS reads), before a
 * close that does not wait for its EOF. */
void tend_proc_drain(stream *s);
/* Flushes a partial line and closes the stream's pipe. */
void tend_proc_close_stream(stream *s);
/* The tick timer runs while a tcp check is due. */
void tend_proc_start_tick(tend_process *p);
/* Stops reading until the `to` mailbox is down to the low-water mark. */
void tend_proc_pause(tend_process *p);

#endif
