/* process: OS processes owned by actors (uv_spawn). A process record runs
 * one program through the exec helper (base/exechelper.h), reads its
 * stdout and stderr (lines, chunks, the log, or collected for
 * tend.process.run), writes its stdin, signals it, and reports its exit.
 *
 * A record has an owner actor (the process actor, or the actor waiting in
 * tend.process.run) and a target for its output (`to`). When the program
 * has exited and its pipes are drained, the owner learns it: a wait in
 * progress (tend_process_wait) wakes, or else the record's Lua handle is
 * sent to the owner as a message (the exit token). When the owner dies, the
 * program (its group) is killed with SIGKILL. No program outlives the host:
 * at close every one still running is killed, and the kernel or a watcher
 * kills it if tend itself dies (oschild.h). The Lua side (a "tend.Process"
 * userdata holding a pointer to the record) is the API's; the record is freed
 * when both its uv handles are closed and the userdata is collected. */
#ifndef TEND_PROCESS_H
#define TEND_PROCESS_H

#include <lua.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "base/oschild.h"
#include "runtime/core/host.h"
#include "runtime/tend.h" /* outputs, events, the spec */

#define TEND_PROCESS_LINE_MAX 65536  /* longest line; longer is cut */
#define TEND_PROCESS_HIGH_WATER 1000 /* `to` mailbox size that pauses reads */
#define TEND_PROCESS_LOW_WATER 500   /* ... and resumes them */

/* Spawns spec for owner, output to (to_id, to_gen) (0: none). Returns the
 * record, or NULL with a negative errno in *err (nothing left behind). */
tend_process *tend_process_spawn(lua_State *L, tend_host *h, tend_actor *owner,
                                 uint32_t to_id, uint32_t to_gen,
                                 const tend_process_spec *spec, int *err);
/* The Lua handle of p (stack index handle) is its exit token: kept in the
 * registry while the program runs (owned by p), sent to the owner. */
void tend_process_set_token(lua_State *L, tend_process *p, int handle);
/* The Lua side let go of p (its userdata is collected): a running program
 * is killed; p is freed once its handles are closed. */
void tend_process_release(tend_process *p);

int tend_process_pid(const tend_process *p);
/* 1 once the exit is known and the pipes drained. */
int tend_process_done(const tend_process *p);
/* Exit status (or -1) and signal number (or 0), once done. */
void tend_process_status(const tend_process *p, int64_t *status, int *signal);
/* 1 when it dumped core (WCOREDUMP). */
int tend_process_core_dump(const tend_process *p);
int tend_process_is_ready(const tend_process *p);
/* Marks p ready (the API decided: ready.after, or no condition); emits
 * the `ready` event once. */
void tend_process_mark_ready(lua_State *L, tend_process *p);
/* Sends signum to the program (its group when it has one). Returns 0 or a
 * negative errno; 0 when it is gone already. */
int tend_process_signal(tend_process *p, int signum);
/* Writes n bytes to its stdin (copied). 0, or a libuv error. */
int tend_process_write(tend_process *p, const char *data, size_t n);
/* Closes its stdin (EOF for the program). */
void tend_process_close_stdin(tend_process *p);
/* Pushes what was collected from stream i (0 stdout, 1 stderr). */
void tend_process_push_collected(lua_State *L, const tend_process *p, int i);

/* The current actor a waits for p: exit (or, with for_ready, readiness)
 * or timeout_ns (< 0: none). Arms the wait (a promise); the caller then
 * yields with tend_sched_wait(TEND_WAIT_ASK). Returns 1 when the event
 * has happened already (no wait armed). */
int tend_process_wait(lua_State *L, tend_host *h, tend_actor *a,
                      tend_process *p, int for_ready, int64_t timeout_ns,
                      const char *fn);

/* a's running process (the first), or NULL. */
tend_process *tend_process_of(const tend_host *h, const tend_actor *a);
/* The pid of a's process (0 when a owns none): tend.ps. */
int tend_process_pid_of(const tend_host *h, const tend_actor *a);
/* a died: its programs are killed (SIGKILL), their output dropped. */
void tend_process_owner_died(tend_host *h, const tend_actor *a);
/* The host closes: every program still running is killed, every handle
 * closed (the loop runs their close callbacks afterwards). */
void tend_process_close_all(tend_host *h);
/* Its deaths (an owner's programs are killed) and the host's close
 * (driver.h). */
extern const tend_driver tend_process_driver;

#endif
