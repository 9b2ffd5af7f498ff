/* schedgroups: the members of process groups (tend.pg) across the
 * schedulers of a process, under names_lock. Each scheduler keeps its
 * own members in Lua (lua/tend/pg.lua) and writes them here too; a
 * scheduler reads the others' as proxies. An actor's entries go when it
 * dies (the death hook).
 *
 * Three chained hash tables of cap_pg chains each: groups by key (each
 * with its members on each scheduler, a list in join order), members
 * by (group, scheduler, actor), members by actor. A join, a leave, a
 * death and a read cost the same with 10 members or 10^5: a read walks
 * the group's own lists, nothing else. */
#include <lauxlib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/nodes/schedrec.h"

struct pg_group {
  pg_group *hnext; /* its chain in pg_groups */
  char *key;
  uint32_t hash;
  size_t n;                             /* members, every scheduler's */
  pg_member *head[TEND_SCHEDULERS_MAX]; /* scheduler k's, join order */
  pg_member *tail[TEND_SCHEDULERS_MAX];
};

struct pg_member {
  pg_member *prev, *next; /* its group's members on its scheduler */
  pg_member *hnext;       /* its chain in pg_members */
  pg_member *anext;       /* its chain in pg_actors */
  pg_group *g;
  int sched;
  uint32_t id, gen;
  char *path;
};

static uint32_t str_hash(const char *k) { /* FNV-1a */
  uint32_t x = 2166136261u;
  for (; *k; k++) x = (x ^ (uint8_t)*k) * 16777619u;
  return x;
}

static size_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return (size_t)x;
}

static size_t actor_slot(const tend_scheds *s, int k, uint32_t id,
                         uint32_t gen) {
  return mix(((uint64_t)id << 32 | gen) ^ (uint64_t)k << 58) & (s->cap_pg - 1);
}

static size_t member_slot(const tend_scheds *s, const pg_group *g, int k,
                          uint32_t id, uint32_t gen) {
  return mix(((uint64_t)id << 32 | gen) ^ (uint64_t)k << 58 ^
             (uint64_t)g->hash * 0x9e3779b97f4a7c15ull) &
         (s->cap_pg - 1);
}

static pg_group *group_of(const tend_scheds *s, const char *key) {
  if (s->cap_pg == 0) return NULL;
  uint32_t hash = str_hash(key);
  for (pg_group *g = s->pg_groups[hash & (s->cap_pg - 1)]; g; g = g->hnext)
    if (g->hash == hash && strcmp(g->key, key) == 0) return g;
  return NULL;
}

static pg_member *member_of(const tend_scheds *s, const pg_group *g, int k,
                            uint32_t id, uint32_t gen) {
  for (pg_member *m = s->pg_members[member_slot(s, g, k, id, gen)]; m;
       m = m->hnext)
    if (m->g == g && m->sched == k && m->id == id && m->gen == gen) return m;
  return NULL;
}

/* The tables at twice the chains (or 64 at first); 0 when out of memory
 * (then unchanged). */
static int grow(tend_scheds *s) {
  size_t cap = s->cap_pg ? 2 * s->cap_pg : 64;
  pg_group **gs = calloc(cap, sizeof *gs);
  pg_member **ms = calloc(cap, sizeof *ms), **as = calloc(cap, sizeof *as);
  if (!gs || !ms || !as) {
    free(gs);
    free(ms);
    free(as);
    return 0;
  }
  size_t old = s->cap_pg;
  pg_group **og = s->pg_groups;
  pg_member **om = s->pg_members, **oa = s->pg_actors;
  s->cap_pg = cap;
  s->pg_groups = gs;
  s->pg_members = ms;
  s->pg_actors = as;
  for (size_t i = 0; i < old; i++) {
    for (pg_group *g = og[i], *gn; g; g = gn) {
      gn = g->hnext;
      g->hnext = gs[g->hash & (cap - 1)];
      gs[g->hash & (cap - 1)] = g;
    }
    for (pg_member *m = om[i], *mn; m; m = mn) { /* each member once */
      mn = m->hnext;
      size_t j = member_slot(s, m->g, m->sched, m->id, m->gen);
      m->hnext = ms[j];
      ms[j] = m;
      j = actor_slot(s, m->sched, m->id, m->gen);
      m->anext = as[j];
      as[j] = m;
    }
  }
  free(og);
  free(om);
  free(oa);
  return 1;
}

/* Unlinks m from its group and the tables and frees it (its group too
 * when it was the last). */
static void drop(tend_scheds *s, pg_member *m) {
  pg_group *g = m->g;
  int k = m->sched;
  if (m->prev)
    m->prev->next = m->next;
  else
    g->head[k] = m->next;
  if (m->next)
    m->next->prev = m->prev;
  else
    g->tail[k] = m->prev;
  pg_member **p = &s->pg_members[member_slot(s, g, k, m->id, m->gen)];
  while (*p != m) p = &(*p)->hnext;
  *p = m->hnext;
  p = &s->pg_actors[actor_slot(s, k, m->id, m->gen)];
  while (*p != m) p = &(*p)->anext;
  *p = m->anext;
  s->held_pg[k]--;
  s->n_pg--;
  free(m->path);
  free(m);
  if (--g->n == 0) {
    pg_group **q = &s->pg_groups[g->hash & (s->cap_pg - 1)];
    while (*q != g) q = &(*q)->hnext;
    *q = g->hnext;
    s->n_pg_groups--;
    free(g->key);
    free(g);
  }
}

