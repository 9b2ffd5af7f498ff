/* lbackoff: backoff specs from Lua, validated here (design §3.4, §5.5).
 * A spec is a table with metatable "tend.BackoffSpec" (made by the builders
 * in lua/tend/backoff.lua, or tend.backoff{...}); tend.spawn(spec) checks it
 * with tend_backoff_parse and starts a backoff supervisor (backoff_sup.c).
 * Also: tend.backoff.delays, describe for specs, and the delay generator
 * behind tend.retry. */
#include <math.h>
#include <string.h>

#include "api/api.h"
#include "base/backoff.h"

#define TEND_BACKOFF_SPEC_MT "tend.BackoffSpec"

#define DELAYS_MT "tend.Delays"

static const char *const spec_keys[] = {"mode",
                                        "factory",
                                        "name",
                                        "args",
                                        "min_backoff",
                                        "max_backoff",
                                        "random_factor",
                                        "algorithm",
                                        "jitter",
                                        "slot_time",
                                        "ceiling",
                                        "stay_at_ceiling",
                                        "reset",
                                        "reset_after",
                                        "max_retries",
                                        "supervisor_strategy",
                                        "reply_while_stopped",
                                        "handler_while_stopped",
                                        "stash",
                                        "final_stop_message",
                                        "default_stopping_strategy",
                                        NULL};
static const char *const jitters[] = {"akka",         "capped", "full", "equal",
                                      "decorrelated", "none",   NULL};

/* Reads seconds at field k (> 0, or >= 0 for the delays, finite); def
 * when absent (-1: required). */
static int64_t seconds(lua_State *L, int t, const char *k, const char *fn,
                       double def) {
  int zero = strcmp(k, "min_backoff") == 0 || strcmp(k, "max_backoff") == 0;
  int ty = lua_getfield(L, t, k);
  double s = def;
  if (ty != LUA_TNIL) {
    s = ty == LUA_TNUMBER ? lua_tonumber(L, -1) : -1;
    if (zero && !(s >= 0))
      tend_bad_option(L, fn, k, "a number of seconds >= 0", -1);
    if ((!zero && !(s > 0)) || isinf(s))
      tend_bad_option(L, fn, k, "a number of seconds > 0", -1);
    if (s > TEND_MAX_SECONDS)
      tend_bad_option(L, fn, k, "a number of seconds <= 1e9", -1);
  } else if (def < 0) {
    luaL_error(L, "%s: option '%s' is required (a number of seconds %s)", fn, k,
               zero ? ">= 0" : "> 0");
  }
  lua_pop(L, 1);
  int64_t ns = tend_clock_ns(s);
  return ns > 0 || (zero && s == 0) ? ns : 1;
}

/* TEND_OPT_NAME stores an int: the enums it fills must be that size. */
_Static_assert(sizeof(tend_backoff_algorithm) == sizeof(int), "int-sized");
_Static_assert(sizeof(tend_jitter) == sizeof(int), "int-sized");
_Static_assert(sizeof(tend_backoff_mode) == sizeof(int), "int-sized");
static const char *const algorithms[] = {"exponential", "slotted", NULL};

#define AT(field) TEND_OPT_AT(tend_delay_cfg, field)
static const tend_opt delay_opts[] = {
    {"algorithm", TEND_OPT_NAME, "\"exponential\" or \"slotted\"",
     .names = algorithms, .at = AT(algorithm)},
    {"jitter", TEND_OPT_NAME,
     "\"akka\", \"capped\", \"full\", \"equal\", \"decorrelated\" or "
     "\"none\"",
     .names = jitters, .at = AT(jitter)},
    {NULL}};
static const tend_opt slotted_opts[] = {
    {"ceiling", TEND_OPT_U32, "an integer in 1..62", .min = 1, .max = 62,
     .at = AT(ceiling)},
    {"stay_at_ceiling", TEND_OPT_BOOL, "a boolean", .at = AT(stay_at_ceiling)},
    {NULL}};
static const tend_opt random_opts[] = {
    {"random_factor", TEND_OPT_NUMBER, "a number in [0, 1]", .min = 0, .max = 1,
     .at = AT(random_factor)},
    {NULL}};
