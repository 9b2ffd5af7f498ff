/* main: the command line (design §2). Parses options, loads the main chunk
 * and runs it as the actor /user/main on the host. */
#include <errno.h>
#include <signal.h>
#include <lauxlib.h>
#include <lualib.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api.h"
#include "cli/forkseeds.h"
#include "cli/repl.h"
#include "runtime/tend.h"

static const char usage[] =
    "usage: tend [options] SCRIPT [ARGS...]   run a script\n"
    "       tend [options] -                  read the script from stdin\n"
    "       tend [options] -e CODE            run CODE\n"
    "       tend [options]                    the REPL (stdin a terminal)\n"
    "       tend [options] -i SCRIPT [ARGS]   run SCRIPT, then the REPL\n"
    "       tend [options] test [PATH...]     run luaunit specs (default: "
    "spec/)\n"
    "       tend scenario FILE [--seed N] [--seeds A..B] [--svg OUT] [--trace "
    "OUT]\n"
    "                     [--only EV,...] [--path /user/x] [-- ARGS...]\n"
    "                                         run a failure scenario (virtual "
    "clock)\n"
    "       tend explore FILE [--seeds A..B | --runs N] [--jobs J] [--shrink]\n"
    "                    [--out DIR] [--max-time S] [-- ARGS...]\n"
    "                                         run a scenario over many seeds,\n"
    "                                         shrink the failures\n"
    "       tend timeline TRACE.jsonl|- [-o OUT.svg]  draw a trace as a "
    "timeline\n"
    "       tend observe TRACE.jsonl [--port [HOST:]PORT]\n"
    "                                         a recorded trace in the "
    "browser,\n"
    "                                         with a time slider\n"
    "       tend cluster N SCRIPT [ARGS...]   N nodes of SCRIPT and a local "
    "nats-server\n"
    "       tend SUBCOMMAND --help            help on test, scenario, "
    "explore,\n"
    "                                         timeline, observe\n"
    "options:\n"
    "  --virtual-time     virtual clock: time jumps to the next timer when no\n"
    "                     actor can run (default for `tend test`)\n"
    "  --real-time        real clock (the default except for `tend test`)\n"
    "  --seed N           seed of every random choice (default: from the "
    "time)\n"
    "  --schedulers N     N schedulers in this process, each with its own\n"
    "                     Lua state (1..64, default 1; a thread each under\n"
    "                     the real clock, turns in order under the virtual)\n"
    "  --log-level LEVEL  error|warn|info|debug (default: warn)\n"
    "  --trace FILE       lifecycle events as JSON lines\n"
    "  --observe [HOST:]PORT  serve the browser observer of the run (or of\n"
    "                     the REPL) on 127.0.0.1:PORT (another host only\n"
    "                     when named); prints its URL, with its token;\n"
    "                     the process stays up after the script, until\n"
    "                     Ctrl-C\n"
    "  --trace-internal   show tend's own tasks (simulated transfers, the\n"
    "                     REPL's watch) in traces and tend.tree()\n"
    "  --copy-messages    deep-copy every message where it is sent (finds\n"
    "                     bugs of shared tables; functions cannot be sent)\n"
    "  --node NAME        run as node NAME (needs --nats)\n"
    "  --nats URL         the NATS server of the nodes: nats://host:port, or\n"
    "                     'local' to start a nats-server child\n"
    "  --node-timeout S   a node is down after S seconds without heartbeat\n"
    "                     (default 15)\n"
    "  --nats-retry       keep trying an unreachable NATS server (backoff)\n"
    "  --version          print the version and exit\n"
    "  --help             print this help and exit\n"
    "exit status: 0 normal end, 1 script error, 2 usage error, 70 an actor\n"
    "stuck where it cannot be preempted (max_message_time)\n";

static const char usage_test[] =
    "usage: tend [options] test [PATH...]\n"
    "Runs luaunit specs inside the host (virtual clock unless --real-time).\n"
    "Each PATH is a spec file or a directory whose *_spec.lua files run;\n"
    "the default is spec/. Prints \"tend test: N passed, M failed\"; exits 1\n"
    "when a spec failed.\n";

