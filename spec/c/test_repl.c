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
  check(expect("goes on\r\n> ", 5), "and goes on");
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
  rmdir(home);
  bad_input(tend);
  printf("repl: %d passed, %d failed\n", passed, failed);
  return failed != 0;
}
