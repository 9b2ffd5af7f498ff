/* lifecycle: an actor's life between spawn and death (design §5.3):
 * system messages come here first (START, STOP, CHILD_GONE go on here;
 * CHILD_FAILED, CHILD_EXITED and RESTART go to supervise.h); starting
 * (factory, pre_start), stopping (children youngest first, then post_stop
 * within its shutdown time, else killed), and death (mail to dead letters,
 * timers cancelled, watchers and parent told). Tasks (the main chunk,
 * tend.after) are actors that run one function and stop. */
#ifndef TEND_LIFECYCLE_H
#define TEND_LIFECYCLE_H

#include <lua.h>

#include "runtime/core/host.h"
#include "runtime/tend.h" /* tend_spawn_opts */

/* Default options: anonymous, unbounded, 5 s shutdown, transient. */
void tend_spawn_opts_init(tend_spawn_opts *o);

/* Creates an actor under parent with factory at stack index `factory`;
 * queues its START. Pushes its ref. Raises a Lua error (nothing created) if
 * the name is taken or the parent cannot take children. */
tend_actor *tend_actor_spawn(lua_State *L, tend_host *h, tend_actor *parent,
                             int factory, const tend_spawn_opts *o);
/* Raises (naming fn) unless parent can take a child named by the string
 * at stack index name (0: anonymous). */
/* a (a proxy of an actor on another scheduler, with no parent) becomes
 * parent's youngest child: parent's stop and restart wait for its end. */
void tend_actor_adopt(tend_actor *parent, tend_actor *a);
void tend_actor_check_spawn(lua_State *L, tend_host *h, tend_actor *parent,
                            int name, const char *fn);
/* Processes one system message of a (called by the worker). Returns the
 * number of arguments pushed for a Lua call to make (function below them),
 * or -1 when there is nothing to call. */
int tend_lifecycle_system(lua_State *L, tend_host *h, tend_actor *a,
                          tend_msg *m);
/* Pushes the call of a's factory (or task function) with its args; sets
 * a->op and returns the argument count. */
int tend_lifecycle_push_factory(lua_State *L, tend_host *h, tend_actor *a);
/* The factory returned a behavior (installed): pushes a call of pre_start
 * (returns 2), or marks a started (returns -1). */
int tend_lifecycle_built(lua_State *L, tend_host *h, tend_actor *a);
/* pre_start returned: a takes messages now. */
void tend_lifecycle_started(lua_State *L, tend_host *h, tend_actor *a);
/* A restart of a begins: an attempt at its next incarnation, counted once
 * (a->restarts, tend.stats().restarts, a "restart" event) whether its
 * factory and hooks then succeed or fail. */
void tend_lifecycle_count_restart(lua_State *L, tend_host *h, tend_actor *a);

/* Asks a to stop (async): children first, then post_stop, then death. */
void tend_actor_stop(lua_State *L, tend_host *h, tend_actor *a,
                     tend_stop_reason why);
/* Ends the actor now: mail to dead letters, timers cancelled, parent told. */
void tend_actor_die(lua_State *L, tend_host *h, tend_actor *a);
/* Ends whatever a waits for: coroutine, timers of the wait, promise, the
 * promises of its fibers (promise.h). */
void tend_actor_end_wait(lua_State *L, tend_host *h, tend_actor *a);
/* "normal", "shutdown", or the error kind a stopped with (a string that
 * lives as long as a's error). */
const char *tend_actor_reason_name(lua_State *L, tend_actor *a);

/* Its timer kinds (driver.h). */
extern const tend_driver tend_lifecycle_driver;

#endif
