/* advice: warnings about likely mistakes, each logged once per actor.
 * Today one: an actor spawned with a strategy for its children (spawn
 * option `children`, alias `supervisor`) that has no child for the whole
 * first second of its life. Akka users put a supervisorStrategy on the
 * actor it should supervise; in tend (as in Akka) a strategy applies to
 * the actor's children, so on a leaf it does nothing. The check is lazy,
 * so it arms no timer (an idle actor keeps nothing alive): it runs when
 * the actor takes a message, gets its first child, or dies, and warns if
 * by then a full second had passed with no child. */
#ifndef TEND_ADVICE_H
#define TEND_ADVICE_H

#include <lua.h>

#include "runtime/core/host.h"

#define TEND_ADVICE_CHILDLESS_NS 1000000000LL /* 1 s */

/* a was just spawned with a custom strategy: watch it. */
void tend_advice_spawned(tend_host *h, tend_actor *a);
/* a takes a message, or dies: warns when it was childless for its first
 * second. */
void tend_advice_check(lua_State *L, tend_host *h, tend_actor *a);
/* a gets a child (not linked yet): warns when it comes too late. */
void tend_advice_child(lua_State *L, tend_host *h, tend_actor *a);

/* Cheap test for the hot path (a message taken). */
static inline int tend_advice_pending(const tend_actor *a) {
  return a->ext != NULL && a->ext->childless_until != 0;
}

#endif
