/* host: state, loop, pump and shutdown (see host.h). */
#include "runtime/core/host.h"

#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/core/event.h"
#include "runtime/core/lifecycle.h"
#include "runtime/core/promise.h"
#include "runtime/core/runq.h"
#include "runtime/core/sched.h"
#include "runtime/core/send.h"
#include "runtime/core/timers.h"
#include "runtime/core/watch.h"

#define PUMP_JUMPS 256 /* virtual-clock jumps per loop iteration */
/* A call preempted this long (wall time) is a long call: one preempted
 * once, as any may be on a loaded machine, mostly is not. */
#define LONG_CALL_NS 100000000u

/* The Lua allocator: counts bytes so stats and benchmarks can see them. */
static void *lua_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  tend_host *h = ud;
  if (ptr == NULL) osize = 0;
  if (nsize == 0) {
    free(ptr);
    h->lua_bytes -= osize;
    return NULL;
  }
  void *p = realloc(ptr, nsize);
  if (p) h->lua_bytes += nsize - osize;
  return p;
}

static int panic(lua_State *L) {
  fprintf(stderr, "tend: unprotected Lua error: %s\n", lua_tostring(L, -1));
  return 0; /* lua aborts after this; never reached in normal operation */
}

/* ------------------------------------------------------------ the pump */

static void on_idle(uv_idle_t *handle);
static void on_timer(uv_timer_t *handle);

/* The earliest due time of the host's timers and of its drivers' own work
 * (the simulated nodes; -1: none); *busy: something can run now. */
static int64_t next_due(tend_host *h, int *busy) {
  tend_timer *top = tend_timer_heap_top(&h->timers);
  int64_t next = top ? top->due : -1;
  *busy = h->runq_head != NULL;
  if (!h->user && !h->system) return next; /* (nodes outlive no world) */
  for (uint32_t i = 0; i < h->at[TEND_AT_PUMP].n; i++) {
    const tend_driver *d = h->at[TEND_AT_PUMP].v[i];
    if (!d->next_due) continue;
    int its_busy = 0;
    int64_t s = d->next_due(h, &its_busy);
    if (s >= 0 && (next < 0 || s < next)) next = s;
    *busy |= its_busy;
  }
  return next;
}

/* Is the virtual clock held now? (the observer's pause; a host that is
 * stopping lets it go: its shutdown timers must fire) */
static int clock_held(const tend_host *h) {
  return h->clock_held && !h->shutdown;
}

static void update_handles(tend_host *h) {
  if (h->world) return; /* a simulated node: the world runs it */
  tend_timer *top = tend_timer_heap_top(&h->timers);
  int runnable;
  int64_t next = next_due(h, &runnable);
  /* virtual: a timer is work when the clock may jump to it, or when it is
   * due already (a held clock's last step granted lands on it) */
  int busy =
      runnable ||
      (h->clock.is_virtual && next >= 0 &&
       (!clock_held(h) || h->clock_steps || next <= tend_clock_now(&h->clock)));
  if (busy) uv_idle_start(&h->idle, on_idle);
  if (!busy) uv_idle_stop(&h->idle);
  if (!h->clock.is_virtual && top && !h->runq_head) {
    int64_t wait = top->due - tend_clock_now(&h->clock);
    uint64_t ms = wait <= 0 ? 0 : (uint64_t)((wait + 999999) / 1000000);
    uv_timer_start(&h->uvtimer, on_timer, ms, 0);
  } else {
    uv_timer_stop(&h->uvtimer);
  }
}

void tend_host_turn(tend_host *h) {
  tend_timers_fire_due(h);
  tend_sched_run(h);
  tend_event_flush(h->L, h);
  if (h->pass_hook && h->pass_at != tend_clock_now(&h->clock))
    h->pass_hook(h, 0);                 /* (it sets pass_at) */
  if (h->stdout_closed && !h->shutdown) /* a print met EPIPE */
    tend_host_shutdown(h, 128 + SIGPIPE);
  if (h->front.turn) h->front.turn(h);
}

/* Nothing can happen any more but long calls preempted in the middle (the
 * main chunk has returned; every runnable actor is busy in one call for
 * LONG_CALL_NS at least; no timer, no handle or request of the loop but
 * the pump's own): those alone would keep the host turning for ever. */
