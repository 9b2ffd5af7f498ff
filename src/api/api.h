/* api: what the files of the Lua face (tend.core) share. Each file
 * defines its Lua functions and registers them itself: tend_open_<file>
 * adds its functions to the tend.core table at the top of the stack and
 * creates its metatables. lcore.c calls each of them. */
#ifndef TEND_API_H
#define TEND_API_H

#include <lauxlib.h>
#include <lua.h>

#include "base/backoff.h"
#include "runtime/tend.h"

/* ---- options.c: option tables described as data (one row per option,
 * luaL_checkoption's names-and-values as the model); tend_opts_parse
 * walks the rows and raises tend_bad_option's words for a bad value. */
typedef enum tend_opt_type {
  TEND_OPT_U32,      /* an integer in [min, max], into a uint32_t */
  TEND_OPT_I64,      /* an integer in [min, max], into an int64_t */
  TEND_OPT_BOOL,     /* a boolean, into an int (0 or 1) */
  TEND_OPT_NAME,     /* one of names: values[i] (else i) into an int */
  TEND_OPT_NUMBER,   /* a number in [min, max], into a double */
  TEND_OPT_TABLE,    /* a table; with sub: its keys and options checked */
  TEND_OPT_FUNCTION, /* a function */
  TEND_OPT_CHECK     /* check() tests it (and stores what it makes) */
} tend_opt_type;

enum {
  TEND_OPT_REQUIRED = 1, /* nil is an error: "expected ..., got nil" */
  TEND_OPT_KEEP = 2      /* the value stays on the stack: its index (int)
                            is what is stored */
};

typedef struct tend_opt tend_opt;
/* Checks the option's value at idx (named opt in errors) and stores what
 * it makes into out (TEND_OPT_FIELD), which it may also read: a check
 * between options. */
typedef void (*tend_opt_check)(lua_State *L, int idx, const char *fn,
                               const char *opt, const tend_opt *row, void *out);

/* One option; a table of them ends with a row whose name is NULL. */
struct tend_opt {
  const char *name;         /* its key */
  tend_opt_type type;       /* what it must be */
  const char *expected;     /* the error's words for what it must be */
  unsigned flags;           /* TEND_OPT_REQUIRED, TEND_OPT_KEEP */
  double min, max;          /* U32, I64, NUMBER: the range, both in */
  const char *const *names; /* NAME: the names (NULL-ended) */
  const int *values;        /* NAME: the value of each name (NULL: i) */
  const tend_opt *sub;      /* TABLE: its options, named "name.key" */
  const char *const *keys;  /* TABLE with sub: its keys (NULL-ended) */
  tend_opt_check check;     /* CHECK: the test */
  size_t at;                /* TEND_OPT_AT(struct, field); 0: not stored */
};
#define TEND_OPT_AT(type, field) (offsetof(type, field) + 1)
/* Where row stores into out, as a pointer to type. */
#define TEND_OPT_FIELD(type, row, out) \
  ((type *)(void *)((char *)(out) + (row)->at - 1))

/* Reads the options of rows from the table at t, in the rows' order, into
 * out; a nil one is left as out has it (unless TEND_OPT_REQUIRED). prefix
 * goes before each option's name in errors ("" at the top level). Pushes
 * the TEND_OPT_KEEP values, in order; raises at the first bad option. */
void tend_opts_parse(lua_State *L, int t, const tend_opt *rows, const char *fn,
                     const char *prefix, void *out);
/* Raises tend_bad_option for row (its expected words) with the value at
 * idx, named opt. */
int tend_opt_bad(lua_State *L, const char *fn, const char *opt,
                 const tend_opt *row, int idx);
/* A CHECK: an actor's name (tend_check_actor_name); stores nothing. */
void tend_opt_actor_name(lua_State *L, int idx, const char *fn, const char *opt,
                         const tend_opt *row, void *out);

/* ---- check.c: each raises "fn: ..." naming what was expected and given */
/* The ref at idx, or an error naming argument arg of function fn. */
tend_ref *tend_check_ref(lua_State *L, int idx, const char *fn,
                         const char *arg);
