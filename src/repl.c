/* repl: the interactive prompt on the event loop (DESIGN §2). GNU
 * readline's callback interface is fed by a uv_poll on stdin, so actors and
 * timers run between keystrokes. A line goes to lua/tend/repl.lua, which
 * compiles it (lua.c's rules: an expression prints its values, an
 * incomplete chunk continues on the next line) and hands it to the actor
 * /user/repl; while it runs the prompt is away, and when it is done the
 * actor calls core.repl_done() and the prompt comes back. Output written
 * while the prompt shows is printed above it and the line being edited is
 * redrawn. */
#include "repl.h"

#include <lauxlib.h>
#include <readline/history.h>
#include <readline/readline.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lbind.h"
#include "preempt.h"
#include "sched.h"

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
} repl;

static tend_host *host; /* readline callbacks carry no user data */

static repl *R(const tend_host *h) {
  return h->repl;
}

/* Calls tend.repl.<fn>(arg) protected; pushes its nres results (nils on
 * an error, which is reported). */
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

int tend_repl_start(tend_host *h) {
  repl *r = calloc(1, sizeof *r);
  if (r == NULL) return -1;
  host = h;
  h->repl = r;
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
  call_lua(h->L, "start", NULL, 1); /* spawns /user/repl, sets the helpers */
  lua_pop(h->L, 1);
  if (uv_poll_init(&h->loop, &r->poll, 0) != 0) {
    fprintf(stderr, "tend: cannot watch stdin\n");
    return -1;
  }
  r->poll.data = r;
  uv_poll_start(&r->poll, UV_READABLE, on_stdin);
  install(r);
  return 0;
}

void tend_repl_done(tend_host *h) {
  repl *r = R(h);
  if (r == NULL) return;
  r->evaluating = 0;
  h->interrupt = 0;
  install(r);
}

void tend_repl_interrupt(tend_host *h) {
  repl *r = R(h);
  if (r->evaluating) { /* stop the chunk that runs, not the actor */
    tend_actor *a = h->repl_actor;
    h->interrupt = 1;
    if (a == NULL) return;
    if (a->wait == TEND_WAIT_SLEEP || a->wait == TEND_WAIT_ASK) {
      tend_sched_interrupt(h->L, h, a);
    } else if (a->thread) { /* preempted: the hook fires when it resumes */
      lua_sethook(a->thread, tend_preempt_hook, LUA_MASKCOUNT, 1);
    }
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

void tend_repl_output(tend_host *h, int begin) {
  repl *r = h ? R(h) : NULL;
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

int tend_repl_active(const tend_host *h) {
  return h->repl && !R(h)->closed;
}

void tend_repl_close(tend_host *h) {
  repl *r = R(h);
  if (r == NULL) return;
  unprompt(r);
  if (!r->closed) uv_poll_stop(&r->poll);
  r->closed = 1;
  for (int i = 0; i < r->n_matches; i++) free(r->matches[i]);
  r->n_matches = 0;
}

void tend_repl_free(tend_host *h) {
  free(h->repl);
  h->repl = NULL;
}

uv_handle_t *tend_repl_handle(tend_host *h) {
  return h->repl ? (uv_handle_t *)&R(h)->poll : NULL;
}
