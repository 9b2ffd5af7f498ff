/* repl: the interactive prompt on the event loop (design §2). GNU
 * readline's callback interface is fed by a uv_poll on stdin, so actors and
 * timers run between keystrokes. A line goes to lua/tend/repl.lua, which
 * compiles it (lua.c's rules: an expression prints its values, an
 * incomplete chunk continues on the next line) and hands it to the task
 * /user/repl, which waits for lines in next_line() (a promise this file
 * answers); while it runs the prompt is away, and when it is done the
 * task calls done() and the prompt comes back. Lines never go through the
 * task's mailbox: messages sent to /user/repl wait there for tend.receive
 * or flush(), as in the Erlang shell. Should the task stop (a chunk that
 * stops it), a new one is spawned at the end of the pump pass. Output
 * written while the prompt shows is printed above it and the line being
 * edited is redrawn. */
#include "cli/repl.h"

#include <lauxlib.h>
#include <readline/history.h>
#include <readline/readline.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROMPT "> "
#define MORE_PROMPT ">> "
#define MAX_COMPLETIONS 512

typedef struct repl {
  uv_poll_t poll;                     /* stdin readable */
  int prompting;                      /* the readline handler is installed */
  int evaluating;                     /* a chunk runs in /user/repl */
  int more;                           /* the pending chunk is incomplete */
  int closed;                         /* Ctrl-D or shutdown: no more input */
  char history[1024];                 /* ~/.tend_history, or "" */
  int history_reported;               /* a history write failure was reported */
  char *matches[MAX_COMPLETIONS + 1]; /* completion candidates */
  int n_matches;
  uint32_t actor_id, actor_gen; /* the task /user/repl, which runs lines */
  uint32_t line_id, line_gen;   /* the promise it waits on for a line */
  int pending_ref;              /* a line's chunk the task has not asked for yet
                                   (registry ref owned here, released when it is
                                   taken or dropped; LUA_NOREF when none) */
  int loop_ref; /* the task's function (tend.repl's loop; registry ref
                   owned here, it goes with the state) */
} repl;

static tend_host *host; /* readline callbacks carry no user data */

static repl *R(const tend_host *h) {
  return tend_host_front((tend_host *)h)->data;
}

/* Calls tend.repl.<fn>(arg) protected, arg a string or (fns) the table at
 * the top; pushes its nres results (nils on an error, which is
 * reported). */
static void call_lua(lua_State *L, const char *fn, const char *arg, int nres) {
  int top = lua_gettop(L);
  lua_getglobal(L, "require");
  lua_pushliteral(L, "tend.repl");
  int ok = lua_pcall(L, 1, 1, 0) == LUA_OK;
  if (ok) {
    lua_getfield(L, -1, fn);
    lua_remove(L, -2);
    if (arg) lua_pushstring(L, arg);
    ok = lua_pcall(L, arg ? 1 : 0, nres, 0) == LUA_OK;
  }
  if (!ok) {
    fprintf(stderr, "tend: repl: %s\n", lua_tostring(L, -1));
    lua_settop(L, top);
    for (int i = 0; i < nres; i++) lua_pushnil(L);
  }
}

static void on_line(char *line);

/* The live task that runs the lines, or NULL. */
static tend_actor *task(tend_host *h, const repl *r) {
  return tend_actor_live(h, r->actor_id, r->actor_gen);
}

/* [1] the loop function: spawns it as the task /user/repl; pushes its
 * ref. */
static int spawn_task(lua_State *L) {
  tend_host *h = tend_host_of(L);
  lua_pushliteral(L, "repl");
  tend_actor_check_spawn(L, h, tend_host_user(h), 2, "repl");
  tend_spawn_opts so;
  tend_spawn_opts_init(&so);
  so.name = 2;
  so.task = 1;
  tend_actor *a = tend_actor_spawn(L, h, tend_host_user(h), 1, &so);
  repl *r = R(h);
  r->actor_id = tend_actor_id(a);
  r->actor_gen = tend_actor_gen(a);
  return 1;
}

