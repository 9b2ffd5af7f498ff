/* Threads in one process: the ground the schedulers stand on. The
 * many-producer queue (base/mpsc) under four producers, and two hosts,
 * each in a thread of its own with its own Lua state and loop, running
 * actors at the same time (a pingpong and a supervised crash loop). Built
 * with ThreadSanitizer by `make tsan`, which fails on any data race.
 * Prints "threads: N passed, M failed". */
#include <lauxlib.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "base/mpsc.h"
#include "runtime/tend.h"

static int passed, failed;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      failed++;                                                                \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
    } else {                                                                   \
      passed++;                                                                \
    }                                                                          \
  } while (0)

/* ------------------------------------------------------------ the queue */

#define PRODUCERS 4
#define PER_PRODUCER 200000

typedef struct item {
  tend_mpsc_node node; /* first: a node is its item */
  int producer;
  int seq;
} item;

static tend_mpsc queue;
static item *items; /* PRODUCERS x PER_PRODUCER */

static void *produce(void *arg) {
  int p = (int)(intptr_t)arg;
  for (int i = 0; i < PER_PRODUCER; i++) {
    item *it = &items[p * PER_PRODUCER + i];
    it->producer = p;
    it->seq = i;
    tend_mpsc_push(&queue, &it->node);
  }
  return NULL;
}

/* Every item comes out once, each producer's in the order it pushed. */
static void test_mpsc(void) {
  items = calloc(PRODUCERS * PER_PRODUCER, sizeof *items);
  tend_mpsc_init(&queue);
  CHECK(tend_mpsc_pop(&queue) == NULL); /* empty */
  CHECK(!tend_mpsc_waiting(&queue));
  pthread_t t[PRODUCERS];
  for (int p = 0; p < PRODUCERS; p++)
    pthread_create(&t[p], NULL, produce, (void *)(intptr_t)p);
  int next[PRODUCERS] = {0}, total = 0, out_of_order = 0;
  while (total < PRODUCERS * PER_PRODUCER) {
    tend_mpsc_node *n = tend_mpsc_pop(&queue);
    if (n == NULL) continue; /* a push half-done, or none yet */
    item *it = (item *)n;
    if (it->seq != next[it->producer]) out_of_order++;
    next[it->producer] = it->seq + 1;
    total++;
  }
  for (int p = 0; p < PRODUCERS; p++) pthread_join(t[p], NULL);
  CHECK(out_of_order == 0);
  CHECK(tend_mpsc_pop(&queue) == NULL); /* empty again */
  CHECK(!tend_mpsc_waiting(&queue));
  for (int p = 0; p < PRODUCERS; p++) CHECK(next[p] == PER_PRODUCER);
  /* reused after it emptied */
  tend_mpsc_push(&queue, &items[0].node);
  CHECK(tend_mpsc_waiting(&queue));
  CHECK(tend_mpsc_pop(&queue) == &items[0].node);
  CHECK(tend_mpsc_pop(&queue) == NULL);
  CHECK(!tend_mpsc_waiting(&queue));
  tend_mpsc_push(&queue, &items[0].node); /* two: one popped, one waits */
  tend_mpsc_push(&queue, &items[1].node);
  CHECK(tend_mpsc_pop(&queue) == &items[0].node);
  CHECK(tend_mpsc_waiting(&queue));
  CHECK(tend_mpsc_pop(&queue) == &items[1].node);
  CHECK(!tend_mpsc_waiting(&queue));
  free(items);
}

/* ------------------------------------------------------------ two hosts */

void tend_modules_preload(lua_State *L); /* build/gen/modules.c */

static int open_lua(lua_State *L) {
  tend_api_open(L);
  tend_modules_preload(L);
  return 0;
}

/* A pingpong of 20,000 round trips, then an actor that fails on each of
 * 200 messages under a one_for_one of unlimited retries: prints
 * "<name>: 20000 200". */