static int only_busy_left(tend_host *h) {
  if (h->shutdown || h->main || !h->runq_head || h->sim || h->world ||
      tend_timer_heap_top(&h->timers) || h->loop.active_reqs.count != 0 ||
      h->loop.active_handles >
          (uv_is_active((uv_handle_t *)&h->idle) ? 1u : 0u))
    return 0;
  uint64_t now = uv_hrtime();
  for (tend_actor *a = h->runq_head; a; a = a->next_run)
    if (!tend_actor_busy_in_call(a) || now - a->ext->busy_since < LONG_CALL_NS)
      return 0;
  return 1;
}

/* Fires due timers and runs actors (and the simulated nodes, when there
 * are); under the virtual clock, jumps to the next timer whenever no
 * actor can run (while held, once per step granted). When only busy
 * calls are left, the host's end begins as
 * when nothing can happen (each call gets its actor's shutdown time). */
static void pump(tend_host *h) {
  for (int jumps = 0; jumps < PUMP_JUMPS; jumps++) {
    tend_host_turn(h);
    for (uint32_t i = 0; i < h->at[TEND_AT_PUMP].n; i++)
      if (h->at[TEND_AT_PUMP].v[i]->step) h->at[TEND_AT_PUMP].v[i]->step(h);
    int busy;
    int64_t next = next_due(h, &busy);
    if (busy) break;
    if (!h->clock.is_virtual || next < 0) break;
    if (clock_held(h) && !h->clock_steps) break; /* paused: real I/O only */
    if (clock_held(h)) h->clock_steps--;
    tend_clock_jump(&h->clock, next);
  }
  if (only_busy_left(h)) {
    tend_host_log(h, TEND_LOG_INFO, NULL,
                  "only actors busy in one long call are left: stopping "
                  "every actor");
    h->busy_end = 1;
    tend_host_shutdown(h, h->exit_code);
  }
  update_handles(h);
}

static void on_idle(uv_idle_t *handle) {
  pump(handle->data);
}
static void on_timer(uv_timer_t *handle) {
  pump(handle->data);
}

/* A signal taken by the loop. */
static void take_signal(tend_host *h, int signum) {
  if (h->front.signal && h->front.signal(h, signum)) return; /* the REPL's */
  if (signum == SIGHUP && h->shutdown) {
    tend_host_shutdown(h, 0);
    return;
  }
  if (h->shutdown) { /* second signal: stop at once */
    h->exit_code = 128 + signum;
    h->shutdown = TEND_SHUTDOWN_FORCED;
    uv_stop(&h->loop);
    return;
  }
  tend_host_log(h, TEND_LOG_INFO, NULL, "signal %d: stopping every actor",
                signum);
  tend_host_shutdown(h, 128 + signum);
}

static void on_signals(uv_async_t *handle) {
  tend_host *h = handle->data;
  int mask = __atomic_exchange_n(&h->signal_mask, 0, __ATOMIC_SEQ_CST);
  int first = __atomic_load_n(&h->signal_first, __ATOMIC_SEQ_CST);
  /* The one that arrived first is taken first (TERM then HUP is a graceful
   * stop by TERM; HUP never forces), then the others. */
  if (first > 0 && first < 31 && (mask & (1 << first))) {
    take_signal(h, first);
    mask &= ~(1 << first);
  }
  const int order[] = {SIGHUP, SIGINT, SIGTERM};
  for (int i = 0; i < 3; i++)
    if (mask & (1 << order[i])) take_signal(h, order[i]);
  if (h->shutdown != TEND_SHUTDOWN_FORCED) pump(h);
}

static tend_host *signal_host; /* the host the handler wakes */

/* The handler: async-signal-safe (an atomic or, uv_async_send, _exit). */
static void on_os_signal(int signum) {
  tend_host *h = __atomic_load_n(&signal_host, __ATOMIC_SEQ_CST);
  if (h == NULL ||
      ((h->stopping || __atomic_load_n(&h->signal_mask, __ATOMIC_SEQ_CST)) &&
       signum != SIGHUP))
    _exit(128 + signum); /* a second signal: at once */
  if (__atomic_load_n(&h->signal_mask, __ATOMIC_SEQ_CST) == 0)
    __atomic_store_n(&h->signal_first, signum, __ATOMIC_SEQ_CST);
  __atomic_fetch_or(&h->signal_mask, 1 << signum, __ATOMIC_SEQ_CST);
  uv_async_send(&h->signals);
}

/* SIGINT, SIGTERM and SIGHUP go to handler. */
static void handle_signals(void (*handler)(int)) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
}