/* Adds (key, scheduler k, actor id/gen at path) unless there; out of
 * memory, nothing (not shared). */
static void add(tend_scheds *s, const char *key, int k, uint32_t id,
                uint32_t gen, const char *path) {
  if ((s->cap_pg == 0 || s->n_pg + s->n_pg_groups >= s->cap_pg) && !grow(s) &&
      s->cap_pg == 0)
    return;
  pg_group *g = group_of(s, key);
  if (g && member_of(s, g, k, id, gen)) return;
  pg_member *m = calloc(1, sizeof *m);
  char *p = strdup(path);
  if (!m || !p) goto oom;
  if (g == NULL) {
    g = calloc(1, sizeof *g);
    if (!g || !(g->key = strdup(key))) {
      free(g);
      goto oom;
    }
    g->hash = str_hash(key);
    size_t j = g->hash & (s->cap_pg - 1);
    g->hnext = s->pg_groups[j];
    s->pg_groups[j] = g;
    s->n_pg_groups++;
  }
  *m = (pg_member){
      .prev = g->tail[k], .g = g, .sched = k, .id = id, .gen = gen, .path = p};
  if (g->tail[k])
    g->tail[k]->next = m;
  else
    g->head[k] = m;
  g->tail[k] = m;
  size_t j = member_slot(s, g, k, id, gen);
  m->hnext = s->pg_members[j];
  s->pg_members[j] = m;
  j = actor_slot(s, k, id, gen);
  m->anext = s->pg_actors[j];
  s->pg_actors[j] = m;
  g->n++;
  s->n_pg++;
  s->held_pg[k]++;
  return;
oom:
  free(m);
  free(p);
}

void tend_schedulers_pg_join(lua_State *L, tend_host *h, const char *key,
                             tend_actor *a) {
  tend_scheds *s = h->scheds;
  if (s == NULL) return;
  tend_actor_push_path(L, h, a);
  const char *path = lua_tostring(L, -1);
  uv_mutex_lock(&s->names_lock);
  add(s, key, (int)h->sched_index, a->id, a->gen, path);
  uv_mutex_unlock(&s->names_lock);
  lua_pop(L, 1);
}

void tend_schedulers_pg_leave(tend_host *h, const char *key, tend_actor *a) {
  tend_scheds *s = h->scheds;
  if (s == NULL) return;
  uv_mutex_lock(&s->names_lock);
  pg_group *g = group_of(s, key);
  pg_member *m = g ? member_of(s, g, (int)h->sched_index, a->id, a->gen) : NULL;
  if (m) drop(s, m);
  uv_mutex_unlock(&s->names_lock);
}

void tend_sched_pg_forget(tend_host *h, tend_actor *a) {
  tend_scheds *s = h->scheds;
  int k = (int)h->sched_index;
  if (s == NULL || s->held_pg[k] == 0) return; /* most deaths: no lock */
  uv_mutex_lock(&s->names_lock);
  for (pg_member *m = s->pg_actors[actor_slot(s, k, a->id, a->gen)], *n; m;
       m = n) {
    n = m->anext;
    if (m->sched == k && m->id == a->id && m->gen == a->gen) drop(s, m);
  }
  uv_mutex_unlock(&s->names_lock);
}

/* Copies the other schedulers' members of key (scheduler, id, gen, path),
 * in scheduler order then join order; *n of them, malloc'd (NULL: none). */
static pg_member *others(tend_scheds *s, int me, const char *key, int *n) {
  *n = 0;
  uv_mutex_lock(&s->names_lock);
  pg_group *g = group_of(s, key);
  pg_member *out = g ? malloc(g->n * sizeof *out) : NULL;
  for (int k = 0; out && k < s->n; k++) {
    if (k == me) continue;
    for (pg_member *m = g->head[k]; m; m = m->next) {
      out[*n] = *m;
      out[*n].path = strdup(m->path);
      if (out[*n].path) (*n)++;
    }
  }
  uv_mutex_unlock(&s->names_lock);
  return out;
}

void tend_schedulers_pg_push(lua_State *L, tend_host *h, const char *key) {
  lua_newtable(L);
  tend_scheds *s = h->scheds;
  if (s == NULL) return;
  int list = lua_gettop(L), n;
  pg_member *v = others(s, (int)h->sched_index, key, &n);
  for (int i = 0; i < n; i++) {
    lua_createtable(L, 2, 0);
    lua_pushinteger(L, v[i].sched);
    lua_rawseti(L, -2, 1);
    lua_pushstring(L, v[i].path);
    tend_schedulers_push_proxy(L, h, v[i].sched, v[i].id, v[i].gen, -1, 0);
    lua_remove(L, -2);
    lua_rawseti(L, -2, 2);
    lua_rawseti(L, list, i + 1);
    free(v[i].path);
  }
  free(v);
}

void tend_sched_pg_free(tend_scheds *s) {
  for (size_t i = 0; i < s->cap_pg; i++) {
    for (pg_member *m = s->pg_members[i], *n; m; m = n) {
      n = m->hnext;
      free(m->path);
      free(m);
    }
    for (pg_group *g = s->pg_groups[i], *n; g; g = n) {
      n = g->hnext;
      free(g->key);
      free(g);
    }
  }
  free(s->pg_groups);
  free(s->pg_members);
  free(s->pg_actors);
}