#undef AT

/* Parses the delay options of the table at t into c. */
static void parse_delays(lua_State *L, int t, const char *fn,
                         tend_delay_cfg *c) {
  memset(c, 0, sizeof *c);
  c->ceiling = 10;
  tend_opts_parse(L, t, delay_opts, fn, "", c);
  if (c->algorithm == TEND_ALG_SLOTTED) {
    c->slot_ns = seconds(L, t, "slot_time", fn, -1);
    tend_opts_parse(L, t, slotted_opts, fn, "", c);
    c->min_ns = seconds(L, t, "min_backoff", fn, (double)c->slot_ns / 1e9);
    c->max_ns = seconds(L, t, "max_backoff", fn, (double)c->min_ns / 1e9);
  } else {
    c->min_ns = seconds(L, t, "min_backoff", fn, -1);
    c->max_ns = seconds(L, t, "max_backoff", fn, -1);
    if (c->max_ns < c->min_ns) {
      lua_getfield(L, t, "max_backoff");
      lua_getfield(L, t, "min_backoff");
      luaL_error(L,
                 "%s: option 'max_backoff': expected a number >= min_backoff "
                 "(%s), got %s",
                 fn, lua_tostring(L, -1), lua_tostring(L, -2));
    }
  }
  tend_opts_parse(L, t, random_opts, fn, "", c);
}

int tend_backoff_is_spec(lua_State *L, int idx) {
  if (!lua_istable(L, idx) || !lua_getmetatable(L, idx)) return 0;
  luaL_getmetatable(L, TEND_BACKOFF_SPEC_MT);
  int same = lua_rawequal(L, -1, -2);
  lua_pop(L, 2);
  return same;
}

static void check_strategy(lua_State *L, int idx, const char *fn,
                           const char *opt, const tend_opt *row, void *out) {
  (void)out;
  if (!tend_strategy_test(L, idx)) tend_opt_bad(L, fn, opt, row, idx);
}

/* Any value given sets the field (reply_while_stopped: the reply). */
static void check_given(lua_State *L, int idx, const char *fn, const char *opt,
                        const tend_opt *row, void *out) {
  (void)L, (void)idx, (void)fn, (void)opt;
  *TEND_OPT_FIELD(int, row, out) = 1;
}

static void check_handler(lua_State *L, int idx, const char *fn,
                          const char *opt, const tend_opt *row, void *out) {
  const tend_backoff_cfg *c = out;
  if (tend_ref_test(L, idx) == NULL) tend_opt_bad(L, fn, opt, row, idx);
  if (c->stash || c->reply_while_stopped)
    luaL_error(L,
               "%s: option 'handler_while_stopped' excludes 'stash' and "
               "'reply_while_stopped'",
               fn);
  *TEND_OPT_FIELD(int, row, out) = 1;
}

static void check_final_stop(lua_State *L, int idx, const char *fn,
                             const char *opt, const tend_opt *row, void *out) {
  const tend_backoff_cfg *c = out;
  if (c->mode != TEND_BACKOFF_ON_STOP)
    luaL_error(L, "%s: option 'final_stop_message' is for on_stop only", fn);
  if (!lua_isfunction(L, idx)) tend_opt_bad(L, fn, opt, row, idx);
  *TEND_OPT_FIELD(int, row, out) = 1;
}

static const char *const modes[] = {"on_failure", "on_stop", NULL};
static const char *const resets[] = {"auto", "manual", NULL};

/* The options of a spec, in the order they are checked: the delays
 * (parse_delays) and reset_after (its default is min_backoff) between the
 * first rows and the next. */
#define AT(field) TEND_OPT_AT(tend_backoff_cfg, field)
static const tend_opt spec_head[] = {
    {"mode", TEND_OPT_NAME, "\"on_failure\" or \"on_stop\"", TEND_OPT_REQUIRED,
     .names = modes, .at = AT(mode)},
    {"factory", TEND_OPT_FUNCTION, "a function", .flags = TEND_OPT_REQUIRED},
    {"name", TEND_OPT_CHECK, .check = tend_opt_actor_name},
    {"args", TEND_OPT_TABLE, "a table (list)", .flags = 0},
    {NULL}};
