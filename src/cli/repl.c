/* repl: the interactive prompt on the event loop (DESIGN §2). GNU
 * readline's callback interface is fed by a uv_poll on stdin, so actors and
 * timers run between keystrokes. A line goes to lua/tend/repl.lua, which
 * compiles it (lua.c's rules: an expression prints its values, an
 * incomplete chunk continues on the next line) and hands it to the actor
 * /user/repl; while it runs the prompt is away, and when it is done the
 * actor calls core.repl_done() and the prompt comes back. Output written
 * while the prompt shows is printed above it and the line being edited is
 * redrawn. */
#include "cli/repl.h"

#include <lauxlib.h>
#include <readline/history.h>
#include <readline/readline.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/ref.h"
#include "runtime/sched.h"

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
  tend_actor *actor; /* /user/repl, which runs the lines */
} repl;

static tend_host *host; /* readline callbacks carry no user data */

static repl *R(const tend_host *h) {
  return h->front.data;
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
  lua_State *L = h->L;
  call_lua(L, "line", line, 2); /* -> more, running */
  r->more = lua_toboolean(L, -2);
  r->evaluating = lua_toboolean(L, -1);
  lua_pop(L, 2);
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
  lua_State *L = host->L;
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
  h->interrupt = NULL;
  install(r);
  return 0;
}

/* register(ref): the actor that evaluates REPL lines. */
static int l_register(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_ref *r = tend_ref_test(L, 1);
  R(h)->actor = r ? tend_ref_actor(h, r) : NULL;
  return 0;
}

/* ---- the host's hooks */

/* SIGINT: stop the chunk that runs, or clear the line being edited. */
static void interrupt(tend_host *h) {
  repl *r = R(h);
  if (r->evaluating) { /* stop the chunk that runs, not the actor */
    if (r->actor && tend_actor_live(h, r->actor->id, r->actor->gen))
      tend_sched_interrupt(h->L, h, r->actor);
    return;
  }
  /* at the prompt: drop the line (and a pending incomplete chunk) */
  call_lua(h->L, "reset", NULL, 1);
  lua_pop(h->L, 1);
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
  h->front.data = NULL;
  uv_close((uv_handle_t *)&r->poll, on_closed);
}

int tend_repl_start(tend_host *h) {
  repl *r = calloc(1, sizeof *r);
  if (r == NULL) return -1;
  host = h;
  tend_front front = {on_output, on_signal, NULL, on_shutdown, NULL, r};
  h->front = front;
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
  lua_State *L = h->L;
  int top = lua_gettop(L);
  lua_createtable(L, 0, 2); /* what tend.repl.start gets */
  lua_pushcfunction(L, l_done);
  lua_setfield(L, -2, "done");
  lua_pushcfunction(L, l_register);
  lua_setfield(L, -2, "register");
  lua_getglobal(L, "require");
  lua_pushliteral(L, "tend.repl");
  int ok = lua_pcall(L, 1, 1, 0) == LUA_OK;
  if (ok) { /* tend.repl.start(fns): spawns /user/repl */
    lua_getfield(L, -1, "start");
    lua_pushvalue(L, -3);
    ok = lua_pcall(L, 1, 0, 0) == LUA_OK;
  }
  if (!ok) fprintf(stderr, "tend: repl: %s\n", lua_tostring(L, -1));
  lua_settop(L, top);
  if (uv_poll_init(&h->loop, &r->poll, 0) != 0) {
    fprintf(stderr, "tend: cannot watch stdin\n");
    h->front.data = NULL;
    memset(&h->front, 0, sizeof h->front);
    free(r);
    return -1;
  }
  h->front.close = on_close;
  r->poll.data = r;
  uv_poll_start(&r->poll, UV_READABLE, on_stdin);
  install(r);
  return 0;
}

/* tend -i: after each pump pass, until the main chunk is done. */
static void start_when_main_done(tend_host *h) {
  if (h->main != NULL || h->shutdown) return;
  h->front.turn = NULL;
  if (tend_repl_start(h) != 0) tend_host_shutdown(h, 1);
}

void tend_repl_after_main(tend_host *h) {
  h->front.turn = start_when_main_done;
}
