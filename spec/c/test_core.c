/* C unit tests of the Lua-free core: generational slots, the timer heap,
 * the generator, the message pool and queues, the clock. Prints
 * "c: N passed, M failed". */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/mailbox.h"
#include "base/rng.h"
#include "base/slots.h"
#include "base/strategy.h"
#include "base/backoff.h"
#include "base/frame.h"
#include "base/privdir.h"
#include "base/timer.h"

static int passed, failed; /* tests (functions) */
static int broken;         /* failed checks in the running test */

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      broken++;                                                                \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                          \
  } while (0)

#define RUN(test) \
  do {            \
    broken = 0;   \
    test();       \
    if (broken)   \
      failed++;   \
    else          \
      passed++;   \
  } while (0)

static void test_slots_generations(void) {
  tend_slots s;
  tend_slots_init(&s);
  int a = 1, b = 2;
  uint32_t ga, gb;
  uint32_t ia = tend_slots_alloc(&s, &a, &ga);
  CHECK(ia == 1);
  CHECK(tend_slots_get(&s, ia, ga) == &a);
  tend_slots_release(&s, ia);
  CHECK(tend_slots_get(&s, ia, ga) == NULL);
  uint32_t ib = tend_slots_alloc(&s, &b, &gb);
  CHECK(ib == ia);                           /* the slot is reused */
  CHECK(gb != ga);                           /* with a new generation */
  CHECK(tend_slots_get(&s, ia, ga) == NULL); /* a stale id stays stale */
  CHECK(tend_slots_get(&s, ib, gb) == &b);
  CHECK(tend_slots_get(&s, 0, 0) == NULL);
  CHECK(tend_slots_get(&s, 999, 1) == NULL);
  for (int i = 0; i < 1000; i++) {
    uint32_t g;
    CHECK(tend_slots_alloc(&s, &a, &g) == (uint32_t)i + 2);
  }
  CHECK(s.live == 1001);
  tend_slots_free(&s);
}

static void test_timer_heap_order(void) {
  tend_timer_heap h;
  tend_timer_heap_init(&h);
  enum { N = 200 };
  tend_timer t[N];
  memset(t, 0, sizeof t);
  tend_rng r;
  tend_rng_seed(&r, 1);
  for (int i = 0; i < N; i++) {
    t[i].heap_index = TEND_TIMER_UNARMED;
    t[i].due = (int64_t)tend_rng_upto(&r, 50); /* many equal dues */
    t[i].tag = (uint32_t)i;
    CHECK(tend_timer_heap_push(&h, &t[i]) == 0);
  }
  for (int i = 0; i < N; i += 7) tend_timer_heap_remove(&h, &t[i]);
  tend_timer_heap_remove(&h, &t[0]); /* removing twice is harmless */
  int64_t last_due = -1;
  uint64_t last_seq = 0;
  int n = 0, order_ok = 1;
  tend_timer *x;
  while ((x = tend_timer_heap_top(&h)) != NULL) {
    tend_timer_heap_remove(&h, x);
    if (x->due < last_due || (x->due == last_due && x->seq < last_seq))
      order_ok = 0;
    if (x->tag % 7 == 0) order_ok = 0; /* removed ones never come out */
    last_due = x->due;
    last_seq = x->seq;
    n++;
  }
  CHECK(order_ok);
  CHECK(n == N - (N + 6) / 7);
  tend_timer_heap_free(&h);
}

static void test_rng(void) {
  tend_rng a, b, c;
  tend_rng_seed(&a, 42);
  tend_rng_seed(&b, 42);
  tend_rng_seed(&c, 43);
  int same = 1, differ = 0;
  for (int i = 0; i < 100; i++) {
    uint64_t x = tend_rng_next(&a), y = tend_rng_next(&b),
             z = tend_rng_next(&c);
    if (x != y) same = 0;
    if (x != z) differ = 1;
  }
  CHECK(same);
  CHECK(differ);
  int in_range = 1, saw_lo = 0, saw_hi = 0;
  for (int i = 0; i < 10000; i++) {
    double d = tend_rng_double(&a);
    if (!(d >= 0 && d < 1)) in_range = 0;
    uint64_t k = tend_rng_upto(&a, 5);
    if (k > 5) in_range = 0;
    if (k == 0) saw_lo = 1;
    if (k == 5) saw_hi = 1;
  }
  CHECK(in_range);
  CHECK(saw_lo && saw_hi);
}