/* Spawns the task that runs the lines; 0, or -1 (said on stderr). */
static int start_task(tend_host *h, repl *r) {
  lua_State *L = tend_host_state(h);
  if (tend_host_user(h) == NULL) return -1;
  lua_pushcfunction(L, spawn_task);
  lua_rawgeti(L, LUA_REGISTRYINDEX, r->loop_ref);
  if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
    fprintf(stderr, "tend: repl: %s\n", lua_tostring(L, -1));
    lua_pop(L, 1);
    return -1;
  }
  return 0;
}

/* The chunk at the top (popped) goes to the task: to the line it waits
 * for, or kept until it asks. Returns 1 when it will run. */
static int deliver(tend_host *h, repl *r) {
  lua_State *L = tend_host_state(h);
  if (task(h, r) == NULL) {
    lua_pop(L, 1);
    fputs("the REPL's task is gone; the line cannot run\n", stdout);
    return 0;
  }
  tend_promise *p = tend_promise_live(h, r->line_id, r->line_gen);
  tend_value v;
  if (p && tend_value_store(L, h, -1, &v) == 0) {
    lua_pop(L, 1);
    if (!tend_promise_resolve(L, h, p, v)) tend_value_drop(L, h, &v);
    r->line_id = r->line_gen = 0;
    return 1;
  }
  luaL_unref(L, LUA_REGISTRYINDEX, r->pending_ref);
  r->pending_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  return 1;
}

/* Shows the prompt (readline's handler is per install). */
static void install(repl *r) {
  if (r->closed || r->evaluating) return;
  rl_callback_handler_install(r->more ? MORE_PROMPT : PROMPT, on_line);
  r->prompting = 1;
}

static void unprompt(repl *r) {
  if (!r->prompting) return;
  rl_callback_handler_remove();
  r->prompting = 0;
}

static void save_history(repl *r, const char *line) {
  if (r->history[0] == '\0') return;
  FILE *f = fopen(r->history, "a");
  if (f == NULL || fprintf(f, "%s\n", line) < 0 || fclose(f) != 0) {
    if (!r->history_reported)
      fprintf(stderr,
              "tend: cannot write the history to %s (going on without)\n",
              r->history);
    r->history_reported = 1;
  }
}

static void on_line(char *line) {
  tend_host *h = host;
  repl *r = R(h);
  if (line == NULL) { /* Ctrl-D, or stdin closed */
    unprompt(r);
    r->closed = 1;
    fputs("\n", stdout);
    fflush(stdout);
    uv_poll_stop(&r->poll);
    tend_host_shutdown(h, 0);
    return;
  }
  if (*line) {
    add_history(line);
    save_history(r, line);
  }
  unprompt(r);
  lua_State *L = tend_host_state(h);
  call_lua(L, "line", line, 2); /* -> more, chunk */
  r->more = lua_toboolean(L, -2);
  if (lua_isfunction(L, -1))
    r->evaluating = deliver(h, r); /* pops the chunk */
  else
    lua_pop(L, 1);
  lua_pop(L, 1);
  free(line);
  install(r);
}

static void on_stdin(uv_poll_t *p, int status, int events) {
  (void)events;
  repl *r = p->data;
  if (status < 0) { /* stdin is gone (a closed terminal): as Ctrl-D */
    if (!r->closed) {
      if (!r->prompting) install(r);
      on_line(NULL);
    }
    return;
  }
  if (!r->prompting) return;
  rl_callback_read_char();
  tend_host_poke(host); /* what the line started runs from the loop */
}

/* Completion: globals, and fields after `.` or `:` (from tend.repl). */
static char *next_match(const char *text, int state) {
  (void)text;
  repl *r = R(host);
  if (state >= r->n_matches) return NULL;
  char *m = r->matches[state];
  r->matches[state] = NULL;
  return m;
}

