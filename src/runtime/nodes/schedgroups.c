/* schedgroups: the members of process groups (tend.pg) across the
 * schedulers of a process: one shared list of (group key, scheduler,
 * actor, path, join number) under names_lock. Each scheduler keeps its
 * own members in Lua (lua/tend/pg.lua) and writes them here too; a
 * scheduler reads the others' as proxies. An actor's entries go when it
 * dies (the death hook). Reading a group walks the whole list: linear in
 * the members of every group, fine for groups of hundreds. */
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/nodes/schedrec.h"

static int find(const tend_scheds *s, const char *key, int k, uint32_t id,
                uint32_t gen) {
  for (int i = 0; i < s->n_pg; i++)
    if (s->pg[i].sched == k && s->pg[i].id == id && s->pg[i].gen == gen &&
        strcmp(s->pg[i].key, key) == 0)
      return i;
  return -1;
}

static void drop(tend_scheds *s, int i) {
  s->held_pg[s->pg[i].sched]--;
  free(s->pg[i].key);
  free(s->pg[i].path);
  memmove(&s->pg[i], &s->pg[i + 1],
          (size_t)(s->n_pg - i - 1) * sizeof s->pg[0]); /* order kept */
  s->n_pg--;
}

void tend_schedulers_pg_join(lua_State *L, tend_host *h, const char *key,
                             tend_actor *a) {
  tend_scheds *s = h->scheds;
  if (s == NULL) return;
  tend_actor_push_path(L, h, a);
  const char *path = lua_tostring(L, -1);
  int k = (int)h->sched_index;
  uv_mutex_lock(&s->names_lock);
  if (find(s, key, k, a->id, a->gen) < 0) {
    if (s->n_pg == s->cap_pg) {
      int cap = s->cap_pg ? 2 * s->cap_pg : 16;
      pg_entry *v = realloc(s->pg, (size_t)cap * sizeof *v);
      if (v) {
        s->pg = v;
        s->cap_pg = cap;
      }
    }
    if (s->n_pg < s->cap_pg) { /* (out of memory: not shared) */
      pg_entry *e = &s->pg[s->n_pg];
      *e = (pg_entry){strdup(key), k, a->id, a->gen, strdup(path)};
      if (e->key && e->path) {
        s->n_pg++;
        s->held_pg[k]++;
      } else {
        free(e->key);
        free(e->path);
      }
    }
  }
  uv_mutex_unlock(&s->names_lock);
  lua_pop(L, 1);
}

void tend_schedulers_pg_leave(tend_host *h, const char *key, tend_actor *a) {
  tend_scheds *s = h->scheds;
  if (s == NULL) return;
  uv_mutex_lock(&s->names_lock);
  int i = find(s, key, (int)h->sched_index, a->id, a->gen);
  if (i >= 0) drop(s, i);
  uv_mutex_unlock(&s->names_lock);
}

void tend_sched_pg_forget(tend_host *h, tend_actor *a) {
  tend_scheds *s = h->scheds;
  int k = (int)h->sched_index;
  if (s == NULL || s->held_pg[k] == 0) return; /* most deaths: no lock */
  uv_mutex_lock(&s->names_lock);
  for (int i = s->n_pg - 1; i >= 0; i--)
    if (s->pg[i].sched == k && s->pg[i].id == a->id && s->pg[i].gen == a->gen)
      drop(s, i);
  uv_mutex_unlock(&s->names_lock);
}

/* Copies the other schedulers' members of key (scheduler, id, gen, path),
 * in scheduler order then join order; *n of them, malloc'd (NULL: none). */
static pg_entry *others(tend_scheds *s, int me, const char *key, int *n) {
  *n = 0;
  uv_mutex_lock(&s->names_lock);
  pg_entry *out = s->n_pg ? malloc((size_t)s->n_pg * sizeof *out) : NULL;
  for (int k = 0; out && k < s->n; k++) {
    if (k == me) continue;
    for (int i = 0; i < s->n_pg; i++) {
      if (s->pg[i].sched != k || strcmp(s->pg[i].key, key) != 0) continue;
      out[*n] = s->pg[i];
      out[*n].key = NULL;
      out[*n].path = strdup(s->pg[i].path);
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
  pg_entry *v = others(s, (int)h->sched_index, key, &n);
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
