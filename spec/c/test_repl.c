/* The REPL through a pseudo-terminal: starts build/tend on a pty, types
 * lines and reads the screen. Prints "repl: N passed, M failed". */
#include <errno.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int passed, failed;
static int fd = -1;
static pid_t child;
static char screen[1 << 16]; /* what came since the last expect */
static size_t used;
static char last[1 << 16]; /* what the last successful expect consumed */

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Reads until `want` shows up (or seconds pass); 1 if it did. The text up
 * to it is consumed. */
static int expect(const char *want, double seconds) {
  double end = now() + seconds;
  for (;;) {
    screen[used] = '\0';
    char *hit = strstr(screen, want);
    if (hit) { /* keep what came after it for the next expect */
      size_t from = (size_t)(hit - screen) + strlen(want);
      memcpy(last, screen, from);
      last[from] = '\0';
      memmove(screen, screen + from, used - from + 1);
      used -= from;
      return 1;
    }
    double left = end - now();
    if (left <= 0) return 0;
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, (int)(left * 1000) + 1) <= 0) continue;
    ssize_t n = read(fd, screen + used, sizeof screen - 1 - used);
    if (n <= 0) return 0;
    used += (size_t)n;
    if (used >= sizeof screen - 1) used = 0;
  }
}

static void type(const char *s) {
  if (write(fd, s, strlen(s)) < 0) perror("write");
}

static void check(int ok, const char *what) {
  if (ok) {
    passed++;
  } else {
    failed++;
    fprintf(stderr, "repl: FAILED: %s\nscreen: [%s]\n", what, screen);
    used = 0;
  }
}

/* Starts tend on a new pty with HOME set to home. */
static int start(const char *tend, const char *home) {
  child = forkpty(&fd, NULL, NULL, NULL);
  if (child < 0) {
    perror("forkpty");
    return -1;
  }
  if (child == 0) {
    setenv("TERM", "dumb", 1);
    setenv("HOME", home, 1);
    execl(tend, "tend", (char *)NULL);
    _exit(127);
  }
  used = 0;
  return 0;
}