/* The first host of the process to ask takes its signals. */
static void catch_signals(tend_host *h) {
  tend_host *none = NULL;
  if (!__atomic_compare_exchange_n(&signal_host, &none, h, 0, __ATOMIC_SEQ_CST,
                                   __ATOMIC_SEQ_CST))
    return;
  handle_signals(on_os_signal);
}

static void release_signals(tend_host *h) {
  if (__atomic_load_n(&signal_host, __ATOMIC_SEQ_CST) != h) return;
  handle_signals(SIG_DFL);
  __atomic_store_n(&signal_host, NULL, __ATOMIC_SEQ_CST);
}

void tend_host_poke(tend_host *h) {
  update_handles(h);
}

/* ------------------------------------------------------------ open, run */

static int new_ref_table(lua_State *L) {
  lua_newtable(L);
  return luaL_ref(L, LUA_REGISTRYINDEX);
}

static int sentinel_tostring(lua_State *L) {
  lua_pushvalue(L, lua_upvalueindex(1));
  return 1;
}

/* Runs in protected mode: libraries, metatables, guardians. */
static int setup(lua_State *L) {
  tend_host *h = lua_touserdata(L, 1);
  luaL_openlibs(L);
  h->anchors_ref = new_ref_table(L);
  h->parked_ref = new_ref_table(L);
  h->values_ref = new_ref_table(L);
  h->pool_ref = new_ref_table(L);
  h->names_ref = new_ref_table(L);
  h->trace_queue_ref = new_ref_table(L);
  lua_createtable(L, 2, 0); /* sentinels: unique tables with a name */
  for (int i = 1; i <= 2; i++) {
    lua_newtable(L);
    lua_newtable(L);
    lua_pushstring(L, i == 1 ? "tend.stopped" : "tend.unhandled");
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "__name");
    lua_pushcclosure(L, sentinel_tostring, 1);
    lua_setfield(L, -2, "__tostring");
    lua_setmetatable(L, -2);
    lua_rawseti(L, -2, i);
  }
  h->sentinels_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_CFunction open = (lua_CFunction)lua_touserdata(L, 2);
  if (open) { /* the layers above: metatables, modules */
    lua_pushcfunction(L, open);
    lua_call(L, 0, 0);
  }
  h->user = tend_actor_guardian(L, h, "user");
  h->system = tend_actor_guardian(L, h, "system");
  tend_strategy stopping = tend_strategy_stopping();
  tend_actor_set_strategy(L, h->system, &stopping, 0); /* tasks fail alone */
  return 0;
}

/* The core's own drivers (its timer kinds), then the configuration's. */
static int add_drivers(tend_host *h, const tend_driver *const *drivers) {
  static const tend_driver *const core[] = {
      &tend_send_driver, &tend_runq_driver, &tend_promise_driver,
      &tend_lifecycle_driver, NULL};
  for (const tend_driver *const *d = core; *d; d++)
    if (tend_driver_add(h, *d)) return -1;
  for (const tend_driver *const *d = drivers; d && *d; d++)
    if (tend_driver_add(h, *d)) return -1;
  return 0;
}

tend_host *tend_host_open(const tend_host_config *cfg) {
  tend_host *h = calloc(1, sizeof *h);
  if (h == NULL) return NULL;
  h->log_level = cfg->log_level;
  h->copy_messages = cfg->copy_messages;
  h->trace_fn_ref = LUA_NOREF;
  h->remotes_ref = h->remote_decode_ref = h->remote_send_ref = LUA_NOREF;
  h->sim_dispatch_ref = LUA_NOREF;
  h->sched_proxies_ref = h->sched_watchers_ref = LUA_NOREF;
  h->seq = &h->next_seq;
  h->open = cfg->open;
  h->world = cfg->world;
  if (cfg->node_name && (h->node_name = strdup(cfg->node_name)) == NULL) {
    free(h);
    return NULL;
  }
  h->trace.fd = -1;
  h->drivers = cfg->drivers;
  if (add_drivers(h, cfg->drivers)) {
    tend_driver_free(h);
    free(h->node_name);
    free(h);
    return NULL;
  }
  tend_clock_init(&h->clock, cfg->virtual_time);
  h->seed = cfg->has_seed ? cfg->seed
                          : (uv_hrtime() ^ ((uint64_t)uv_os_getpid() << 32));
  tend_rng_seed(&h->rng, h->seed);
  tend_slots_init(&h->ids);
  tend_timer_heap_init(&h->timers);
  tend_pool_init(&h->msgs, sizeof(tend_msg));
  tend_pool_init(&h->promises, sizeof(tend_promise));
  if (uv_loop_init(&h->loop) != 0) {
    tend_driver_free(h);
    free(h->node_name);
    free(h);
    return NULL;
  }
  uv_idle_init(&h->loop, &h->idle);
  uv_timer_init(&h->loop, &h->uvtimer);
  uv_async_init(&h->loop, &h->signals, on_signals);
  h->idle.data = h->uvtimer.data = h->signals.data = h;
  uv_unref((uv_handle_t *)&h->signals);
  if (h->world == NULL && !cfg->no_signals) catch_signals(h);
  h->L = lua_newstate(lua_alloc, h);
  if (h->L == NULL) {
    fprintf(stderr, "tend: cannot create the Lua state\n");
    tend_host_close(h);
    return NULL;
  }
  lua_atpanic(h->L, panic);
  if (h->world == NULL && tend_preempt_start(h, !cfg->virtual_time) != 0)
    fprintf(stderr,
            "tend: no runaway-actor watchdog (thread creation failed)\n");
  *(tend_host **)lua_getextraspace(h->L) = h;
  lua_pushcfunction(h->L, setup);
  lua_pushlightuserdata(h->L, h);
  lua_pushlightuserdata(h->L, (void *)cfg->open);
  if (lua_pcall(h->L, 2, 0, 0) != LUA_OK) {
    fprintf(stderr, "tend: setup failed: %s\n", lua_tostring(h->L, -1));
    tend_host_close(h);
    return NULL;
  }
  return h;
}