/* A known seed gives a known sequence: xoshiro256** seeded by splitmix64,
 * the same numbers as the reference implementation (and tend --seed 42). */
static void test_rng_known_sequence(void) {
  tend_rng r;
  tend_rng_seed(&r, 42);
  CHECK(tend_rng_next(&r) == 0x15780b2e0c2ec716ULL);
  CHECK(tend_rng_next(&r) == 0x6104d9866d113a7eULL);
  CHECK(tend_rng_next(&r) == 0xae17533239e499a1ULL);
  tend_rng_seed(&r, 42);
  CHECK(tend_rng_double(&r) == 0.083862971059882163);
  CHECK(tend_rng_double(&r) == 0.37898025066266861);
  tend_rng_seed(&r, 42);
  uint64_t want[] = {790, 638, 417, 161, 612}; /* tend_rng_upto(999) */
  int same = 1;
  for (int i = 0; i < 5; i++) same &= tend_rng_upto(&r, 999) == want[i];
  CHECK(same);
  tend_rng_seed(&r, 42); /* a span over 32 bits: the mask covers it all */
  CHECK(tend_rng_upto(&r, 1ULL << 40) == 549267988068ULL);
}

static void test_mailbox_fifo_and_pool(void) {
  tend_pool p;
  tend_pool_init(&p, sizeof(tend_msg));
  tend_queue q = {NULL, NULL};
  for (int i = 0; i < 3000; i++) {
    tend_msg *m = tend_msg_alloc(&p);
    CHECK(m != NULL);
    if (m == NULL) return;
    m->value.type = TEND_VALUE_INT;
    m->value.u.i = i;
    tend_queue_push(&q, m);
  }
  CHECK(p.carved == 3072);
  int fifo = 1;
  for (int i = 0; i < 3000; i++) {
    tend_msg *m = tend_queue_pop(&q);
    if (m == NULL || m->value.u.i != i) fifo = 0;
    if (m) tend_msg_release(&p, m);
  }
  CHECK(fifo);
  CHECK(tend_queue_pop(&q) == NULL && q.tail == NULL);
  for (int i = 0; i < 3000; i++) tend_msg_release(&p, tend_msg_alloc(&p));
  CHECK(p.carved == 3072); /* recycled, not allocated again */
  tend_pool_free(&p);
}

static void test_clock(void) {
  tend_clock c;
  tend_clock_init(&c, 1);
  CHECK(tend_clock_now(&c) == 0);
  tend_clock_jump(&c, tend_clock_ns(3600));
  CHECK(tend_clock_now(&c) == 3600000000000LL);
  tend_clock_jump(&c, 5); /* never backward */
  CHECK(tend_clock_now(&c) == 3600000000000LL);
  CHECK(tend_clock_ns(0.1) == 100000000);
  /* 2.01 * 1e9 is 2009999999.99...: rounded, not truncated */
  CHECK(tend_clock_ns(2.01) == 2010000000);
  CHECK(tend_clock_ns(-1) == 0);
  CHECK(tend_clock_ns(1e300) == INT64_MAX / 4);
  tend_clock real;
  tend_clock_init(&real, 0);
  int64_t t0 = tend_clock_now(&real);
  CHECK(tend_clock_now(&real) >= t0);
}

#define S(x) ((int64_t)(x)*1000000000LL)