static const tend_opt spec_restarts[] = {
    {"max_retries", TEND_OPT_I64, "an integer >= -1", .min = -1, .max = 0x1p63,
     .at = AT(max_retries)},
    {"reset", TEND_OPT_NAME, "\"auto\" or \"manual\"", .names = resets,
     .at = AT(manual_reset)},
    {NULL}};
static const tend_opt spec_stopped[] = {
    {"supervisor_strategy", TEND_OPT_CHECK,
     "a strategy (tend.one_for_one{...}, ...)", .check = check_strategy},
    {"reply_while_stopped", TEND_OPT_CHECK, .check = check_given,
     .at = AT(reply_while_stopped)},
    {"stash", TEND_OPT_U32, "an integer >= 1", .min = 1, .max = UINT32_MAX,
     .at = AT(stash)},
    {NULL}};
static const tend_opt spec_tail[] = {
    {"handler_while_stopped", TEND_OPT_CHECK, "an actor ref",
     .check = check_handler, .at = AT(handler_while_stopped)},
    {"final_stop_message", TEND_OPT_CHECK, "a function(msg) -> boolean",
     .check = check_final_stop, .at = AT(final_stop)},
    {"default_stopping_strategy", TEND_OPT_BOOL, "a boolean",
     .at = AT(default_stopping)},
    {NULL}};
#undef AT

/* Validates the spec at t into c; raises naming the option for fn. */
static void parse(lua_State *L, int t, const char *fn, tend_backoff_cfg *c) {
  t = lua_absindex(L, t);
  memset(c, 0, sizeof *c);
  tend_check_keys(L, t, spec_keys, fn, "");
  tend_opts_parse(L, t, spec_head, fn, "", c);
  parse_delays(L, t, fn, &c->delays);
  c->max_retries = -1;
  tend_opts_parse(L, t, spec_restarts, fn, "", c);
  c->reset_after_ns =
      seconds(L, t, "reset_after", fn, (double)c->delays.min_ns / 1e9);
  tend_opts_parse(L, t, spec_stopped, fn, "", c);
  if (c->stash && c->reply_while_stopped)
    luaL_error(
        L, "%s: options 'stash' and 'reply_while_stopped' exclude each other",
        fn);
  tend_opts_parse(L, t, spec_tail, fn, "", c);
  if (c->default_stopping && c->mode != TEND_BACKOFF_ON_STOP)
    luaL_error(L, "%s: option 'default_stopping_strategy' is for on_stop only",
               fn);
}

/* core.backoff_check(spec) -> true | false, message (for the builders) */
static int check_protected(lua_State *L) {
  tend_backoff_cfg c;
  parse(L, 1, lua_tostring(L, 2), &c);
  return 0;
}

static int l_backoff_check(lua_State *L) {
  lua_pushcfunction(L, check_protected);
  lua_pushvalue(L, 1);
  lua_pushvalue(L, 2);
  if (lua_pcall(L, 2, 0, 0) == LUA_OK) {
    lua_pushboolean(L, 1);
    return 1;
  }
  lua_pushboolean(L, 0);
  lua_insert(L, -2);
  return 2;
}

/* ------------------------------------------------------------ delays */

typedef struct delays {
  tend_delay_cfg cfg;
  tend_delay_state state;
} delays;

/* core.backoff_delays(opts, n) -> {d1, ..., dn} in seconds; drawn from a
 * copy of the host's generator, so the running system is not disturbed. */
static int l_backoff_delays(lua_State *L) {
  tend_host *h = tend_host_of(L);
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_Integer n = luaL_checkinteger(L, 2);
  if (n < 0 || n > 1000000)
    luaL_error(
        L, "tend.backoff.delays: n: expected an integer in 0..1000000, got %I",
        n);
  tend_delay_cfg c;
  parse_delays(L, 1, "tend.backoff.delays", &c);
  tend_delay_state s;
  tend_delay_reset(&c, &s);
  tend_rng copy = *tend_host_rng(h);
  lua_createtable(L, (int)n, 0);
  for (lua_Integer i = 1; i <= n; i++) {
    double draw;
    lua_pushnumber(L, (double)tend_delay_next(&c, &s, &copy, &draw) / 1e9);
    lua_rawseti(L, -2, i);
  }
  return 1;
}