static const char usage_scenario[] =
    "usage: tend scenario FILE [options] [-- ARGS...]\n"
    "Runs FILE under the virtual clock, then prints its timeline (one line\n"
    "an event) and a summary. Exits 0 when it passed, 1 when it raised (a\n"
    "failed assert), an invariant failed, nothing could happen any more while\n"
    "it waited, or a failure escalated past the guardian (then it prints\n"
    "`failure: Kind \"name or message\" at t=T`), N when it ended with\n"
    "tend.shutdown(N).\n"
    "  --seed N        the seed of every random choice (default: the time)\n"
    "  --seeds A..B    run each seed from A to B in its own process: one\n"
    "                  line a seed, a failing seed with its reason\n"
    "  --svg OUT       draw the timeline as an SVG file\n"
    "  --trace OUT     write the events as JSON lines\n"
    "  --trace-internal  show tend's own tasks (simulated transfers) too\n"
    "  --only EV,...   show only these events (fail, directive, restart,\n"
    "                  backoff, reset, give_up, terminated, escalate, chaos,\n"
    "                  start, stop, spawn, dead_letter, stash_drop, trace,\n"
    "                  spawn_os, ready, exit)\n"
    "  --path /user/x  show only the events of /user/x and below\n"
    "  --chaos-schedule LIST.lua  every tend.chaos.nemesis applies the list\n"
    "                  of injections LIST.lua returns instead of drawing\n"
    "  -- ARGS...      the rest goes to FILE's `arg` and `...`\n"
    "  --help          print this help\n";

static const char usage_explore[] =
    "usage: tend explore FILE [options] [-- ARGS...]\n"
    "Runs the scenario FILE once per seed (each seed as `tend scenario FILE\n"
    "--seed N` runs it, in parallel processes), prints one line per failing\n"
    "seed and a summary grouped by failure signature. Exits 0 when every\n"
    "seed passed, 1 when one failed, 2 on a bad option.\n"
    "  --seeds A..B    the seeds to run (default 1..100)\n"
    "  --runs N        the seeds 1..N\n"
    "  --jobs J        processes at once (default: the processors)\n"
    "  --shrink        shrink the first failing seed of each signature to\n"
    "                  its fewest nemesis injections: DIR/NAME.seedN.min.lua\n"
    "                  with its trace and timeline\n"
    "  --out DIR       where --shrink writes (default explore-out)\n"
    "  --max-time S    start no seed after S seconds of wall time\n"
    "  -- ARGS...      the rest goes to FILE's `arg` and `...`\n"
    "  --help          print this help\n";

static const char usage_timeline[] =
    "usage: tend timeline TRACE.jsonl|- [-o OUT.svg]\n"
    "Draws a trace (written by --trace) as an SVG timeline: one lane an\n"
    "actor, failures, restarts, backoff waits and freezes. `-` reads the\n"
    "trace from stdin; the default output is TRACE.svg (TRACE's name with\n"
    ".svg for .jsonl; trace.svg for stdin). A truncated trace (a run that\n"
    "was killed) is drawn up to its last good line, with a warning.\n"
    "  -o OUT.svg      where to write the drawing\n"
    "  --help          print this help\n";

static const char usage_observe[] =
    "usage: tend observe TRACE.jsonl [--port [HOST:]PORT]\n"
    "Serves a recorded trace (from --trace, tend scenario, tend explore) to\n"
    "the browser: a time slider and the timeline as its navigator show the\n"
    "tree, each actor's state, restarts and last failure, the nodes and\n"
    "the counters as they were at any instant; buttons step to the next or\n"
    "previous failure, restart or chaos event. Prints its URL, which holds\n"
    "a token: nothing is served without it. Ctrl-C ends it.\n"
    "  --port ADDR     where to listen, [HOST:]PORT (default 127.0.0.1:8642;\n"
    "                  port 0: a free one; another host only when named)\n"
    "  --help          print this help\n";

/* When a subcommand's arguments (before a `--`) ask for help: its usage
 * text, else NULL. */
static const char *subcommand_help(int argc, char **argv, int from,
                                   const char *text) {
  for (int j = from; j < argc && strcmp(argv[j], "--") != 0; j++)
    if (strcmp(argv[j], "--help") == 0 || strcmp(argv[j], "-h") == 0)
      return text;
  return NULL;
}

