/* schednames: names across the schedulers of a process (see
 * schedulers.h): the children of /user have names unique across them,
 * and a registered name (tend.register) names one actor of any of them;
 * both lists are shared, under names_lock. */
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/nodes/schedrec.h"

void tend_schedulers_claim_name(lua_State *L, tend_host *h, int name,
                                const char *fn) {
  tend_scheds *s = h->scheds;
  if (s == NULL) return;
  const char *n = lua_tostring(L, name);
  int taken = -1;
  uv_mutex_lock(&s->names_lock);
  for (int i = 0; i < s->n_names && taken < 0; i++)
    if (strcmp(s->names[i].name, n) == 0) taken = s->names[i].sched;
  char *copy = taken < 0 ? strdup(n) : NULL;
  if (copy && s->n_names == s->cap_names) {
    int cap = s->cap_names ? 2 * s->cap_names : 16;
    user_name *v = realloc(s->names, (size_t)cap * sizeof *v);
    if (v) {
      s->names = v;
      s->cap_names = cap;
    }
  }
  if (copy && s->n_names < s->cap_names)
    s->names[s->n_names++] = (user_name){copy, (int)h->sched_index, 0, 0};
  else
    free(copy);
  uv_mutex_unlock(&s->names_lock);
  if (taken >= 0)
    luaL_error(L,
               "%s: name '%s' is already taken: /user/%s exists on "
               "scheduler %d",
               fn, n, n, taken);
}

void tend_schedulers_bind_name(lua_State *L, tend_host *h, tend_actor *a) {
  tend_scheds *s = h->scheds;
  if (s == NULL) return;
  tend_actor_push_path(L, h, a);
  const char *n = lua_tostring(L, -1) + strlen("/user/");
  uv_mutex_lock(&s->names_lock);
  for (int i = 0; i < s->n_names; i++)
    if (s->names[i].sched == (int)h->sched_index &&
        strcmp(s->names[i].name, n) == 0) {
      s->names[i].id = a->id;
      s->names[i].gen = a->gen;
      break;
    }
  uv_mutex_unlock(&s->names_lock);
  lua_pop(L, 1);
}

/* The name of a's (a child of /user) goes. */
void tend_sched_release_name(lua_State *L, tend_host *h, tend_actor *a) {
  tend_scheds *s = h->scheds;
  tend_actor_push_path(L, h, a);
  const char *n = lua_tostring(L, -1) + strlen("/user/");
  uv_mutex_lock(&s->names_lock);
  for (int i = 0; i < s->n_names; i++) {
    if (s->names[i].sched != (int)h->sched_index ||
        strcmp(s->names[i].name, n) != 0)
      continue;
    free(s->names[i].name);
    s->names[i] = s->names[--s->n_names];
    break;
  }
  uv_mutex_unlock(&s->names_lock);
  lua_pop(L, 1);
}

/* ------------------------------------------------------------ registered */

static int find_reg(tend_scheds *s, const char *name) {
  for (int i = 0; i < s->n_regs; i++)
    if (strcmp(s->regs[i].name, name) == 0) return i;
  return -1;
}

int tend_schedulers_reg_claim(lua_State *L, tend_host *h, tend_actor *a,
                              const char *name) {
  tend_scheds *s = h->scheds;
  if (s == NULL) return -1;
  tend_actor_push_path(L, h, a); /* (kept on the stack while used) */
  const char *path = lua_tostring(L, -1);
  int taken = -1;
  uv_mutex_lock(&s->names_lock);
  int i = find_reg(s, name);
  if (i >= 0) {
    taken = s->regs[i].sched;
  } else {
    if (s->n_regs == s->cap_regs) {
      int cap = s->cap_regs ? 2 * s->cap_regs : 16;
      reg_name *v = realloc(s->regs, (size_t)cap * sizeof *v);
      if (v) {
        s->regs = v;
        s->cap_regs = cap;
      }
    }
    if (s->n_regs < s->cap_regs) { /* (out of memory: not shared) */
      reg_name *r = &s->regs[s->n_regs];
      *r = (reg_name){strdup(name), (int)h->sched_index, a->id, a->gen,
                      strdup(path)};
      if (r->name && r->path) {
        s->n_regs++;
        s->held[h->sched_index]++;
      } else {
        free(r->name);
        free(r->path);
      }
    }
  }
  uv_mutex_unlock(&s->names_lock);
  lua_pop(L, 1);
  return taken;
}

