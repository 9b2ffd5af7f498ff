/* rtimeout: an actor's receive timeout (Akka's ReceiveTimeout, OTP's
 * `after`): once set, its message is sent to the actor, through its
 * mailbox, whenever the actor got no message for that long; it goes on
 * firing after each such idle period until cleared. Any message the
 * behavior receives (the timeout's own included) starts the countdown
 * again. It is kept across restarts (Akka keeps it in the actor cell) and
 * goes with the actor. It never fires while the actor is in the middle of
 * a message (sleeping or asking), is suspended, restarting, or has mail
 * waiting: the countdown then starts again.
 *
 * One timer per actor at most, armed for the earliest instant the timeout
 * can be due; a message only notes the time (no timer work per message);
 * when the timer fires early it is armed again for the rest. */
#ifndef TEND_RTIMEOUT_H
#define TEND_RTIMEOUT_H

#include <lua.h>

#include "runtime/core/host.h"

struct tend_rtimeout {
  int64_t ns;         /* the timeout */
  int msg_ref;        /* the message it sends: a registry ref owned here */
  tend_timer *timer;  /* armed timer (owned by the actor), or NULL */
  uint32_t timer_gen; /* its generation when armed */
};

/* Sets a's receive timeout to ns (> 0) with the message at stack index
 * msg; returns 0, or -1 when memory is out (nothing changed). */
int tend_rtimeout_set(lua_State *L, tend_host *h, tend_actor *a, int64_t ns,
                      int msg);
/* Clears a's receive timeout. */
void tend_rtimeout_clear(lua_State *L, tend_host *h, tend_actor *a);
/* a's receive timeout in ns, 0 for none. */
int64_t tend_rtimeout_get(const tend_actor *a);
/* a receives a message: the countdown starts again. */
/* a is rebuilt by a restart (which cancelled its timers): the countdown
 * starts again. */
void tend_rtimeout_restart(lua_State *L, tend_host *h, tend_actor *a);
/* Frees a's record (at death or close, before the ext goes). */
void tend_rtimeout_free(lua_State *L, tend_host *h, tend_actor *a);
/* Its timer kind, restarts and deaths (driver.h). */
extern const tend_driver tend_rtimeout_driver;

#endif
