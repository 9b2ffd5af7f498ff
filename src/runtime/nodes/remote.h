/* remote: proxies of actors on other nodes. A proxy is an actor record
 * with TEND_ROLE_REMOTE: no behavior, no parent, a path such as
 * "/user/kv@b". Its (id, gen) make it a ref like any other, so it is a
 * sender, a reply address, a DeathWatch target and an ask target with no
 * change to those paths. A message to it leaves through h->remote_send
 * (the node layer encodes and publishes it). When the actor it stands for
 * dies, or its node restarts (a new incarnation), the node layer ends
 * the proxy with that reason (tend_remote_end): its watchers get
 * `terminated` with the reason and the asks it holds fail, as for a local
 * actor. While its node is not connected (down, or not seen yet) the
 * proxy is disconnected (tend_remote_disconnect): the watches and asks on
 * it then fail with "noconnection", new ones fail at once, tend.alive says
 * false; it lives on, so when the same incarnation is seen again
 * (tend_remote_reconnect) the same ref delivers, answers and can be
 * watched again (Erlang: a pid of a node that reconnects with the same
 * creation works again; Akka: an unreachable node that becomes reachable
 * keeps its refs).
 *
 * Coordinates: h->remotes_ref maps each live proxy's ref to
 * {node, inc, id, gen, path, kind} (kind 1: a pending ask on that node),
 * which the codec packs when the ref travels again. */
#ifndef TEND_REMOTE_H
#define TEND_REMOTE_H

#include <lua.h>

#include "runtime/core/host.h"

/* A new proxy for the coordinates at stack indices node..kind (six
 * values: node, inc, id, gen, path, kind); pushes its ref. Raises when ids
 * run out. */
tend_actor *tend_remote_new(lua_State *L, tend_host *h, int node);
/* Pushes the coordinates table of the proxy p (nil when it has none). */
void tend_remote_push_coords(lua_State *L, tend_host *h, tend_actor *p);
/* The proxy p ends: the value at stack index reason is what its watchers
 * see and what its held asks fail with. */
void tend_remote_end(lua_State *L, tend_host *h, tend_actor *p, int reason);
/* The proxy p's node is not connected: p's watchers get `terminated` with
 * the value at stack index reason (once: the watches are gone), the asks
 * it holds fail with it, and p is disconnected until reconnected. */
void tend_remote_disconnect(lua_State *L, tend_host *h, tend_actor *p,
                            int reason);
/* The proxy p's node is connected again (same incarnation). */
void tend_remote_reconnect(tend_actor *p);

#endif