static const char *const script =
    "local tend = require 'tend'\n"
    "local name = ...\n"
    "local pong = tend.spawn(function() return function(m, ctx)\n"
    "  tend.send(m, 'pong') end end)\n"
    "local n = 0\n"
    "local ping = tend.spawn(function() return function(m, ctx)\n"
    "  n = n + 1\n"
    "  if n < 20000 then tend.send(pong, ctx.self) end end end)\n"
    "tend.send(pong, ping)\n"
    "local restarts = 0\n"
    "tend.trace(function(e) if e.ev == 'restart' then restarts = restarts + "
    "1 end end)\n"
    "local sup = tend.spawn(function(ctx)\n"
    "  ctx:spawn(function() return function() error('boom') end end,\n"
    "            { name = 'w' })\n"
    "  return function() end end,\n"
    "  { children = tend.one_for_one{ max_retries = 1000, within = 1 } })\n"
    "tend.sleep(0.01)\n"
    "local w = tend.children(sup)[1].ref\n"
    "for i = 1, 200 do tend.send(w, i) end\n"
    "while n < 20000 or restarts < 200 do tend.sleep(0.01) end\n"
    "print(name .. ': ' .. n .. ' ' .. restarts)\n"
    "tend.shutdown(0)\n";

typedef struct run {
  const char *name;
  int status; /* the host's exit status, or -1 when it did not start */
  char out[256];
} run;

/* print() goes through the host's output; catch it per host. */
static int capture(lua_State *L) {
  run *r = lua_touserdata(L, lua_upvalueindex(1));
  size_t len;
  const char *s = luaL_tolstring(L, 1, &len);
  snprintf(r->out, sizeof r->out, "%s", s);
  return 0;
}

static void *host_thread(void *arg) {
  run *r = arg;
  r->status = -1;
  tend_host_config cfg = {
      .log_level = TEND_LOG_ERROR,
      .drivers = tend_drivers,
      .open = open_lua,
      .no_signals = 1,
  };
  tend_host *h = tend_host_open(&cfg);
  if (h == NULL) return NULL;
  lua_State *L = tend_host_state(h);
  lua_pushlightuserdata(L, r);
  lua_pushcclosure(L, capture, 1);
  lua_setglobal(L, "print");
  if (luaL_loadbuffer(L, script, strlen(script), "=threads") != LUA_OK) {
    fprintf(stderr, "%s\n", lua_tostring(L, -1));
    tend_host_close(h);
    return NULL;
  }
  lua_createtable(L, 1, 0); /* the chunk's `...` */
  lua_pushstring(L, r->name);
  lua_rawseti(L, -2, 1);
  lua_pushcfunction(L, tend_api_start_main);
  lua_insert(L, -3);
  if (lua_pcall(L, 2, 0, 0) != LUA_OK) {
    fprintf(stderr, "%s\n", lua_tostring(L, -1));
    tend_host_close(h);
    return NULL;
  }
  r->status = tend_host_run(h);
  tend_host_close(h);
  return NULL;
}

/* Two hosts at once: each gets its own answer and ends with 0. */
static void test_two_hosts(void) {
  run runs[2] = {{.name = "a"}, {.name = "b"}};
  pthread_t t[2];
  for (int i = 0; i < 2; i++)
    pthread_create(&t[i], NULL, host_thread, &runs[i]);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  CHECK(runs[0].status == 0);
  CHECK(runs[1].status == 0);
  CHECK(strcmp(runs[0].out, "a: 20000 200") == 0);
  CHECK(strcmp(runs[1].out, "b: 20000 200") == 0);
  if (strcmp(runs[0].out, "a: 20000 200") != 0)
    fprintf(stderr, "a said: %s\n", runs[0].out);
}

int main(void) {
  test_mpsc();
  test_two_hosts();
  printf("threads: %d passed, %d failed\n", passed, failed);
  return failed != 0;
}