static void drop_reg(tend_scheds *s, int i) {
  s->held[s->regs[i].sched]--;
  free(s->regs[i].name);
  free(s->regs[i].path);
  s->regs[i] = s->regs[--s->n_regs];
}

void tend_schedulers_reg_release(tend_host *h, const char *name) {
  tend_scheds *s = h->scheds;
  if (s == NULL) return;
  uv_mutex_lock(&s->names_lock);
  int i = find_reg(s, name);
  if (i >= 0 && s->regs[i].sched == (int)h->sched_index) drop_reg(s, i);
  uv_mutex_unlock(&s->names_lock);
}

void tend_sched_reg_forget(tend_host *h, tend_actor *a) {
  tend_scheds *s = h->scheds;
  /* (the names driver, before this one, has cleared a's registered flag;
     the list is short: only registered names are in it) */
  if (s == NULL || a->kind != TEND_ENTITY_ACTOR) return;
  if (s->held[h->sched_index] == 0) return; /* most deaths: no lock */
  uv_mutex_lock(&s->names_lock);
  for (int i = 0; i < s->n_regs; i++)
    if (s->regs[i].sched == (int)h->sched_index && s->regs[i].id == a->id &&
        s->regs[i].gen == a->gen) {
      drop_reg(s, i);
      break;
    }
  uv_mutex_unlock(&s->names_lock);
}

int tend_schedulers_reg_push(lua_State *L, tend_host *h, const char *name) {
  tend_scheds *s = h->scheds;
  if (s == NULL) return 0;
  int k = -1;
  uint32_t id = 0, gen = 0;
  const char *top = strncmp(name, "/user/", 6) == 0 && name[6] &&
                            strchr(name + 6, '/') == NULL
                        ? name + 6
                        : NULL; /* a path: a child of /user */
  uv_mutex_lock(&s->names_lock);
  int i = top ? -1 : find_reg(s, name);
  if (i >= 0 && s->regs[i].sched != (int)h->sched_index) {
    k = s->regs[i].sched;
    id = s->regs[i].id;
    gen = s->regs[i].gen;
    lua_pushstring(L, s->regs[i].path);
  }
  for (int j = 0; top && j < s->n_names; j++)
    if (s->names[j].sched != (int)h->sched_index && s->names[j].id != 0 &&
        strcmp(s->names[j].name, top) == 0) {
      k = s->names[j].sched;
      id = s->names[j].id;
      gen = s->names[j].gen;
      lua_pushstring(L, name);
      break;
    }
  uv_mutex_unlock(&s->names_lock);
  if (k < 0) return 0;
  tend_schedulers_push_proxy(L, h, k, id, gen, -1, 0);
  lua_remove(L, -2);
  return 1;
}

void tend_schedulers_reg_names(lua_State *L, tend_host *h) {
  tend_scheds *s = h->scheds;
  if (s == NULL) return;
  int list = lua_gettop(L);
  uv_mutex_lock(&s->names_lock);
  for (int i = 0; i < s->n_regs; i++) {
    if (s->regs[i].sched == (int)h->sched_index) continue;
    lua_pushstring(L, s->regs[i].name);
    lua_rawseti(L, list, (lua_Integer)lua_rawlen(L, list) + 1);
  }
  uv_mutex_unlock(&s->names_lock);
}

void tend_sched_names_free(tend_scheds *s) {
  for (int i = 0; i < s->n_names; i++) free(s->names[i].name);
  free(s->names);
  for (int i = 0; i < s->n_regs; i++) {
    free(s->regs[i].name);
    free(s->regs[i].path);
  }
  free(s->regs);
  tend_sched_pg_free(s);
}