/* A delay in seconds at idx: a number, not NaN, >= 0 (> 0 when positive). */
double tend_check_seconds(lua_State *L, int idx, const char *fn,
                          const char *arg, int positive);
/* Raises "fn: option 'opt': expected E, got V" for the value at idx. */
int tend_bad_option(lua_State *L, const char *fn, const char *opt,
                    const char *expected, int idx);
/* Pushes "fn: unknown option 'K' (expected one of: ...)" for the key at k,
 * with ": did you mean 'x'?" when a key of keys (NULL-ended) is close. */
void tend_push_unknown_option(lua_State *L, int k, const char *const *keys,
                              const char *fn, const char *prefix);
/* Raises unless every key of the table at t is in keys (NULL-ended). */
void tend_check_keys(lua_State *L, int t, const char *const *keys,
                     const char *fn, const char *prefix);
/* Pushes s as a Lua literal: quoted, control bytes escaped ("a\0b"), cut
 * after 80 bytes ("..."). */
void tend_push_quoted(lua_State *L, const char *s, size_t len);
/* The string at idx (or NULL when it is none), or an error "fn: what:
 * expected a string without NUL bytes, got "a\0b"" when it holds one: the
 * OS, which takes C strings, would see only the part before it. */
const char *tend_check_no_nul(lua_State *L, int idx, const char *fn,
                              const char *what);
/* Raises unless the value at idx can name an actor: a step of its path. */
void tend_check_actor_name(lua_State *L, int idx, const char *fn,
                           const char *opt);
/* The index of s in a NULL-ended list of names, or -1. */
int tend_find_name(const char *const *list, const char *s);
/* Adds ns as seconds without trailing zeros ("60", "1.5") to b. */
void tend_add_seconds(luaL_Buffer *b, lua_State *L, int64_t ns);
/* Parses spawn options at idx (may be none/nil) for function fn; raises on
 * bad input before anything is created. Values it points at by stack
 * index are left on the stack. */
void tend_spawn_parse(lua_State *L, int idx, const char *fn,
                      tend_spawn_opts *o);

/* ---- lnames.c */
/* The actor at idx: a ref, a registered name or a path. Raises (naming fn
 * and arg) for another type, and, when must_live, for one that names no
 * live actor; else returns NULL for those. */
tend_actor *tend_check_target(lua_State *L, int idx, const char *fn,
                              const char *arg, int must_live);

/* ---- lctx.c */
/* The actor whose ctx is at idx, or an error. */
tend_actor *tend_check_ctx(lua_State *L, int idx);
/* The same, for the method fn ("ctx:spawn"): a ctx works only inside its
 * own actor (its behavior, hooks, factory and the coroutines they run);
 * from anywhere else it raises "fn called outside its actor (path);
 * running: path". */
tend_actor *tend_check_own_ctx(lua_State *L, int idx, const char *fn);
/* Adds fns to the methods of ctx (each file registers its own). */
void tend_ctx_add_methods(lua_State *L, const luaL_Reg *fns);

/* ---- lspawn.c */
/* tend.spawn / ctx:spawn body: factory or spec at 1+off, opts at 2+off;
 * pushes the ref. */
int tend_spawn_under(lua_State *L, tend_actor *parent, int off, const char *fn);

/* ---- strategies (lstrategy.c makes them) */
#define TEND_STRATEGY_MT "tend.Strategy"
/* The strategy at idx, or NULL. */
static inline const tend_strategy *tend_strategy_test(lua_State *L, int idx) {
  return luaL_testudata(L, idx, TEND_STRATEGY_MT);
}
/* Pushes the decider of the strategy at idx and returns its index, or
 * returns 0 (nothing pushed) when it has none. */
static inline int tend_strategy_push_decider(lua_State *L, int idx) {
  if (lua_getiuservalue(L, idx, 1) == LUA_TNIL) {
    lua_pop(L, 1);
    return 0;
  }
  return lua_gettop(L);
}

/* ---- lbackoff.c, ltyped.c: specs, spawned by tend_spawn_under */
int tend_backoff_is_spec(lua_State *L, int idx);
/* Pushes the words for the backoff spec at idx (tend.describe). */
void tend_backoff_describe(lua_State *L, int idx);
/* Adds "; delays ..." (the first delays of d, its jitter) to b. */
void tend_backoff_add_delays(luaL_Buffer *b, lua_State *L,
                             const tend_delay_cfg *d);