static char **complete(const char *text, int start, int end) {
  (void)start;
  (void)end;
  repl *r = R(host);
  lua_State *L = tend_host_state(host);
  for (int i = 0; i < r->n_matches; i++) free(r->matches[i]);
  r->n_matches = 0;
  call_lua(L, "complete", text, 1);
  if (lua_istable(L, -1)) {
    lua_Integer n = luaL_len(L, -1);
    for (lua_Integer i = 1; i <= n && r->n_matches < MAX_COMPLETIONS; i++) {
      lua_rawgeti(L, -1, i);
      if (lua_isstring(L, -1))
        r->matches[r->n_matches++] = strdup(lua_tostring(L, -1));
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 1);
  rl_attempted_completion_over = 1;
  rl_completion_append_character = '\0';
  return rl_completion_matches(text, next_match);
}

/* ---- what the Lua side calls (passed to tend.repl.start) */

/* done(): /user/repl finished a chunk: the prompt comes back. */
static int l_done(lua_State *L) {
  tend_host *h = tend_host_of(L);
  repl *r = R(h);
  r->evaluating = 0;
  tend_host_set_interrupt(h, NULL);
  install(r);
  return 0;
}

static int next_line_k(lua_State *L, int status, lua_KContext k) {
  (void)status;
  (void)k;
  tend_host *h = tend_host_of(L);
  if (tend_sched_woken(L, h) != TEND_WAKE_OK) return 0;
  tend_sched_take_reply(L, h);
  return 1;
}

/* next_line() -> chunk: the task waits for the next line (a promise that
 * deliver answers). */
static int l_next_line(lua_State *L) {
  tend_host *h = tend_host_of(L);
  repl *r = R(h);
  if (r->pending_ref != LUA_NOREF) { /* typed before the task asked */
    lua_rawgeti(L, LUA_REGISTRYINDEX, r->pending_ref);
    luaL_unref(L, LUA_REGISTRYINDEX, r->pending_ref);
    r->pending_ref = LUA_NOREF;
    return 1;
  }
  tend_actor *a = tend_sched_check_wait(L, h, "next_line");
  tend_promise *p = tend_promise_new(L, h, a, -1, "next_line");
  r->line_id = tend_promise_id(p);
  r->line_gen = tend_promise_gen(p);
  return tend_sched_wait(L, h, TEND_WAIT_ASK, next_line_k);
}

/* ---- the host's hooks */

/* SIGINT: stop the chunk that runs, or clear the line being edited. */
static void interrupt(tend_host *h) {
  repl *r = R(h);
  if (r->evaluating) { /* stop the chunk that runs, not the task */
    tend_actor *a = task(h, r);
    if (a) tend_sched_interrupt(tend_host_state(h), h, a);
    return;
  }
  /* at the prompt: drop the line (and a pending incomplete chunk) */
  call_lua(tend_host_state(h), "reset", NULL, 1);
  lua_pop(tend_host_state(h), 1);
  r->more = 0;
  if (r->prompting) {
    rl_replace_line("", 0);
    fputs("\n", stdout);
    rl_on_new_line();
    rl_set_prompt(PROMPT);
    rl_redisplay();
  }
}

/* Ctrl-C at the prompt; SIGHUP: the terminal went away, as Ctrl-D. */
static int on_signal(tend_host *h, int signum) {
  if (signum == SIGINT && !R(h)->closed) {
    interrupt(h);
    return 1;
  }
  if (signum == SIGHUP) {
    tend_host_shutdown(h, 0);
    return 1;
  }
  return 0;
}

/* Around output while the prompt shows (begin 1, then 0). */
static void on_output(tend_host *h, int begin) {
  repl *r = R(h);
  if (r == NULL || !r->prompting) return;
  static char *saved;
  static int point;
  if (begin) { /* clear the prompt line; the output goes there */
    point = rl_point;
    saved = rl_copy_text(0, rl_end);
    rl_save_prompt();
    rl_replace_line("", 0);
    rl_redisplay();
    fputs("\r", stdout);
    fflush(stdout);
  } else { /* the prompt and the line being edited come back below */
    rl_restore_prompt();
    rl_replace_line(saved ? saved : "", 0);
    rl_point = point;
    free(saved);
    saved = NULL;
    rl_forced_update_display();
  }
}

/* After every pump pass: a task that stopped (a chunk stopped it) is
 * replaced, and the prompt comes back if it was running a line. */
static void on_turn(tend_host *h) {
  repl *r = R(h);
  if (r == NULL || r->closed || tend_host_stopping(h) || task(h, r)) return;
  luaL_unref(tend_host_state(h), LUA_REGISTRYINDEX, r->pending_ref);
  r->pending_ref = LUA_NOREF;
  if (start_task(h, r) != 0) {
    r->actor_id = r->actor_gen = 0;
    tend_host_front(h)->turn = NULL; /* said once; lines report the task gone */
    return;
  }
  if (r->evaluating) {
    static const char said[] =
        "the REPL's task stopped; a new one (with "
        "an empty mailbox) takes the next line\n";
    tend_host_print(h, said, sizeof said - 1);
    r->evaluating = 0;
    tend_host_set_interrupt(h, NULL);
    install(r);
  }
}

/* Shutdown: the prompt goes, stdin is no longer watched. */
static void on_shutdown(tend_host *h) {
  repl *r = R(h);
  unprompt(r);
  if (!r->closed) uv_poll_stop(&r->poll);
  r->closed = 1;
  for (int i = 0; i < r->n_matches; i++) free(r->matches[i]);
  r->n_matches = 0;
}

static void on_closed(uv_handle_t *handle) {
  free(handle->data);
}

/* The host closes: the poll handle goes, then the state. */
static void on_close(tend_host *h) {
  repl *r = R(h);
  tend_host_front(h)->data = NULL; /* its registry refs went with the state */
  uv_close((uv_handle_t *)&r->poll, on_closed);
}

int tend_repl_start(tend_host *h) {
  repl *r = calloc(1, sizeof *r);
  if (r == NULL) return -1;
  host = h;
  r->pending_ref = r->loop_ref = LUA_NOREF;
  tend_front front = {on_output, on_signal, on_turn, on_shutdown, NULL, r};
  *tend_host_front(h) = front;
  const char *home = getenv("HOME");
  if (home && *home) {
    snprintf(r->history, sizeof r->history, "%s/.tend_history", home);
    read_history(r->history);
  }
  rl_catch_signals = 0; /* SIGINT is ours (uv_signal) */
  rl_catch_sigwinch = 0;
  rl_readline_name = "tend";
  rl_attempted_completion_function = complete;
  rl_basic_word_break_characters = " \t\n\"\\'`@$><=;|&{(,+-*/%^#~[]";
  /* before the task exists: a regular file cannot be polled (a pipe or a
   * terminal can), and a task must never outlive r */
  if (uv_poll_init(tend_host_loop(h), &r->poll, 0) != 0) {
    fprintf(stderr,
            "tend: cannot watch stdin (a terminal or a pipe can be "
            "watched; a regular file cannot: use `tend FILE`)\n");
    tend_host_front(h)->data = NULL;
    memset(tend_host_front(h), 0, sizeof(tend_front));
    free(r);
    return -1;
  }
  lua_State *L = tend_host_state(h);
  int top = lua_gettop(L);
  lua_createtable(L, 0, 2); /* what tend.repl.start gets */
  lua_pushcfunction(L, l_done);
  lua_setfield(L, -2, "done");
  lua_pushcfunction(L, l_next_line);
  lua_setfield(L, -2, "next_line");
  lua_getglobal(L, "require");
  lua_pushliteral(L, "tend.repl");
  int ok = lua_pcall(L, 1, 1, 0) == LUA_OK;
  if (ok) { /* tend.repl.start(fns) -> the task's loop */
    lua_getfield(L, -1, "start");
    lua_pushvalue(L, -3);
    ok = lua_pcall(L, 1, 1, 0) == LUA_OK;
  }
  if (ok && lua_isfunction(L, -1)) {
    r->loop_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    start_task(h, r); /* /user/repl */
  } else if (!ok) {
    fprintf(stderr, "tend: repl: %s\n", lua_tostring(L, -1));
  }
  lua_settop(L, top);
  tend_host_front(h)->close = on_close;
  r->poll.data = r;
  uv_poll_start(&r->poll, UV_READABLE, on_stdin);
  install(r);
  return 0;
}

/* tend -i: after each pump pass, until the main chunk is done. */
static void start_when_main_done(tend_host *h) {
  if (tend_host_main(h) != NULL || tend_host_stopping(h)) return;
  tend_host_front(h)->turn = NULL;
  if (tend_repl_start(h) != 0) tend_host_shutdown(h, 1);
}

void tend_repl_after_main(tend_host *h) {
  tend_host_front(h)->turn = start_when_main_done;
}
