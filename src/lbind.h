/* lbind: what the Lua binding files share. */
#ifndef TEND_LBIND_H
#define TEND_LBIND_H

#include <lauxlib.h>
#include <lua.h>

#include "host.h"

#define TEND_REF_MT "tend.Ref"
#define TEND_CTX_MT "tend.Ctx"
#define TEND_TIMER_MT "tend.Timer"
#define TEND_ERROR_MT "tend.Error"

/* ---- lref.c: refs ---- */
typedef struct tend_ref {
  uint32_t magic; /* TEND_REF_MAGIC */
  uint32_t id;    /* target slot */
  uint32_t gen;   /* target generation */
} tend_ref;
#define TEND_REF_MAGIC 0x72656672u

/* Pushes a new ref to (id, gen). */
void tend_ref_new(lua_State *L, uint32_t id, uint32_t gen);
/* Pushes the best ref for (id, gen): the actor's canonical one while it
 * lives, else a new one. Pushes nil for id 0. */
void tend_ref_push(lua_State *L, tend_host *h, uint32_t id, uint32_t gen);
/* The ref at idx, or NULL. */
tend_ref *tend_ref_test(lua_State *L, int idx);
/* The ref at idx, or a Lua error naming argument arg of function fn. */
tend_ref *tend_ref_check(lua_State *L, int idx, const char *fn,
                         const char *arg);
/* Pushes ref:send / tend.send (a closure over the value store). */
void tend_push_send(lua_State *L, tend_host *h);
/* The live actor a ref names, or NULL. */
tend_actor *tend_ref_actor(tend_host *h, const tend_ref *r);
/* The ref at idx remembers path at the top of the stack (popped). */
void tend_ref_set_path(lua_State *L, int idx);
void tend_ref_open(lua_State *L);

/* ---- lctx.c: the ctx metatable and spawning ---- */
/* The actor whose ctx is at idx, or a Lua error. */
tend_actor *tend_ctx_check(lua_State *L, int idx);
/* Parses spawn options at idx (may be none/nil) for function fn; raises on
 * bad input before anything is created. */
void tend_spawn_parse(lua_State *L, int idx, const char *fn,
                      tend_spawn_opts *o);
/* tend.spawn / ctx:spawn body: factory at 1+off, opts at 2+off. */
int tend_spawn_under(lua_State *L, tend_actor *parent, int off, const char *fn);
void tend_ctx_open(lua_State *L);

/* ---- ltimer.c: timers ---- */
/* Fires every timer due by the host clock. */
void tend_timers_fire_due(tend_host *h);
/* Arms a timer of kind for target a (owner a, may be NULL) after ns;
 * the value at idx (0 for none) is stored in it. Returns it or NULL. */
tend_timer *tend_timer_arm(lua_State *L, tend_host *h, tend_timer_kind kind,
                           tend_actor *a, int64_t ns, int64_t interval,
                           int idx);
/* Disarms and frees t. */
void tend_timer_cancel(lua_State *L, tend_host *h, tend_timer *t);
/* Cancels every timer (shutdown end, close). */
void tend_timers_cancel_all(lua_State *L, tend_host *h);
/* Reads a delay in seconds at idx: number, finite, >= 0 (or > 0 when
 * positive). Raises naming fn/arg otherwise. */
double tend_check_seconds(lua_State *L, int idx, const char *fn,
                          const char *arg, int positive);
void tend_timer_open(lua_State *L);
int tend_l_sleep(lua_State *L);
int tend_l_ctx_after(lua_State *L);
int tend_l_ctx_every(lua_State *L);
int tend_l_after(lua_State *L);

/* ---- backoff_sup.c: backoff supervisors and typed backoff ---- */
/* A backoff timer of kind, set for incarnation tag, fired for a. */
void tend_backoff_timer(lua_State *L, tend_host *h, tend_actor *a,
                        tend_timer_kind kind, uint32_t tag);

