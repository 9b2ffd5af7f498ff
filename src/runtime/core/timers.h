/* timers: arming, cancelling and firing the host's timers (the heap is
 * base/timer.h). A timer has a kind; when it fires, the callback the
 * owner of that kind registered in h->on_fire runs (as libuv's timer heap
 * calls timer_cb without knowing what a timer does). A timer with a target
 * is owned by it: cancelled when it dies, stale once its generation is
 * gone. Kinds and their owners: SEND (send.c: ctx:after/every), WAKE
 * (runq.c: sleep), ASK (promise.c), TASK and KILL (lifecycle.c), BACKOFF_*
 * (backoff_sup.c), TYPED_* (typed.c). */
#ifndef TEND_TIMERS_H
#define TEND_TIMERS_H

#include <lua.h>

#include "runtime/core/host.h"

/* Fires every timer due by the host clock. */
void tend_timers_fire_due(tend_host *h);
/* Arms a timer of kind for target a (may be NULL) after ns; repeating
 * every `interval` ns when > 0; the value at idx (0 for none) is stored in
 * it. Its tag is a's wait number (kinds that need another set it after).
 * Returns it, or NULL when memory is out. */
tend_timer *tend_timer_arm(lua_State *L, tend_host *h, tend_timer_kind kind,
                           tend_actor *a, int64_t ns, int64_t interval,
                           int idx);
/* Disarms and frees t (NULL or already free: nothing). */
void tend_timer_cancel(lua_State *L, tend_host *h, tend_timer *t);
/* Cancels every timer (shutdown end, close). */
void tend_timers_cancel_all(lua_State *L, tend_host *h);

#endif