typedef struct options {
  int virtual_time; /* -1 unset, 0 real, 1 virtual */
  int has_seed;
  uint64_t seed;
  int log_level;            /* -1 unset */
  const char *code;         /* -e CODE */
  const char *script;       /* path, "-" for stdin, NULL */
  int test;                 /* tend test */
  int scenario;             /* tend scenario */
  int timeline;             /* tend timeline */
  int observe;              /* tend observe */
  int explore;              /* tend explore */
  const char *trace;        /* --trace FILE, or NULL */
  const char *observe_at;   /* --observe [HOST:]PORT, or NULL */
  int trace_internal;       /* --trace-internal */
  int interactive;          /* -i: the REPL after the script */
  int copy_messages;        /* --copy-messages */
  int repl;                 /* the REPL alone (a terminal, no script) */
  int first_arg;            /* argv index of the first script argument */
  const char *node;         /* --node NAME, or NULL */
  const char *nats;         /* --nats URL|local, or NULL */
  const char *node_timeout; /* --node-timeout SECONDS, or NULL */
  int nats_retry;           /* --nats-retry */
  int cluster;              /* tend cluster N SCRIPT */
  int schedulers;           /* --schedulers N (1: one) */
  int fork_at;              /* argv index of --fork-seeds, or 0 */
  long long fork_from;      /* its seeds */
  long long fork_to;
  unsigned fork_limit; /* its wall seconds a seed (0: none) */
} options;

static int usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "tend: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n%s", usage);
  va_end(ap);
  return 2;
}

/* As usage_error, with a subcommand's own usage (what its --help says). */
static int sub_usage_error(const char *sub_usage, const char *msg) {
  fprintf(stderr, "tend: %s\n%s", msg, sub_usage);
  return 2;
}

/* Parses argv into o; returns -1 to go on, else an exit status. */
/* --seed's value into o; -1, or usage_error's status. */
static int take_seed(options *o, const char *arg) {
  char *end;
  errno = 0;
  long long v = strtoll(arg, &end, 10);
  if (errno || *end || end == arg)
    return usage_error("--seed: expected an integer, got '%s'", arg);
  o->has_seed = 1;
  o->seed = (uint64_t)v;
  return -1;
}

static int take_schedulers(options *o, const char *arg) {
  char *end;
  errno = 0;
  long v = strtol(arg, &end, 10);
  if (errno || *end || end == arg || v < 1 || v > 64)
    return usage_error("--schedulers: expected an integer 1..64, got '%s'",
                       arg);
  o->schedulers = (int)v;
  return -1;
}

static int take_log_level(options *o, const char *arg) {
  o->log_level = tend_log_parse(arg); /* -1 when unknown */
  if (o->log_level < 0)
    return usage_error("--log-level: expected error|warn|info|debug, got '%s'",
                       arg);
  return -1;
}

/* The host's flags, as data: a switch sets the int at `at` to value; a
 * flag with a value (expected: its words when it is missing) stores the
 * string at `at`, or hands it to take. */
typedef struct cli_flag {
  const char *name;
  const char *expected;                     /* NULL: a switch */
  int value;                                /* a switch's value */
  size_t at;                                /* offsetof in options */
  int (*take)(options *o, const char *arg); /* -1, or an exit status */
} cli_flag;
#define AT(field) offsetof(options, field)
static const cli_flag cli_flags[] = {
    {"--virtual-time", NULL, 1, AT(virtual_time), NULL},
    {"--real-time", NULL, 0, AT(virtual_time), NULL},
    {"--seed", "an integer", 0, 0, take_seed},
    {"--schedulers", "an integer 1..64", 0, 0, take_schedulers},
    {"--log-level", "error|warn|info|debug", 0, 0, take_log_level},
    {"--trace", "a file name", 0, AT(trace), NULL},
    {"--observe", "[HOST:]PORT", 0, AT(observe_at), NULL},
    {"--trace-internal", NULL, 1, AT(trace_internal), NULL},
    {"--copy-messages", NULL, 1, AT(copy_messages), NULL},
    {"--node", "a node name", 0, AT(node), NULL},
    {"--nats", "a nats:// URL or 'local'", 0, AT(nats), NULL},
    {"--node-timeout", "seconds", 0, AT(node_timeout), NULL},
    {"--nats-retry", NULL, 1, AT(nats_retry), NULL},
    {"-e", "Lua code", 0, AT(code), NULL},
    {"-i", NULL, 1, AT(interactive), NULL},
};
#undef AT