static void test_timer_pool_generations(void) {
  tend_timer_heap h;
  tend_timer_heap_init(&h);
  tend_timer *a = tend_timer_new(&h);
  CHECK(a != NULL && a->heap_index == TEND_TIMER_UNARMED);
  if (a == NULL) return;
  uint32_t gen = a->gen;
  a->kind = TEND_TIMER_SEND;
  tend_timer_release(&h, a);
  CHECK(a->kind == TEND_TIMER_FREE && a->gen != gen); /* handles go stale */
  tend_timer *b = tend_timer_new(&h);
  CHECK(b == a && b->gen == gen + 1); /* recycled with its new generation */
  /* 64: the owner list is doubly linked, so a timer leaves it in O(1) (an
   * actor with 10^5 timers made every fire walk its list) */
  CHECK(sizeof(tend_timer) <= 64);
  if (b) tend_timer_release(&h, b);
  tend_timer_heap_free(&h);
}

static void test_backoff_delays(void) {
  tend_rng r;
  tend_rng_seed(&r, 7);
  tend_delay_cfg c = {
      TEND_ALG_EXPONENTIAL, TEND_JITTER_NONE, S(3), S(30), 0, 0, 10, 0};
  tend_delay_state s;
  tend_delay_reset(&c, &s);
  int64_t want[] = {3, 6, 12, 24, 30, 30, 30};
  int exact = 1;
  double draw = 0;
  for (int i = 0; i < 7; i++)
    exact &= tend_delay_next(&c, &s, &r, &draw) == S(want[i]);
  CHECK(exact && draw == -1);
  c.jitter = TEND_JITTER_AKKA;
  c.random_factor = 0.2;
  tend_delay_reset(&c, &s);
  int within = 1;
  for (int i = 0; i < 7; i++) {
    int64_t d = tend_delay_next(&c, &s, &r, &draw);
    within &=
        d >= S(want[i]) && d <= S(want[i]) * 12 / 10 && draw >= 0 && draw < 1;
  }
  CHECK(within);
  tend_delay_cfg sl = {
      TEND_ALG_SLOTTED, TEND_JITTER_NONE, S(1), S(1), 0, S(1), 2, 0};
  tend_delay_reset(&sl, &s);
  int slots_ok = 1;
  for (int i = 0; i < 100; i++) { /* slots 1, 2, 1, 2, ...: at most 3 s */
    int64_t d = tend_delay_next(&sl, &s, &r, &draw);
    slots_ok &= d == 0 || d == S(1) || (i % 2 == 1 && d == S(3));
  }
  CHECK(slots_ok);
  for (int i = 0; i < 200; i++) tend_delay_next(&c, &s, &r, &draw); /* big n */
  CHECK(tend_delay_next(&c, &s, &r, &draw) <= S(36));
  /* the row (min 0, max 0, random_factor 0, n 0) is 0, and stays 0 */
  tend_delay_cfg zero = {
      TEND_ALG_EXPONENTIAL, TEND_JITTER_AKKA, 0, 0, 0, 0, 10, 0};
  tend_delay_reset(&zero, &s);
  int zeros = 1;
  for (int i = 0; i < 100; i++)
    zeros &= tend_delay_next(&zero, &s, &r, &draw) == 0;
  CHECK(zeros);
}

/* Each jitter mode's exact delays for a known seed (seed 7; 3 s to 30 s,
 * random_factor 0.2), to the nanosecond (rounded). */