/* ---- lerror.c: structured errors ---- */
/* Pushes a new error value {kind, message, traceback=nil}. */
void tend_error_new(lua_State *L, const char *kind, const char *message);
/* Pushes a traceback of L1 from level (luaL_traceback's format). */
void tend_traceback(lua_State *L, lua_State *L1, int level);
/* Message handler for lua_pcall: turns any error into an error value with a
 * traceback. */
int tend_error_handler(lua_State *L);
/* Pushes an InitError wrapping the error value at idx. */
void tend_error_wrap(lua_State *L, int idx, const char *kind,
                     const char *prefix);
/* Pushes "kind: message" for the error value at idx. */
void tend_error_describe(lua_State *L, int idx);
void tend_error_open(lua_State *L);
int tend_l_error(lua_State *L);
int tend_l_raise(lua_State *L);

/* ---- lask.c: ask ---- */
int tend_l_ask(lua_State *L);

/* ---- lbackoff.c: backoff specs ---- */
#define TEND_BACKOFF_SPEC_MT "tend.BackoffSpec"
#define TEND_SUPERVISED_SPEC_MT "tend.SupervisedSpec"
struct tend_backoff_cfg;
/* Is the value at idx a backoff spec? */
int tend_backoff_is_spec(lua_State *L, int idx);
/* Validates the spec at idx into c; raises naming the option for fn. */
void tend_backoff_parse(lua_State *L, int idx, const char *fn,
                        struct tend_backoff_cfg *c);
/* Pushes the words for the spec at idx. */
void tend_backoff_describe(lua_State *L, int idx);
void tend_backoff_open(lua_State *L);
/* Adds backoff_check, backoff_delays, ... to the table at the top. */
void tend_backoff_register(lua_State *L);

/* ---- lstrategy.c: strategies and deciders ---- */
/* Pushes a new tend.stopping strategy. */
void tend_strategy_push_stopping(lua_State *L);
/* The strategy at idx, or NULL. */
const tend_strategy *tend_strategy_test(lua_State *L, int idx);
void tend_strategy_open(lua_State *L);
/* Adds one_for_one, all_for_one, rest_for_one, decider, describe,
 * default_strategy and stopping to the table at the top. */
void tend_strategy_register(lua_State *L);

/* ---- linspect.c: tree, ps, kill, watch ---- */
/* Adds tree, ps, kill, watch and unwatch to the table at the top. */
void tend_inspect_register(lua_State *L);
int tend_l_ctx_watch(lua_State *L);
int tend_l_ctx_unwatch(lua_State *L);

/* ---- lchaos.c: fault injection (tend.chaos) ---- */
/* A send to a under tend.chaos: returns 1 when the filter dropped or held
 * the message (v consumed), 0 to deliver it. */
int tend_chaos_intercept(lua_State *L, tend_host *h, tend_actor *a,
                         tend_value *v, uint32_t sender_id,
                         uint32_t sender_gen);
/* The message at stack index msg is about to reach a: returns 1 when a
 * crash_on rule failed a instead (the message is dropped). */
int tend_chaos_crash_on(lua_State *L, tend_host *h, tend_actor *a, int msg);
/* Adds chaos_* to the table at the top. */
void tend_chaos_register(lua_State *L);

/* ---- lcore.c: the tend.core module ---- */
int luaopen_tend_core(lua_State *L);
/* Pushes sentinel i (1 stopped, 2 unhandled). */
void tend_push_sentinel(lua_State *L, tend_host *h, int i);
/* Installs math.random / math.randomseed on the host generator. */
void tend_random_install(lua_State *L);
/* Reads a type name for error messages. */
const char *tend_typename(lua_State *L, int idx);
/* Raises "fn: option 'opt': expected E, got V" for the value at idx. */
int tend_bad_option(lua_State *L, const char *fn, const char *opt,
                    const char *expected, int idx);
/* The index of s in a NULL-ended list of names, or -1. */
int tend_find_name(const char *const *list, const char *s);
/* Adds ns as seconds without trailing zeros ("60", "1.5") to b. */
void tend_add_seconds(luaL_Buffer *b, lua_State *L, int64_t ns);

/* ---- modules.c (generated): embedded lua/ modules ---- */
void tend_modules_preload(lua_State *L);

#endif
