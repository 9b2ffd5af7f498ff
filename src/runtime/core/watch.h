/* watch: DeathWatch (design §5.6). A watch is a record on two lists: the
 * target's (who watches it) and the watcher's (what it watches). When the
 * target dies, each watcher gets one `terminated` notice, which joins its
 * user queue at its next step outside a wait (after what was sent to it
 * before); unwatch removes the record, so a notification already queued is
 * dropped when it comes up (Akka). Any actor may watch any other. */
#ifndef TEND_WATCH_H
#define TEND_WATCH_H

#include <lua.h>

#include "runtime/core/host.h"

struct tend_watch {
  tend_actor *watcher; /* holds the watch (record freed at its death) */
  tend_actor *target;  /* watched actor while alive, NULL once fired */
  uint32_t target_id;  /* the target's id and generation */
  uint32_t target_gen;
  tend_value msg; /* custom message (custom = 1), owned */
  int custom;     /* 1: watch(ref, msg) */
  int fired;      /* 1: its notification is queued (notices or mailbox) */
  int restarts;   /* 1: a restart of the target fires it too (custom) */
  tend_watch *t_prev, *t_next; /* on the target's list (while not fired) */
  tend_watch *w_prev, *w_next; /* on the watcher's list */
};

/* w watches (id, gen), whose ref is at stack index ref_idx (or 0: one is
 * made); msg_idx: stack index of a custom message or 0.
 * A dead target is notified at once (existence_confirmed = false, reason
 * "unknown"), a disconnected proxy too (reason "noconnection"). */
void tend_watch_add(lua_State *L, tend_host *h, tend_actor *w, uint32_t id,
                    uint32_t gen, int ref_idx, int msg_idx);
/* w stops watching (id, gen); no notification comes afterwards. */
void tend_watch_remove(lua_State *L, tend_host *h, tend_actor *w, uint32_t id,
                       uint32_t gen);
/* w's watch of (id, gen), made with a custom message, fires at the
 * target's next restart as well as at its death (a stream whose owner's
 * incarnation ended: it started the stream). No-op without that watch. */
void tend_watch_also_restarts(tend_host *h, tend_actor *w, uint32_t id,
                              uint32_t gen);
/* t restarts: the watches made with tend_watch_also_restarts fire (their
 * custom message), the others stay. */
void tend_watch_target_restarted(lua_State *L, tend_host *h, tend_actor *t);
/* t dies: notify its watchers. Needs t's ref at stack index ref and its
 * reason at stack index reason. */
void tend_watch_target_died(lua_State *L, tend_host *h, tend_actor *t, int ref,
                            int reason);
/* w steps outside a wait: its pending notices join its user queue. */
void tend_watch_deliver(tend_actor *w);
/* w dies: its watches and pending notices go. */
void tend_watch_watcher_died(lua_State *L, tend_host *h, tend_actor *w);
/* A TERMINATED message about (id, gen) comes up in w's queue: forgets the
 * watch and returns 1 (a `terminated` table) or 2 (a custom message) if it
 * still holds, 0 if it was unwatched (drop the message). */
int tend_watch_take(lua_State *L, tend_host *h, tend_actor *w, uint32_t id,
                    uint32_t gen);

#endif