/* Reads the flag at argv[*i] (its value too, *i then past it) into o;
 * returns -1, or an exit status (0 after --help or --version). */
static int take_flag(int argc, char **argv, int *i, options *o) {
  const char *a = argv[*i];
  if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
    fputs(usage, stdout);
    return 0;
  }
  if (strcmp(a, "--version") == 0 || strcmp(a, "-v") == 0) {
    printf("tend %s (%s, libuv %s)\n", TEND_VERSION, LUA_RELEASE,
           uv_version_string());
    return 0;
  }
  for (size_t k = 0; k < sizeof cli_flags / sizeof *cli_flags; k++) {
    const cli_flag *f = &cli_flags[k];
    if (strcmp(a, f->name) != 0) continue;
    if (f->expected == NULL) {
      *(int *)((char *)o + f->at) = f->value;
      return -1;
    }
    if (++*i >= argc)
      return usage_error("%s: expected %s, got nothing", a, f->expected);
    if (f->take) return f->take(o, argv[*i]);
    *(const char **)((char *)o + f->at) = argv[*i];
    return -1;
  }
  return usage_error("unknown option '%s'", a);
}

/* The node flags after parse: --node-timeout's value, --node with --nats;
 * -1, or an exit status (tend -i --node x: the node, then the REPL). */
static int check_node_flags(options *o) {
  if (o->node_timeout) {
    char *end;
    errno = 0;
    double t = strtod(o->node_timeout, &end);
    if (errno || *end || end == o->node_timeout || !(t > 0 && t < 1e9))
      return usage_error("--node-timeout: expected seconds > 0, got '%s'",
                         o->node_timeout);
  }
  if (o->node && o->schedulers > 1)
    return usage_error("--schedulers %d with --node: not supported yet",
                       o->schedulers);
  if ((o->nats || o->node_timeout || o->nats_retry) && !o->node)
    return usage_error(
        "--nats, --node-timeout and --nats-retry need --node NAME");
  if (o->node && !o->nats)
    return usage_error("--node %s: expected --nats URL (or --nats local) too",
                       o->node);
  if (o->node &&
      o->repl) { /* tend -i --node x: start the node, then the REPL */
    o->repl = 0;
    o->interactive = 1;
    o->code = "";
  }
  return -1;
}

/* tend scenario FILE ARGS: the host's flags among ARGS (from `from`) into
 * o; -1, or an exit status. */
static int scenario_flags(int argc, char **argv, int from, options *o) {
  /* --seed, --trace and --trace-internal are the host's; the rest goes
   * to the runner (which skips them) */
  for (int j = from; j < argc && strcmp(argv[j], "--") != 0; j++) {
    if (strcmp(argv[j], "--trace-internal") == 0) o->trace_internal = 1;
    if (strcmp(argv[j], "--fork-seeds") == 0) { /* tend explore's batches */
      if (j + 1 >= argc ||
          tend_fork_seeds_parse(argv[j + 1], &o->fork_from, &o->fork_to,
                                &o->fork_limit) != 0)
        return usage_error("--fork-seeds: expected A..B[/LIMIT], got %s",
                           j + 1 < argc ? argv[j + 1] : "nothing");
      o->fork_at = j++;
      continue;
    }
    int seed = strcmp(argv[j], "--seed") == 0;
    if (!seed && strcmp(argv[j], "--trace") != 0) continue;
    if (j + 1 >= argc)
      return usage_error("%s: expected a value, got nothing", argv[j]);
    if (!seed) {
      o->trace = argv[++j];
      continue;
    }
    int status = take_seed(o, argv[++j]);
    if (status >= 0) return status;
  }
  return -1;
}

