/* lask: tend.ask / ctx:ask. The asker sends with a promise as the sender,
 * then waits; the first message to the promise is the reply. A reply after
 * the timeout finds the promise gone and becomes a dead letter. */
#include <lauxlib.h>
#include <math.h>
#include <stdlib.h>

#include "lbind.h"
#include "sched.h"
#include "value.h"

#define DEFAULT_ASK_TIMEOUT 5.0

/* Continues an ask once woken: stack [1] ref [2] msg [3] timeout. */
static int ask_k(lua_State *L, int status, lua_KContext k) {
  (void)status;
  (void)k;
  tend_host *h = tend_host_of(L);
  tend_actor *a = h->current;
  if (a->wake_ok == 2) { /* Ctrl-C at the REPL */
    a->wake_ok = 1;
    tend_error_new(L, "Interrupted", "interrupted (Ctrl-C)");
    return lua_error(L);
  }
  if (a->wake_ok) {
    tend_value_take(L, h, &a->wake_value);
    return 1;
  }
  lua_getglobal(L, "tostring");
  lua_pushvalue(L, 1);
  lua_call(L, 1, 1);
  lua_pushfstring(L, "no reply from %s within %s s", lua_tostring(L, -1),
                  lua_tostring(L, 3));
  tend_error_new(L, "Timeout", lua_tostring(L, -1));
  luaL_where(L, 1);
  lua_setfield(L, -2, "where");
  return lua_error(L);
}

/* tend.ask(ref, msg [, timeout]) -> reply; raises Timeout. */
int tend_l_ask(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_ref *r = tend_ref_check(L, 1, "ask", "ref");
  double timeout = DEFAULT_ASK_TIMEOUT;
  if (!lua_isnoneornil(L, 3))
    timeout = tend_check_seconds(L, 3, "ask", "timeout", 1);
  lua_settop(L, 3);
  lua_pushnumber(L, timeout);
  lua_replace(L, 3);
  tend_actor *a = tend_sched_check_wait(L, h, "ask");
  tend_promise *p = malloc(sizeof *p);
  if (p == NULL) luaL_error(L, "ask: out of memory");
  p->kind = TEND_ENTITY_PROMISE;
  p->asker = a;
  p->timeout = NULL;
  p->id = tend_slots_alloc(&h->ids, p, &p->gen);
  if (p->id == 0) {
    free(p);
    luaL_error(L, "ask: too many ids in use");
  }
  a->wait_seq++;
  if (!isinf(timeout)) {
    p->timeout =
        tend_timer_arm(L, h, TEND_TIMER_WAKE, a, tend_clock_ns(timeout), 0, 0);
    if (p->timeout == NULL) {
      tend_promise_free(h, p);
      luaL_error(L, "ask: out of memory");
    }
  }
  a->promise = p;
  a->wake_ok = 0;
  tend_actor_send(L, h, r->id, r->gen, 2, p->id, p->gen);
  /* answered at once when the target was itself a promise */
  return tend_sched_wait(L, h, a->promise ? TEND_WAIT_ASK : TEND_WAIT_WOKEN,
                         ask_k);
}