/* core.backoff_delay_generator(opts) -> g; g:next() -> seconds, draw;
 * g:reset(). Draws from the host's generator (tend.retry). */
static int l_delay_generator(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  delays *d = lua_newuserdatauv(L, sizeof *d, 0);
  parse_delays(L, 1, lua_isstring(L, 2) ? lua_tostring(L, 2) : "tend.retry",
               &d->cfg);
  tend_delay_reset(&d->cfg, &d->state);
  luaL_setmetatable(L, DELAYS_MT);
  return 1;
}

static int l_delays_next(lua_State *L) {
  delays *d = luaL_checkudata(L, 1, DELAYS_MT);
  double draw;
  int64_t ns = tend_delay_next(&d->cfg, &d->state,
                               tend_host_rng(tend_host_of(L)), &draw);
  lua_pushnumber(L, (double)ns / 1e9);
  lua_pushnumber(L, draw);
  return 2;
}

static int l_delays_reset(lua_State *L) {
  delays *d = luaL_checkudata(L, 1, DELAYS_MT);
  tend_delay_reset(&d->cfg, &d->state);
  return 0;
}

/* ------------------------------------------------------------ describe */

void tend_backoff_add_delays(luaL_Buffer *b, lua_State *L,
                             const tend_delay_cfg *d) {
  luaL_addstring(b, "; delays ");
  if (d->algorithm == TEND_ALG_SLOTTED) {
    luaL_addstring(b,
                   "slot_time * (2^e - 1), e drawn in [0, slot], slot_time ");
    tend_add_seconds(b, L, d->slot_ns);
    lua_pushfstring(
        L, " s, ceiling %d%s", (int)d->ceiling,
        d->stay_at_ceiling ? " (stays there)" : " (then back to slot 1)");
    luaL_addvalue(b);
  } else {
    tend_delay_state s;
    tend_delay_reset(d, &s);
    int64_t prev = -1;
    for (int i = 0; i < 12; i++) {
      int64_t base = d->min_ns;
      for (uint32_t k = 0; k < s.n && base < d->max_ns; k++) base *= 2;
      if (base > d->max_ns) base = d->max_ns;
      s.n++;
      if (base == prev) break;
      if (i) luaL_addstring(b, ", ");
      tend_add_seconds(b, L, base);
      prev = base;
    }
    luaL_addstring(b, " s");
    if (d->jitter == TEND_JITTER_AKKA || d->jitter == TEND_JITTER_CAPPED) {
      if (d->random_factor > 0) {
        lua_pushfstring(L, " +0-%d %%", (int)(d->random_factor * 100 + 0.5));
        luaL_addvalue(b);
        if (d->jitter == TEND_JITTER_CAPPED)
          luaL_addstring(b, " (capped at the maximum)");
      }
    } else if (d->jitter != TEND_JITTER_NONE) {
      lua_pushfstring(L, " with %s jitter", tend_jitter_name(d->jitter));
      luaL_addvalue(b);
    }
  }
}

void tend_backoff_add_reset(luaL_Buffer *b, lua_State *L, int64_t ns) {
  luaL_addstring(b, "; reset after ");
  tend_add_seconds(b, L, ns);
  luaL_addstring(b,
                 " s of running (a child that usually runs longer "
                 "before it fails restarts after the first delay "
                 "every time: the delay never grows)");
}