static int parse(int argc, char **argv, options *o) {
  memset(o, 0, sizeof *o);
  o->virtual_time = -1;
  o->schedulers = 1;
  o->log_level = -1;
  int i = 1;
  for (; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--") == 0) {
      i++;
      break;
    }
    if (a[0] != '-' || a[1] == '\0') break;
    int status = take_flag(argc, argv, &i, o);
    if (status >= 0) return status;
  }
  if (i < argc && !o->code) {
    const char *help = NULL;
    if (strcmp(argv[i], "test") == 0)
      help = subcommand_help(argc, argv, i + 1, usage_test);
    else if (strcmp(argv[i], "scenario") == 0)
      help = subcommand_help(argc, argv, i + 1, usage_scenario);
    else if (strcmp(argv[i], "timeline") == 0)
      help = subcommand_help(argc, argv, i + 1, usage_timeline);
    else if (strcmp(argv[i], "observe") == 0)
      help = subcommand_help(argc, argv, i + 1, usage_observe);
    else if (strcmp(argv[i], "explore") == 0)
      help = subcommand_help(argc, argv, i + 1, usage_explore);
    if (help) {
      fputs(help, stdout);
      return 0;
    }
    if (strcmp(argv[i], "test") == 0) {
      o->test = 1;
    } else if (strcmp(argv[i], "cluster") == 0) {
      o->cluster = 1;
    } else if (strcmp(argv[i], "timeline") == 0) {
      o->timeline = 1;
    } else if (strcmp(argv[i], "observe") == 0) {
      o->observe = 1;
    } else if (strcmp(argv[i], "explore") == 0) {
      o->explore = 1;
      if (i + 1 >= argc)
        return sub_usage_error(usage_explore,
                               "explore: expected a FILE, got nothing");
    } else if (strcmp(argv[i], "scenario") == 0) {
      o->scenario = 1;
      if (i + 1 >= argc)
        return sub_usage_error(usage_scenario,
                               "scenario: expected a FILE, got nothing");
      int status = scenario_flags(argc, argv, i + 2, o);
      if (status >= 0) return status;
    } else {
      o->script = argv[i];
    }
    i++;
  } else if (!o->code) {
    if (isatty(0) || o->interactive)
      o->repl = 1; /* the prompt, no script */
    else
      o->script = "-";
  }
  o->first_arg = i;
  return check_node_flags(o);
}

/* Sets the global `arg` as lua.c does: arg[0] the script, arg[1..] its
 * arguments, negative indices the words before it. */
static void set_arg(lua_State *L, int argc, char **argv, int script) {
  lua_createtable(L, argc - script, script + 1);
  for (int i = 0; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i - script);
  }
  lua_setglobal(L, "arg");
}

/* Pushes the main chunk; returns 0, or 1 after printing a load error. */
static int load_main(lua_State *L, const options *o) {
  int r;
  if (o->test) {
    r = luaL_loadstring(L, "return require('tend.test').run(...)");
  } else if (o->scenario) {
    r = luaL_loadstring(L, "return require('tend.scenario').run(...)");
  } else if (o->timeline) {
    r = luaL_loadstring(L, "return require('tend.timeline').main(...)");
  } else if (o->observe) {
    r = luaL_loadstring(L, "return require('tend.observe.replay').main(...)");
  } else if (o->explore) {
    r = luaL_loadstring(L, "return require('tend.explore').run(...)");
  } else if (o->cluster) {
    r = luaL_loadstring(L, "return require('tend.cluster').run(...)");
  } else if (o->code) {
    r = luaL_loadbuffer(L, o->code, strlen(o->code), "=(command line)");
  } else if (strcmp(o->script, "-") == 0) {
    r = luaL_loadfile(L, NULL);
  } else {
    r = luaL_loadfile(L, o->script);
  }
  if (r != LUA_OK) {
    fprintf(stderr, "tend: %s\n", lua_tostring(L, -1));
    lua_pop(L, 1);
    return 1;
  }
  if (o->observe_at) { /* the observer starts before the chunk runs */
    luaL_loadstring(L,
                    "local chunk = ... return function(...) "
                    "require('tend.observe.live').from_cli() "
                    "return chunk(...) end");
    lua_insert(L, -2);
    lua_call(L, 1, 1);
  }
  if (o->node) { /* the chunk runs once this process is a node */
    luaL_loadstring(L,
                    "local chunk, o = ... return function(...) "
                    "require('tend.nats').start(o) return chunk(...) end");
    lua_insert(L, -2);
    lua_createtable(L, 0, 4);
    lua_pushstring(L, o->node);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, o->nats);
    lua_setfield(L, -2, "nats");
    lua_pushboolean(L, o->nats_retry);
    lua_setfield(L, -2, "retry");
    if (o->node_timeout) {
      lua_pushnumber(L, strtod(o->node_timeout, NULL));
      lua_setfield(L, -2, "timeout");
    }
    lua_call(L, 2, 1);
  }
  return 0;
}