static void test_backoff_known_delays(void) {
  static const int64_t want[][6] = {
      {3420345889, 6334501475, 14015105909, 28709269080, 35945161673,
       35236643632}, /* akka: may exceed the maximum */
      {3420345889, 6334501475, 14015105909, 28709269080, 30000000000,
       30000000000}, /* capped */
      {2101729447, 1672507377, 10075529543, 23546345400, 29725808365,
       26183218162}, /* full */
      {2550864723, 3836253688, 11037764771, 23773172700, 29862904182,
       28091609081}, /* equal */
      {7203458893, 8187665380, 21104883719, 30000000000, 30000000000,
       30000000000}, /* decorrelated */
      {3000000000, 6000000000, 12000000000, 24000000000, 30000000000,
       30000000000}, /* none */
  };
  for (int j = 0; j < 6; j++) {
    tend_rng r;
    tend_rng_seed(&r, 7);
    tend_delay_cfg c = {
        TEND_ALG_EXPONENTIAL, (tend_jitter)j, S(3), S(30), 0.2, 0, 10, 0};
    tend_delay_state s;
    tend_delay_reset(&c, &s);
    int exact = 1;
    double draw;
    for (int i = 0; i < 6; i++)
      exact &= tend_delay_next(&c, &s, &r, &draw) == want[j][i];
    if (!exact) fprintf(stderr, "jitter %s:\n", tend_jitter_name(j));
    CHECK(exact);
  }
  /* slotted, 1 ms slots, ceiling 3, staying there: e and the delay */
  tend_rng r;
  tend_rng_seed(&r, 7);
  tend_delay_cfg sl = {
      TEND_ALG_SLOTTED, TEND_JITTER_NONE, S(1), S(1), 0, 1000000, 3, 1};
  tend_delay_state s;
  tend_delay_reset(&sl, &s);
  static const double e[] = {0, 2, 2, 0, 0, 1, 0, 0};
  int exact = 1;
  for (int i = 0; i < 8; i++) {
    double draw;
    int64_t d = tend_delay_next(&sl, &s, &r, &draw);
    exact &= draw == e[i] && d == ((1LL << (int)e[i]) - 1) * 1000000;
  }
  CHECK(exact && s.slot == 3);
}

static void test_window_fixed_and_sliding(void) {
  /* restarts at 0, 9, 11, 12 with at most 2 per 10 s */
  tend_limit fixed = tend_limit_make(2, S(10), TEND_WINDOW_FIXED);
  tend_limit sliding = tend_limit_make(2, S(10), TEND_WINDOW_SLIDING);
  tend_window wf = {0}, ws = {0};
  int64_t at[] = {0, 9, 11, 12};
  int f[4], sl[4];
  for (int i = 0; i < 4; i++) {
    f[i] = tend_window_allow(&wf, &fixed, S(at[i]));
    sl[i] = tend_window_allow(&ws, &sliding, S(at[i]));
  }
  CHECK(f[0] == 1 && f[1] == 1 && f[2] == 1 && f[3] == 1); /* reopened at 11 */
  CHECK(sl[0] == 1 && sl[1] == 1 && sl[2] == 1 && sl[3] == 0);
  CHECK(tend_window_used(&ws, &sliding, S(12)) == 2);
  CHECK(tend_window_used(&ws, &sliding, S(30)) == 0);
  tend_window_free(&wf);
  tend_window_free(&ws);
}

/* OTP's boundary (add_restart keeps entries >= Now - Period): a restart
 * exactly `within` old still counts; one nanosecond later it is out. The
 * fixed window is still open exactly `within` after it opened. */
static void test_window_boundary_is_inclusive(void) {
  tend_limit sliding = tend_limit_make(2, S(10), TEND_WINDOW_SLIDING);
  tend_limit fixed = tend_limit_make(2, S(10), TEND_WINDOW_FIXED);
  tend_window ws = {0}, ws2 = {0}, wf = {0}, wf2 = {0};
  CHECK(tend_window_allow(&ws, &sliding, S(0)) == 1);
  CHECK(tend_window_allow(&ws, &sliding, S(5)) == 1);
  CHECK(tend_window_used(&ws, &sliding, S(10)) == 2);
  CHECK(tend_window_allow(&ws, &sliding, S(10)) == 0); /* 0 is 10 s old */
  CHECK(tend_window_used(&ws, &sliding, S(10) + 1) == 1);
  CHECK(tend_window_allow(&ws, &sliding, S(10) + 1) == 1); /* 0 is out */
  CHECK(tend_window_used(&ws, &sliding, S(15)) == 2);
  CHECK(tend_window_used(&ws, &sliding, S(15) + 1) == 1);
  CHECK(tend_window_allow(&ws2, &sliding, S(0)) == 1);
  CHECK(tend_window_allow(&ws2, &sliding, S(5)) == 1);
  CHECK(tend_window_allow(&ws2, &sliding, S(10) + 1) == 1);
  CHECK(tend_window_allow(&wf, &fixed, S(0)) == 1);
  CHECK(tend_window_allow(&wf, &fixed, S(5)) == 1);
  CHECK(tend_window_used(&wf, &fixed, S(10)) == 2);
  CHECK(tend_window_allow(&wf, &fixed, S(10)) == 0); /* still open */
  CHECK(tend_window_used(&wf, &fixed, S(10) + 1) == 0);
  CHECK(tend_window_allow(&wf2, &fixed, S(0)) == 1);
  CHECK(tend_window_allow(&wf2, &fixed, S(5)) == 1);
  CHECK(tend_window_allow(&wf2, &fixed, S(10) + 1) == 1); /* a new window */
  CHECK(tend_window_allow(&wf2, &fixed, S(20) + 1) == 1); /* its 2nd */
  CHECK(tend_window_allow(&wf2, &fixed, S(20) + 1) == 0);
  tend_window_free(&ws);
  tend_window_free(&ws2);
  tend_window_free(&wf);
  tend_window_free(&wf2);
}