void tend_backoff_describe(lua_State *L, int idx) {
  tend_backoff_cfg c;
  parse(L, idx, "tend.describe", &c);
  const tend_delay_cfg *d = &c.delays;
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addstring(&b,
                 c.mode == TEND_BACKOFF_ON_FAILURE
                     ? "backoff on failure: restart the child after a failure"
                     : "backoff on stop: restart the child whenever it stops");
  tend_backoff_add_delays(&b, L, d);
  if (c.max_retries >= 0) {
    lua_pushfstring(L, "; at most %I restarts, then stop",
                    (lua_Integer)c.max_retries);
    luaL_addvalue(&b);
  }
  if (c.manual_reset) {
    luaL_addstring(&b, "; reset when the child calls ctx:reset_backoff()");
  } else {
    tend_backoff_add_reset(&b, L, c.reset_after_ns);
  }
  if (c.stash) {
    lua_pushfstring(L, "; while stopped, stash up to %d messages",
                    (int)c.stash);
    luaL_addvalue(&b);
  } else if (c.reply_while_stopped) {
    luaL_addstring(&b, "; while stopped, answer with a fixed reply");
  } else if (c.handler_while_stopped) {
    luaL_addstring(&b, "; while stopped, messages go to a handler");
  } else {
    luaL_addstring(&b, "; while stopped, messages go to dead letters");
  }
  luaL_pushresult(&b);
}

/* core.backoff_mt(): the spec metatable, for the Lua builders to add their
 * methods to. */
static int l_backoff_mt(lua_State *L) {
  luaL_getmetatable(L, TEND_BACKOFF_SPEC_MT);
  return 1;
}

/* Pushes field k of the spec at t; returns its index (0 and nothing
 * pushed when it is nil). */
static int field(lua_State *L, int t, const char *k) {
  if (lua_getfield(L, t, k) != LUA_TNIL) return lua_gettop(L);
  lua_pop(L, 1);
  return 0;
}

int tend_backoff_spawn_spec(lua_State *L, tend_actor *parent, int off,
                            const char *fn) {
  tend_host *h = tend_host_of(L);
  int spec = 1 + off;
  lua_settop(L, 2 + off);
  tend_backoff_cfg cfg;
  parse(L, spec, fn, &cfg);
  tend_spawn_opts o;
  tend_spawn_parse(L, 2 + off, fn, &o);
  if (o.strategy)
    luaL_error(L,
               "%s: option '%s': a backoff supervisor's strategy for its "
               "child is set with with_supervisor_strategy",
               fn,
               lua_getfield(L, 2 + off, "children") != LUA_TNIL ? "children"
                                                                : "supervisor");
  tend_backoff_child child = {0, 0, 0, 0, 0, 0, NULL, 0};
  child.handler = field(L, spec, "handler_while_stopped");
  child.factory = field(L, spec, "factory");
  child.args = field(L, spec, "args");
  child.name = field(L, spec, "name");
  child.reply = field(L, spec, "reply_while_stopped");
  if (child.reply && tend_host_copies(h) && tend_copy_needed(L, child.reply)) {
    lua_pushfstring(L, "%s: option 'reply_while_stopped': ", fn);
    tend_copy_in_place(L, h, child.reply, lua_tostring(L, -1));
    lua_pop(L, 1); /* copyable: each reply is a copy of it */
  }
  child.final_stop = field(L, spec, "final_stop_message");
  int strategy = field(L, spec, "supervisor_strategy");
  if (strategy) {
    child.strategy = tend_strategy_test(L, strategy);
    child.decider = tend_strategy_push_decider(L, strategy);
  }
  tend_actor *a = tend_backoff_spawn(L, h, parent, &cfg, &child, &o, fn);
  if (o.stash) tend_stash_enable(L, a, o.stash); /* before it starts */
  return 1;
}

void tend_open_backoff(lua_State *L) {
  static const luaL_Reg fns[] = {{"backoff_check", l_backoff_check},
                                 {"backoff_delays", l_backoff_delays},
                                 {"backoff_delay_generator", l_delay_generator},
                                 {"backoff_mt", l_backoff_mt},
                                 {NULL, NULL}};
  static const luaL_Reg methods[] = {
      {"next", l_delays_next}, {"reset", l_delays_reset}, {NULL, NULL}};
  luaL_newmetatable(L, TEND_BACKOFF_SPEC_MT);
  lua_pop(L, 1);
  luaL_newmetatable(L, DELAYS_MT);
  luaL_newlib(L, methods);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
  luaL_setfuncs(L, fns, 0);
}