/* The generated module table (build/gen/modules.c): lua/ embedded. */
void tend_modules_preload(lua_State *L);

/* The host's `open` hook: the Lua face and the embedded modules. */
static int open_lua(lua_State *L) {
  tend_api_open(L);
  tend_modules_preload(L);
  return 0;
}

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN); /* a closed stdout is EPIPE: the tree stops */
  /* glibc keeps up to 8 MiB freed at the top of its heap (its default:
   * 128 KiB) rather than giving it back at once: a burst that frees and
   * allocates again (a process's output read as chunks, a table rebuilt)
   * reuses those pages instead of faulting fresh zeroed ones in each time
   * (docs/costs.md, "OS processes"). Setting it stops glibc's own sliding
   * of the mmap threshold, so blocks up to 4 MiB are kept on the heap
   * too, as that sliding would have done after the first was freed. */
  mallopt(M_TRIM_THRESHOLD, 8 << 20);
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
  options o;
  int r = parse(argc, argv, &o);
  if (r >= 0) return r;
  if (o.fork_at > 0) { /* each seed in a child; the runner never sees it */
    memmove(argv + o.fork_at, argv + o.fork_at + 2,
            (size_t)(argc - o.fork_at - 1) * sizeof *argv);
    argc -= 2;
    if (o.first_arg > o.fork_at) o.first_arg -= 2;
    r = tend_fork_seeds(o.fork_from, o.fork_to, o.fork_limit, &o.seed);
    if (r != 1) return r == 0 ? 0 : 1;
    o.has_seed = 1;
  }
  tend_host_config cfg = {
      .virtual_time = o.scenario           ? 1
                      : o.virtual_time < 0 ? o.test
                                           : o.virtual_time,
      .has_seed = o.has_seed,
      .seed = o.seed,
      /* specs fail actors on purpose: only errors are logged there */
      .log_level = (tend_log_level)(o.log_level >= 0 ? o.log_level
                                    : (o.test || o.scenario || o.explore)
                                        ? TEND_LOG_ERROR
                                        : TEND_LOG_WARN),
      .copy_messages = o.copy_messages,
      .drivers = tend_drivers,
      .open = open_lua,
  };
  tend_host *h = tend_host_open(&cfg);
  if (h == NULL) return 1;
  if (tend_schedulers_open(h, o.schedulers) != 0) {
    tend_host_close(h);
    return 2;
  }
  tend_trace_set_internal(h, o.trace_internal);
  if (o.trace) {
    if (tend_trace_open(h, o.trace) != 0) {
      fprintf(stderr, "tend: --trace: cannot open %s: %s\n", o.trace,
              strerror(errno));
      tend_host_close(h);
      return 2;
    }
    char seed[64];
    snprintf(seed, sizeof seed, "seed %llu",
             (unsigned long long)tend_host_seed(h));
    tend_event e = TEND_EVENT_INIT(TEND_EV_TRACE, NULL);
    e.path = "/";
    e.detail = seed;
    tend_event_emit(tend_host_state(h), h, &e);
  }
  lua_State *L = tend_host_state(h);
  if (o.observe_at) { /* read by tend.observe.live.from_cli */
    lua_pushstring(L, o.observe_at);
    lua_setfield(L, LUA_REGISTRYINDEX, "tend.observe.cli");
  }
  int script = o.script ? o.first_arg - 1 : 0;
  set_arg(L, argc, argv, script);
  if (o.repl) {
    int code = tend_repl_start(h) == 0 ? tend_host_run(h) : 1;
    fflush(stdout);
    tend_host_close(h);
    return code;
  }
  if (o.interactive) tend_repl_after_main(h);
  if (load_main(L, &o) != 0) {
    tend_host_close(h);
    return 1;
  }
  lua_createtable(L, argc - o.first_arg, 0); /* the chunk's `...` */
  for (int i = o.first_arg; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i - o.first_arg + 1);
  }
  lua_pushcfunction(L, tend_api_start_main);
  lua_insert(L, -3);
  if (lua_pcall(L, 2, 0, 0) != LUA_OK) {
    fprintf(stderr, "tend: %s\n", lua_tostring(L, -1));
    tend_host_close(h);
    return 1;
  }
  int code = tend_host_run(h);
  fflush(stdout);
  tend_host_close(h);
  return code;
}
