/* stash: any actor's stash (see stash.h). */
#include "runtime/supervision/stash.h"

#include <lauxlib.h>
#include <stdlib.h>

#include "runtime/core/error.h"
#include "runtime/core/promise.h"
#include "runtime/core/send.h"
#include "runtime/core/value.h"

/* Its address marks the current message once it is kept. */
static const char stashed_mark = 0;

void tend_stash_enable(lua_State *L, tend_actor *a, uint32_t capacity) {
  tend_actor_ext *x = tend_actor_ext_get(a);
  tend_stash *s = x && !x->stash ? calloc(1, sizeof *s) : NULL;
  if (s == NULL) luaL_error(L, "spawn: out of memory (stash)");
  lua_pushboolean(L, 0);
  s->current_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  s->capacity = capacity;
  x->stash = s;
  x->receiving_ref = s->current_ref; /* the scheduler keeps it there */
}

void tend_stash_push(lua_State *L, tend_host *h, tend_actor *a,
                     const char *fn) {
  tend_stash *s = a->ext ? a->ext->stash : NULL;
  if (s == NULL)
    luaL_error(L,
               "%s: this actor has no stash: spawn it with the option "
               "stash = n (its bound), as an Akka actor mixes in Stash",
               fn);
  if (a->op != TEND_OP_RECEIVE)
    luaL_error(L,
               "%s: only while the actor handles a message (in its "
               "behavior or receive hook)",
               fn);
  int top = lua_gettop(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, s->current_ref);
  if (lua_touserdata(L, -1) == &stashed_mark)
    luaL_error(L, "%s: this message is in the stash already", fn);
  if (s->n >= s->capacity) {
    tend_actor_push_path(L, h, a);
    lua_pushfstring(L, "the stash of %s is full (capacity %d)",
                    lua_tostring(L, -1), (int)s->capacity);
    tend_error_new(L, TEND_ERR_NAME(STASH_OVERFLOW), lua_tostring(L, -1));
    lua_error(L);
  }
  tend_msg *m = tend_msg_alloc(&h->msgs);
  if (m == NULL) luaL_error(L, "%s: out of memory", fn);
  if (tend_value_store(L, h, -1, &m->value) != 0) {
    tend_msg_release(&h->msgs, m);
    luaL_error(L, "%s: out of message slots", fn);
  }
  m->kind = TEND_MSG_USER;
  m->sender_id = a->sender_id;
  m->sender_gen = a->sender_gen;
  tend_queue_push(&s->q, m);
  s->n++;
  lua_pushlightuserdata(L, (void *)&stashed_mark);
  lua_rawseti(L, LUA_REGISTRYINDEX, s->current_ref);
  lua_settop(L, top);
}

uint32_t tend_stash_unstash_all(tend_host *h, tend_actor *a) {
  tend_stash *s = a->ext ? a->ext->stash : NULL;
  if (s == NULL || s->n == 0) return 0;
  uint32_t n = s->n;
  for (tend_msg *m = s->q.head; m; m = m->next)
    tend_promise_enqueue(h, a, m); /* requests queued again (promise.h) */
  s->q.tail->next = a->mbox.user.head;
  if (a->mbox.user.head == NULL) a->mbox.user.tail = s->q.tail;
  a->mbox.user.head = s->q.head;
  a->mbox.n_user += n;
  s->q.head = s->q.tail = NULL;
  s->n = 0;
  return n;
}

uint32_t tend_stash_size(const tend_actor *a) {
  return a->ext && a->ext->stash ? a->ext->stash->n : 0;
}

void tend_stash_drop(lua_State *L, tend_host *h, tend_actor *a) {
  tend_stash *s = a->ext ? a->ext->stash : NULL;
  if (s == NULL) return;
  tend_msg *m;
  while ((m = tend_queue_pop(&s->q)) != NULL) {
    tend_actor_dead_letter(L, h, a, &m->value);
    tend_msg_release(&h->msgs, m);
  }
  s->n = 0;
}

void tend_stash_free(lua_State *L, tend_host *h, tend_actor *a) {
  if (a->ext == NULL || a->ext->stash == NULL) return;
  tend_stash_drop(L, h, a);
  luaL_unref(L, LUA_REGISTRYINDEX, a->ext->stash->current_ref);
  a->ext->receiving_ref = 0;
  free(a->ext->stash);
  a->ext->stash = NULL;
}

const tend_driver tend_stash_driver = {.name = "stash",
                                       .rebuild = tend_stash_drop,
                                       .death = tend_stash_free,
                                       .release = tend_stash_free};
