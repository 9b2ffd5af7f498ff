/* rtimeout: receive timeouts (see rtimeout.h). */
#include "runtime/supervision/rtimeout.h"

#include <lauxlib.h>
#include <stdlib.h>

#include "runtime/core/send.h"
#include "runtime/core/timers.h"

static tend_rtimeout *R(const tend_actor *a) {
  return a->ext ? a->ext->rtimeout : NULL;
}

/* Is r's timer still the one it armed? (Its owner's death frees it.) */
static int armed(const tend_rtimeout *r) {
  return r->timer && r->timer->gen == r->timer_gen &&
         r->timer->kind == TEND_TIMER_RECEIVE_TIMEOUT;
}

static void disarm(lua_State *L, tend_host *h, tend_rtimeout *r) {
  if (armed(r)) tend_timer_cancel(L, h, r->timer);
  r->timer = NULL;
}

static void arm(lua_State *L, tend_host *h, tend_actor *a, tend_rtimeout *r,
                int64_t ns) {
  r->timer = tend_timer_arm(L, h, TEND_TIMER_RECEIVE_TIMEOUT, a, ns, 0, 0);
  if (r->timer) r->timer_gen = r->timer->gen; /* NULL: out of memory, off */
}

int tend_rtimeout_set(lua_State *L, tend_host *h, tend_actor *a, int64_t ns,
                      int msg) {
  tend_actor_ext *x = tend_actor_ext_get(a);
  if (x == NULL) return -1;
  if (x->rtimeout == NULL) {
    x->rtimeout = calloc(1, sizeof *x->rtimeout);
    if (x->rtimeout == NULL) return -1;
    x->rtimeout->msg_ref = LUA_NOREF;
  }
  tend_rtimeout *r = x->rtimeout;
  disarm(L, h, r);
  luaL_unref(L, LUA_REGISTRYINDEX, r->msg_ref);
  lua_pushvalue(L, msg);
  r->msg_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  r->ns = ns;
  a->ext->received_at = tend_clock_now(&h->clock);
  arm(L, h, a, r, ns);
  return 0;
}

void tend_rtimeout_clear(lua_State *L, tend_host *h, tend_actor *a) {
  tend_rtimeout_free(L, h, a);
}

int64_t tend_rtimeout_get(const tend_actor *a) {
  const tend_rtimeout *r = R(a);
  return r ? r->ns : 0;
}

void tend_rtimeout_restart(lua_State *L, tend_host *h, tend_actor *a) {
  tend_rtimeout *r = R(a);
  if (r == NULL) return;
  disarm(L, h, r);
  a->ext->received_at = tend_clock_now(&h->clock);
  arm(L, h, a, r, r->ns);
}

void tend_rtimeout_free(lua_State *L, tend_host *h, tend_actor *a) {
  tend_rtimeout *r = R(a);
  if (r == NULL) return;
  disarm(L, h, r);
  luaL_unref(L, LUA_REGISTRYINDEX, r->msg_ref);
  free(r);
  a->ext->rtimeout = NULL;
}

/* The timer fired: the timeout is due unless a message came since (then
 * the rest of the countdown is armed) or the actor is not idle. */
static void on_fire(lua_State *L, tend_host *h, tend_timer *t, tend_actor *a) {
  tend_rtimeout *r = a ? R(a) : NULL;
  if (r == NULL || r->timer != t) return;
  r->timer = NULL; /* t is freed after this call */
  int64_t now = tend_clock_now(&h->clock);
  if (now - a->ext->received_at < r->ns) {
    arm(L, h, a, r, a->ext->received_at + r->ns - now);
    return;
  }
  a->ext->received_at = now;
  if (tend_actor_takes_mail(a) && a->op != TEND_OP_RECEIVE &&
      a->wait == TEND_WAIT_NONE && a->mbox.n_user == 0) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, r->msg_ref);
    tend_actor_send(L, h, a->id, a->gen, -1, 0, 0);
    lua_pop(L, 1);
  }
  if (R(a) == r) arm(L, h, a, r, r->ns); /* it may have been cleared */
}

const tend_driver tend_rtimeout_driver = {
    .name = "receive timeout",
    .timers =
        (const tend_driver_timer[]){{TEND_TIMER_RECEIVE_TIMEOUT, on_fire}, {0}},
    .rebuild = tend_rtimeout_restart,
    .death = tend_rtimeout_free,
    .release = tend_rtimeout_free};