int tend_host_run(tend_host *h) {
  for (;;) {
    update_handles(h);
    uv_run(&h->loop, UV_RUN_DEFAULT);
    if (h->shutdown == TEND_SHUTDOWN_FORCED) break;
    if (h->user == NULL && h->system == NULL) break;
    if (!h->shutdown) { /* nothing can happen any more: stop the tree */
      if (h->pass_hook) h->pass_hook(h, 1);
      if (!h->shutdown) tend_host_shutdown(h, h->exit_code);
      continue;
    }
    if (!h->runq_head && !tend_timer_heap_top(&h->timers)) {
      tend_host_log(h, TEND_LOG_WARN, NULL,
                    "shutdown stalled (an actor waits forever in post_stop)");
      break;
    }
  }
  tend_event_flush(h->L, h);
  tend_trace_close(h); /* a trace that could not be written fails the run */
  if (h->trace_lost && h->exit_code == 0) h->exit_code = 1;
  return h->exit_code;
}

static void on_close(uv_handle_t *handle) {
  (void)handle;
}

void tend_host_close(tend_host *h) {
  tend_preempt_stop(h);
  if (h->L) {
    tend_event_flush(h->L, h);
    tend_timers_cancel_all(h->L, h);
    /* no program outlives it, every socket closes, curl shuts down, NATS
     * connections and simulated nodes go */
    for (uint32_t i = 0; i < h->at[TEND_AT_CLOSE].n; i++)
      h->at[TEND_AT_CLOSE].v[i]->close_all(h);
    /* what live ids hold outside Lua (actors left when the host ends at
     * once): promises, watch records, the drivers' records */
    for (uint32_t i = 1; i < h->ids.n; i++) {
      tend_actor *a = h->ids.v[i].ptr;
      if (a == NULL) continue;
      if (a->kind != TEND_ENTITY_PROMISE) { /* (those go with their pool) */
        tend_watch_watcher_died(h->L, h, a);
        for (uint32_t d = 0; d < h->at[TEND_AT_RELEASE].n; d++)
          h->at[TEND_AT_RELEASE].v[d]->release(h->L, h, a);
        tend_actor_ext_free(h->L, h, a);
      }
      h->ids.v[i].ptr = NULL;
    }
    lua_close(h->L);
    h->L = NULL;
  }
  if (h->front.close) h->front.close(h);
  uv_close((uv_handle_t *)&h->idle, on_close);
  uv_close((uv_handle_t *)&h->uvtimer, on_close);
  release_signals(h);
  uv_close((uv_handle_t *)&h->signals, on_close);
  uv_run(&h->loop, UV_RUN_DEFAULT);
  uv_loop_close(&h->loop);
  tend_trace_close(h);
  free(h->trace_path);
  free(h->node_name);
  tend_driver_free(h);
  tend_slots_free(&h->ids);
  tend_timer_heap_free(&h->timers);
  tend_pool_free(&h->msgs);
  tend_pool_free(&h->promises); /* and the promises still pending */
  free(h->free_values);
  free(h->ext_slots);
  tend_actor_ext_pool_free(h);
  free(h);
}