static void test_window_special_values(void) {
  tend_window w = {0};
  tend_limit unlimited = tend_limit_make(-1, INT64_MAX, TEND_WINDOW_FIXED);
  int ok = 1;
  for (int i = 0; i < 1000; i++)
    ok &= tend_window_allow(&w, &unlimited, S(i)) == 1;
  CHECK(ok);
  tend_limit one =
      tend_limit_make(-1, S(5), TEND_WINDOW_FIXED); /* -1, finite */
  CHECK(one.max == 1);
  tend_window w1 = {0};
  CHECK(tend_window_allow(&w1, &one, S(0)) == 1);
  CHECK(tend_window_allow(&w1, &one, S(1)) == 0);
  CHECK(tend_window_allow(&w1, &one, S(6)) == 1);
  tend_limit total =
      tend_limit_make(3, INT64_MAX, TEND_WINDOW_SLIDING); /* n, inf */
  tend_window w2 = {0};
  CHECK(tend_window_allow(&w2, &total, S(0)) == 1);
  CHECK(tend_window_allow(&w2, &total, S(1000)) == 1);
  CHECK(tend_window_allow(&w2, &total, S(100000)) == 1);
  CHECK(tend_window_allow(&w2, &total, S(1000000)) == 0);
  tend_limit never = tend_limit_make(0, S(1), TEND_WINDOW_SLIDING);
  CHECK(tend_window_allow(&w2, &never, S(0)) == 0);
  CHECK(tend_directive_parse("escalate") == TEND_ESCALATE);
  CHECK(tend_directive_parse("retry") == -1);
  tend_window_free(&w);
  tend_window_free(&w1);
  tend_window_free(&w2);
}

/* Frames collected by the framer tests, joined with '|'. */
static char frames[256];

static int collect(void *ud, const char *f, size_t n) {
  (void)ud;
  size_t at = strlen(frames);
  if (at > 0 && at < sizeof frames - 1) frames[at++] = '|';
  snprintf(frames + at, sizeof frames - at, "%.*s", (int)n, f);
  return 0;
}

