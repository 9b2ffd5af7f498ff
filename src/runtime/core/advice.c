/* advice: warnings about likely mistakes (see advice.h). */
#include "runtime/core/advice.h"

static void warn_childless(lua_State *L, tend_host *h, tend_actor *a) {
  a->ext->childless_until = 0; /* once */
  tend_actor_push_path(L, h, a);
  tend_host_log(h, TEND_LOG_WARN, lua_tostring(L, -1),
                "spawned with a strategy for its children (option "
                "'children', alias 'supervisor') but had no child in its "
                "first second: a strategy supervises the actor's children, "
                "not the actor itself; to supervise this actor, give the "
                "strategy to its parent");
  lua_pop(L, 1);
}

void tend_advice_spawned(tend_host *h, tend_actor *a) {
  if (a->ext == NULL) return;
  a->ext->childless_until =
      tend_clock_now(&h->clock) + TEND_ADVICE_CHILDLESS_NS;
}

void tend_advice_check(lua_State *L, tend_host *h, tend_actor *a) {
  if (!tend_advice_pending(a)) return;
  /* still pending: it had no child yet (a child ends the watch) */
  if (tend_clock_now(&h->clock) >= a->ext->childless_until)
    warn_childless(L, h, a);
}

void tend_advice_child(lua_State *L, tend_host *h, tend_actor *a) {
  if (!tend_advice_pending(a)) return;
  if (tend_clock_now(&h->clock) >= a->ext->childless_until)
    warn_childless(L, h, a);
  else
    a->ext->childless_until = 0;
}
