/* simnodes: several nodes in one process, under the virtual clock.
 *
 * Each simulated node is a host of its own (its own lua_State, tree,
 * names and loaded modules), opened with cfg.world set: it has no loop of
 * its own that runs, no signals and no watchdog. The world (the host the
 * scenario runs in) steps it on the world's clock: at every pass of the
 * world's pump, after the world's own turn, the bus delivers what is due
 * and each node takes a turn, in the order the nodes were added; the
 * world's clock then jumps to the earliest timer or delivery of any of
 * them. FoundationDB's simulator and turmoil are the model.
 *
 * The bus carries the node layer's bytes (lua/tend/node.lua) as NATS
 * would: a publish on "tend.hb" reaches every other node, one on
 * "tend.n.<name>" reaches that node. Each delivery takes the latency of
 * its link (0 unless set, plus a uniform jitter from the world's
 * generator) and keeps the order of its link. Across a partition, and to
 * a node that is down, bytes are dropped (NATS keeps nothing for a
 * subscriber that is not there). A key-value store with leases stands
 * for JetStream's (tend.global).
 *
 * Every choice is made from the world's generator and clock, in a fixed
 * order, so a seed replays the whole cluster byte for byte. */
#ifndef TEND_SIMNODES_H
#define TEND_SIMNODES_H

#include <lua.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/core/host.h"
#include "runtime/tend.h" /* node states, key-value results */

/* The world's side of the simulated nodes; made at the first
 * tend_sim_add (h->sim). */
typedef struct tend_simworld tend_simworld;

/* Adds node `name` (copied) run by host `node` (opened with cfg.world =
 * world; node == world: the world itself takes part as a node). A name
 * that is already there takes the new host as its next incarnation.
 * Returns the node's incarnation (1, 2, ...), or 0 when out of memory. */
uint64_t tend_sim_add(tend_host *world, const char *name, tend_host *node);
/* The node named `name` in world, or -1. */
int tend_sim_find(const tend_host *world, const char *name);
/* Its state, name and incarnation (i from tend_sim_find). */
tend_simnode_state tend_sim_state(const tend_host *world, int i);
uint64_t tend_sim_inc(const tend_host *world, int i);
/* How many nodes (every state); their names by index. */
int tend_sim_count(const tend_host *world);
const char *tend_sim_name(const tend_host *world, int i);
/* The function (at stack index fn of h->L's stack in L) that takes h's
 * deliveries: fn(subject, data). Kept in h's registry. */
void tend_sim_set_dispatch(lua_State *L, tend_host *h, int fn);

/* h (a node) publishes data on subject. */
void tend_sim_publish(tend_host *h, const char *subject, const char *data,
                      size_t len);

/* Node i crashes: its host closes at once (no post_stop runs). */
void tend_sim_crash(tend_host *world, int i);
/* Every node's tree is asked to stop (tend.shutdown there); the world's
 * own node part is left to the caller. */
void tend_sim_stop_all(tend_host *world);

/* The link between nodes i and j (both directions): cut (1: partitioned,
 * -1: unchanged) and latency + jitter in ns (-1: unchanged). */
void tend_sim_link(tend_host *world, int i, int j, int cut, int64_t latency,
                   int64_t jitter);
/* Every link as new: no partition, no latency. */
void tend_sim_heal(tend_host *world);

/* The key-value store (JetStream's, for tend.global). A bucket keeps an
 * entry ttl ns after its last write (0: for ever). Revisions count up
 * from 1 across the store. */
tend_simkv_result tend_simkv_bucket(tend_host *world, const char *bucket,
                                    int64_t ttl);
/* get: *value (borrowed until the next call) and *rev. */
tend_simkv_result tend_simkv_get(tend_host *world, const char *bucket,
                                 const char *key, const char **value,
                                 size_t *len, uint64_t *rev);
/* op: 'c' create, 'u' update (at revision rev), 'p' put; *rev: the new
 * revision. */
tend_simkv_result tend_simkv_write(tend_host *world, char op,
                                   const char *bucket, const char *key,
                                   const char *value, size_t len,
                                   uint64_t *rev);
void tend_simkv_delete(tend_host *world, const char *bucket, const char *key);
/* Pushes the live keys of bucket, sorted, as a list. */
void tend_simkv_push_keys(lua_State *L, tend_host *world, const char *bucket);

/* The world's pump, shutdown and close (driver.h). */
extern const tend_driver tend_simnodes_driver;

#endif