static void test_frame_lines_and_lengths(void) {
  tend_framer f;
  tend_framer_init(&f, TEND_FRAME_LINE, 8);
  frames[0] = 0; /* lines split across feeds; "\r\n" ends one too */
  CHECK(tend_framer_feed(&f, "ab\ncd", 5, collect, NULL) == 0);
  CHECK(tend_framer_feed(&f, "e\r\n\nfg", 7, collect, NULL) == 0);
  CHECK(strcmp(frames, "ab|cde|") == 0);
  tend_framer_end(&f, collect, NULL); /* the last line without "\n" */
  CHECK(strcmp(frames, "ab|cde||fg") == 0);
  tend_framer_init(&f, TEND_FRAME_LINE, 8); /* over the bound: -1 */
  CHECK(tend_framer_feed(&f, "12345", 5, collect, NULL) == 0);
  CHECK(tend_framer_feed(&f, "6789", 4, collect, NULL) == -1);
  tend_framer_free(&f);
  tend_framer_init(&f, TEND_FRAME_LENGTH, 10);
  frames[0] = 0; /* a header cut in two, an empty frame, two in one feed */
  CHECK(tend_framer_feed(&f, "\0\0", 2, collect, NULL) == 0);
  CHECK(tend_framer_feed(&f, "\0\3abc\0\0\0\0\0\0\0\2x", 14, collect, NULL) ==
        0);
  CHECK(strcmp(frames, "abc|") == 0);
  CHECK(tend_framer_feed(&f, "y", 1, collect, NULL) == 0);
  CHECK(strcmp(frames, "abc||xy") == 0);
  CHECK(tend_framer_feed(&f, "\0\0\0\13", 4, collect, NULL) == -1); /* 11 */
  tend_framer_free(&f);
  char head[4];
  tend_frame_header(TEND_FRAME_LENGTH, 0x01020304, head);
  CHECK(head[0] == 1 && head[1] == 2 && head[2] == 3 && head[3] == 4);
  CHECK(strcmp(tend_frame_trailer(TEND_FRAME_LINE), "\n") == 0);
  CHECK(strcmp(tend_frame_trailer(TEND_FRAME_RAW), "") == 0);
}

static int exists(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0;
}

static void touch(const char *path) {
  FILE *f = fopen(path, "w");
  if (f) fclose(f);
}

static void test_privdir_made_private_and_removed_whole(void) {
  char tmp[] = "/tmp/tend-test-XXXXXX", d[4096], p[4200], out[4200];
  CHECK(mkdtemp(tmp) != NULL);
  snprintf(out, sizeof out, "%s/outside", tmp);
  touch(out);
  setenv("TMPDIR", tmp, 1);
  CHECK(tend_privdir_make("a/b", d, sizeof d) == -EINVAL);
  CHECK(tend_privdir_make("nats", d, 8) == -ENAMETOOLONG);
  CHECK(tend_privdir_make("nats", d, sizeof d) == 0);
  CHECK(strncmp(d, tmp, strlen(tmp)) == 0 &&
        strncmp(d + strlen(tmp), "/tend-nats-", 11) == 0);
  struct stat st;
  CHECK(stat(d, &st) == 0 && (st.st_mode & 0777) == 0700);
  snprintf(p, sizeof p, "%s/jetstream", d); /* a tree, and a link out */
  CHECK(mkdir(p, 0700) == 0);
  snprintf(p, sizeof p, "%s/jetstream/f", d);
  touch(p);
  snprintf(p, sizeof p, "%s/link", d);
  CHECK(symlink(out, p) == 0);
  pid_t child = fork(); /* a forked process removes nothing */
  if (child == 0) {
    tend_privdir_remove_all();
    _exit(0);
  }
  waitpid(child, NULL, 0);
  CHECK(exists(p));
  CHECK(tend_privdir_remove(d) == 0);
  CHECK(!exists(d));
  CHECK(exists(out)); /* the link went, not what it points to */
  CHECK(tend_privdir_remove(d) == -ENOENT);   /* once */
  CHECK(tend_privdir_remove(out) == -ENOENT); /* only its own */
  CHECK(exists(out));
  unsetenv("TMPDIR");
  unlink(out);
  rmdir(tmp);
}

int main(void) {
  RUN(test_slots_generations);
  RUN(test_timer_heap_order);
  RUN(test_rng);
  RUN(test_rng_known_sequence);
  RUN(test_mailbox_fifo_and_pool);
  RUN(test_clock);
  RUN(test_window_fixed_and_sliding);
  RUN(test_window_boundary_is_inclusive);
  RUN(test_window_special_values);
  RUN(test_timer_pool_generations);
  RUN(test_backoff_delays);
  RUN(test_backoff_known_delays);
  RUN(test_frame_lines_and_lengths);
  RUN(test_privdir_made_private_and_removed_whole);
  printf("c: %d passed, %d failed\n", passed, failed);
  return failed != 0;
}