/* Adds "; reset after N s of running (...)", with its trap, to b. */
void tend_backoff_add_reset(luaL_Buffer *b, lua_State *L, int64_t ns);
/* Pushes the words for the typed action at idx (tend.restart_with_backoff
 * and the others) and returns 1; 0 (nothing pushed) when it is none. */
int tend_typed_describe(lua_State *L, int idx);
int tend_backoff_spawn_spec(lua_State *L, tend_actor *parent, int off,
                            const char *fn);
int tend_typed_is_spec(lua_State *L, int idx);
int tend_typed_spawn_spec(lua_State *L, tend_actor *parent, int off,
                          const char *fn);

/* ---- lprocess_check.c: the options of tend.process, for lprocess.c */
/* core.process_check(opts, fn [, cmd]) -> spec (raises on a bad option). */
int tend_process_check(lua_State *L);
/* The names of the output modes (values of the stdout, stderr options). */
extern const char *const tend_process_outputs[];
/* "ENOENT", "EACCES", ... for an errno. */
const char *tend_errno_name(int e);

/* ---- the open functions, one per file */
void tend_open_ref(lua_State *L);           /* lref.c */
void tend_open_ctx(lua_State *L);           /* lctx.c */
void tend_open_spawn(lua_State *L);         /* lspawn.c */
void tend_open_timer(lua_State *L);         /* ltimer.c */
void tend_open_ask(lua_State *L);           /* lask.c */
void tend_open_error(lua_State *L);         /* lerror.c */
void tend_open_strategy(lua_State *L);      /* lstrategy.c */
void tend_open_backoff(lua_State *L);       /* lbackoff.c */
void tend_open_typed(lua_State *L);         /* ltyped.c */
void tend_open_inspect(lua_State *L);       /* linspect.c */
void tend_open_survey(lua_State *L);        /* lsurvey.c */
void tend_open_schedpg(lua_State *L);       /* lschedpg.c */
void tend_open_chaos(lua_State *L);         /* lchaos.c */
void tend_open_invariant(lua_State *L);     /* linvariant.c */
void tend_open_hostlib(lua_State *L);       /* lhost.c */
void tend_open_receive(lua_State *L);       /* lreceive.c */
void tend_open_names(lua_State *L);         /* lnames.c */
void tend_open_children(lua_State *L);      /* lchildren.c */
void tend_open_stash(lua_State *L);         /* lstash.c */
void tend_open_backoff_query(lua_State *L); /* lbackoff_query.c */
void tend_open_code(lua_State *L);          /* lcode.c */
void tend_open_process(lua_State *L);       /* lprocess.c */
void tend_open_tcp(lua_State *L);           /* ltcp.c */
void tend_open_codec(lua_State *L);         /* lcodec.c */
void tend_open_http(lua_State *L);          /* lhttp.c */
void tend_open_http_server(lua_State *L);   /* lhttp_server.c */
void tend_open_stream(lua_State *L);        /* lstream.c */
void tend_open_remote(lua_State *L);        /* lremote.c */
void tend_open_nats(lua_State *L);          /* lnats.c */
void tend_open_simnodes(lua_State *L);      /* lsimnodes.c */
void tend_open_fiber(lua_State *L);         /* lfiber.c */

/* ---- lspawn.c */
/* A lua_CFunction: spawns the chunk at 1 as /user/main, a task, with the
 * list at 2 as its arguments (both popped). */
int tend_api_start_main(lua_State *L);

/* ---- lcore.c */
/* Opens the Lua face on a new host's state (the host's `open` hook):
 * metatables, math.random on the host generator, and package.preload
 * entries for tend.core and tend.internal. */
int tend_api_open(lua_State *L);
int luaopen_tend_core(lua_State *L);
/* tend.internal: what only the test runner, the scenario runner, the
 * benchmarks and the REPL use (linternal.c). */
int luaopen_tend_internal(lua_State *L);

#endif