/* Waits up to 5 s for the child; returns its exit status or -1. */
static int finish(void) {
  int status = 0;
  double end = now() + 5;
  pid_t done = 0;
  while (now() < end && (done = waitpid(child, &status, WNOHANG)) == 0)
    usleep(20000);
  if (done != child) {
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
    return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The REPL's mailbox (design §8.3): messages sent to /user/repl wait
 * for tend.receive or flush(), as in the Erlang shell; they never reach
 * the line handler. */
static void mailbox(const char *tend, const char *home) {
  if (start(tend, home) != 0) return;
  check(expect("> ", 5), "the prompt shows (mailbox)");
  type(
      "echo = tend.spawn(function() return function(m, c) "
      "c.sender:send(m .. '!') end end)\n");
  check(expect("> ", 5), "an echo that answers its sender is spawned");
  type("echo:send('ping')\n");
  check(expect("> ", 5), "a message that will answer the REPL is sent");
  usleep(200000); /* the answer arrives while the REPL is idle */
  type("1 + 1\n");
  check(expect("2\r\n> ", 5), "a message to the idle REPL breaks nothing");
  check(strstr(last, "attempt to call") == NULL,
        "a message is not run as a line");
  check(strstr(last, "> > ") == NULL, "nor doubles the prompt");
  type("tend.receive(1)\n");
  check(expect("\"ping!\"\tRef(/user/$", 5),
        "tend.receive returns the message and its sender");
  type("print(select('#', tend.receive(0.2)))\n");
  check(expect("0\r\n> ", 5), "tend.receive returns nothing on timeout");
  type("tend.self():send('a') tend.self():send({1, x = 2})\n");
  check(expect("> ", 5), "two messages to self");
  type("flush()\n");
  check(expect("got \"a\" from /user/repl\r\ngot {1, x = 2} from /user/repl"
               "\r\n> ",
               5),
        "flush() prints what waits, in order");
  type("flush()\n");
  check(expect("> ", 5) && strstr(screen, "got") == NULL,
        "and drops it: a second flush() prints nothing");
  type(
      "me = tend.self() tend.after(0.3, function() me:send('later') "
      "tend.sleep(1) end) print(tend.receive(5))\n");
  check(expect("later\tRef(/system/$", 5), "tend.receive waits for a message");
  type("tend.receive()\n");
  usleep(300000);
  type("\x03");
  check(expect("interrupted", 5), "Ctrl-C stops a tend.receive that waits");
  type("tend.stop(tend.self())\n");
  check(expect("a new one (with an empty mailbox) takes the next line", 5),
        "a REPL task that stops itself is replaced");
  type("'still ' .. 'here'\n");
  check(expect("\"still here\"\r\n> ", 5), "and the next line runs");
  type("\x04");
  check(finish() == 0, "Ctrl-D exits 0 (mailbox)");
  close(fd);
}

/* Values printed as values: tables pretty-printed with
 * sorted keys, cycles marked, refs as Ref(path); strings quoted; tree(),
 * ps() and stats() print once and return their value. */
static void values(void) {
  type("{b = 2, a = {1, 2}, r = tend.self(), 'first'}\n");
  check(expect("{\"first\", a = {1, 2}, b = 2, r = Ref(/user/repl)}\r\n> ", 5),
        "a table prints as a value, keys sorted, a ref as Ref(path)");
  type("t = {name = 'loop'} t.self = t\n");
  check(expect("> ", 5), "a cyclic table is made");
  type("t\n");
  check(expect("{name = \"loop\", self = <cycle>}\r\n> ", 5),
        "a cycle is marked");
  type("'two', 2, nil\n");
  check(expect("\"two\"\t2\tnil\r\n> ", 5), "several results, tab-separated");
  type("tree()\n");
  check(expect("/system [running]", 5) && expect("> ", 5) &&
            strstr(last, "/user [running]") == NULL,
        "tree() prints the tree once");
  type("rows = ps()\n");
  check(expect("/user/repl", 5) && expect("> ", 5), "ps() prints the rows");
  type("#rows > 2, rows[1].path\n");
  check(expect("true\t\"/user\"\r\n> ", 5), "and returns them");
  type("stats().actors > 0\n");
  check(expect("true\r\n> ", 5), "stats() returns the counters");
}

/* help on one function, "did you mean", trace(true)'s details. */
static void helping(void) {
  type("help(tend.spawn)\n");
  check(expect("tend.spawn(factory [, opts]) -> ref\r\n", 5) && expect("> ", 5),
        "help(tend.spawn) prints its call and what it does");
  type("tre()\n");
  check(expect("(global 'tre') (did you mean 'tree'?)", 5) && expect("> ", 5),
        "a mistyped global gets a did you mean");
  type("tend.spwan(function() end)\n");
  check(expect("(field 'spwan') (did you mean 'spawn'?)", 5) && expect("> ", 5),
        "a mistyped field gets a did you mean");
  type("trace(true)\n");
  check(expect("> ", 5), "trace(true)");
  type(
      "b = tend.spawn(function() return function() tend.raise('Boom', 'x') "
      "end end, {name = 'tb', supervisor = tend.one_for_one{max_retries = 3, "
      "within = 10}}) b:send(1)\n");
  check(expect("/user/tb fail (Boom: x)", 5),
        "trace(true) shows a failure with its kind");
  type(
      "c = tend.spawn(function(ctx) ctx:spawn(function() return function() "
      "error('no') end end, {name = 'k'}):send(1) return function() end "
      "end, {name = 'tc', supervisor = tend.one_for_one{max_retries = 3, "
      "within = 10}})\n");
  check(
      expect("/user/tc/k directive restart (default) window 1/3 per 10.0 s", 5),
      "trace(true) shows the directive, its clause and window");
  check(expect("/user/tc/k restart #1", 5), "and the restart count");
  type("trace(false) tend.stop(b) tend.stop(c)\n");
  check(expect("> ", 5), "trace(false)");
}

/* Writes text to dir/name. */
static void write_file(const char *dir, const char *name, const char *text) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  if (f == NULL) return;
  fputs(text, f);
  fclose(f);
}

/* reload("mod"): the REPL says which actors move and,
 * when each moves, how. */
static void reloading(const char *home) {
  write_file(home, "rlmod.lua",
             "local M = {}\n"
             "function M.counter(ctx) local n = 0 return function(m, ctx) "
             "if m == 'get' then ctx:reply('v1:' .. n) else n = n + 1 end "
             "end end\n"
             "return M\n");
  char line[600];
  snprintf(line, sizeof line, "package.path = '%s/?.lua;' .. package.path\n",
           home);
  type(line);
  check(expect("> ", 5), "the module's directory is on the path");
  type(
      "m = require 'rlmod' rc = tend.spawn(m.counter, {name = 'rc'}) "
      "rc:send(1) rc:send(1)\n");
  check(expect("> ", 5), "an actor from the module is spawned");
  type("tend.ask(rc, 'get')\n");
  check(expect("\"v1:2\"\r\n> ", 5), "it runs the old code");
  write_file(home, "rlmod.lua",
             "local M = {}\n"
             "function M.counter(ctx) return {n = 0, receive = function(s, "
             "m, ctx) if m == 'get' then ctx:reply('v2:' .. s.n) else s.n = "
             "s.n + 10 end end, code_change = function(s, old) s.n = old.n "
             "end} end\n"
             "return M\n");
  type("reload('rlmod')\n");
  check(
      expect("reload: rlmod from ", 5) &&
          expect(": 1 actor(s) move at their next message: /user/rc\r\n> ", 5),
      "reload() says which actors move");
  type("rc:send(1)\n");
  check(expect("reload: /user/rc moved to the new code (code_change)", 5),
        "and says when one moved, and how");
  type("tend.ask(rc, 'get')\n");
  check(expect("\"v2:12\"\r\n> ", 5), "its state carried over");
  type("tend.stop(rc)\n");
  check(expect("> ", 5), "the moved actor is stopped");
  char path[512];
  snprintf(path, sizeof path, "%s/rlmod.lua", home);
  remove(path);
}

/* Bad input: unbalanced, huge, invalid UTF-8, an unwritable history, and
 * stdin closed in the middle of a line. */
static void bad_input(const char *tend) {
  if (start(tend, "/nonexistent/home") != 0) return;
  check(expect("> ", 5), "the prompt shows without a usable HOME");
  type("print((1 + 2)\n");
  check(expect("cannot write the history", 5),
        "an unwritable history is reported");
  check(expect(">> ", 5), "unbalanced input asks for more");
  type("))\n");
  check(expect("unexpected symbol", 5), "then says what is wrong");
  type("'goes on'\n");
  check(expect("\"goes on\"\r\n> ", 5), "and goes on");
  check(strstr(screen, "cannot write the history") == NULL,
        "the history failure is said once");
  char big[20000];
  memcpy(big, "#'", 2);
  memset(big + 2, 'x', sizeof big - 5);
  memcpy(big + sizeof big - 3, "'\n", 3);
  big[sizeof big - 1] = '\0';
  type(big);
  check(expect("20000\r\n> ", 10) || expect("> ", 5), "a huge paste is read");
  type("'\xff\xfe bad utf-8'\n");
  check(expect("bad utf-8", 5), "invalid UTF-8 goes through");
  type("1 + ");
  usleep(200000);
  close(fd); /* the terminal goes away mid-line */
  check(finish() == 0, "a closed stdin mid-line exits 0");
}

int main(int argc, char **argv) {
  const char *tend = argc > 1 ? argv[1] : "build/tend";
  char home[] = "/tmp/tend-repl-XXXXXX";
  if (mkdtemp(home) == NULL) return 1;
  if (start(tend, home) != 0) { /* a machine without pseudo-terminals */
    rmdir(home);
    printf("repl: 0 passed, 0 failed (no pseudo-terminal here: not run)\n");
    return 0;
  }
  check(expect("> ", 5), "the prompt shows");
  type("1 + 2\n");
  check(expect("3\r\n> ", 5), "an expression prints its value");
  type("tend.after(0.3, function() print('tick') end)\n");
  check(expect("tick", 5), "a timer fires while the REPL waits");
  type("for i = 1, 3 do\n");
  check(expect(">> ", 5), "an incomplete chunk asks for more");
  type("print(i * 10) end\n");
  check(expect("10\r\n20\r\n30\r\n> ", 5), "a multi-line for loop runs");
  type("while true do end\n");
  usleep(300000);
  type("\x03");
  check(expect("interrupted", 5), "Ctrl-C stops a loop at the prompt");
  type("'after ' .. 'ctrl-c'\n");
  check(expect("after ctrl-c", 5), "a new line is evaluated after Ctrl-C");
  type("error('oops')\n");
  check(expect("stdin:1: oops", 5), "an error is shown");
  type("'survived'\n");
  check(expect("survived", 5), "and survived");
  type(
      "spin = tend.spawn(function() return function() while true do end end "
      "end)\n");
  check(expect("> ", 5), "a spinning actor is spawned");
  type("spin:send('go')\n");
  check(expect("> ", 5), "and started");
  type(
      "echo = tend.spawn(function() return function(m, c) c:reply(m) end "
      "end)\n");
  check(expect("> ", 5), "an echo is spawned");
  type("tend.ask(echo, 'still answering', 1)\n");
  check(expect("still answering", 5),
        "ask answers while an actor spins forever");
  values();
  helping();
  reloading(home);
  type("inspect(spin)\n");
  check(expect("busy = true,", 5) && expect("current = \"go\",", 5) &&
            expect("> ", 5),
        "inspect() shows a spinning actor's current message");
  check(strstr(last, "current =") == NULL, "once");
  type("s = inspect(spin)\n");
  check(expect("> ", 5), "inspect() returns the state");
  type("s.doing, tend.alive(spin)\n");
  check(expect("\"receive\"\ttrue\r\n> ", 5),
        "and returns it; the actor goes on");
  type(
      "k = tend.spawn(function() local n = 0 return function() n = n + 1 "
      "end end) k:send(1) k:send(1)\n");
  check(expect("> ", 5), "a counter is spawned and sent two messages");
  type("inspect(k).vars\n");
  check(expect("{n = 2}\r\n> ", 5), "inspect() reads its upvalues");
  type("tend.kill(spin)\n");
  check(expect("> ", 5), "the spinner is killed");
  type(
      "svc = tend.spawn(tend.process { cmd = { 'sleep', '30' } }, "
      "{ name = 'svc' })\n");
  check(expect("> ", 5), "an OS process is spawned");
  type("tend.sleep(0.1) tree()\n");
  check(expect("svc [running] restarts=0 mailbox=0 pid=", 5),
        "tree() shows the process with its pid");
  check(expect("> ", 5), "and the prompt comes back");
  type("\x04");
  check(finish() == 0, "Ctrl-D stops every actor and exits 0");
  close(fd);
  char hist[256];
  snprintf(hist, sizeof hist, "%s/.tend_history", home);
  FILE *f = fopen(hist, "r");
  check(f != NULL, "the history is saved");
  if (f) fclose(f);
  remove(hist);
  mailbox(tend, home);
  remove(hist);
  rmdir(home);
  bad_input(tend);
  printf("repl: %d passed, %d failed\n", passed, failed);
  return failed != 0;
}
