/* inbox: a task's mailbox, read by tend.receive (see inbox.h). */
#include "runtime/core/inbox.h"

#include <lauxlib.h>
#include <string.h>

#include "runtime/core/error.h"
#include "runtime/core/promise.h"
#include "runtime/core/ref.h"
#include "runtime/core/send.h"
#include "runtime/core/value.h"
#include "runtime/core/watch.h"

int tend_inbox_take(lua_State *L, tend_host *h, tend_actor *a) {
  tend_msg *m;
  if (a->flags & TEND_AF_NOTICES) tend_watch_deliver(a); /* they come next */
  while ((m = tend_queue_pop(&a->mbox.user)) != NULL) {
    a->mbox.n_user--;
    tend_promise_dequeue(h, a, m); /* a request: taken */
    if (m->kind == TEND_MSG_TERMINATED &&
        tend_watch_take(L, h, a, m->sender_id, m->sender_gen) == 0) {
      tend_value_drop(L, h, &m->value); /* unwatched since: dropped */
      tend_msg_release(&h->msgs, m);
      continue;
    }
    uint32_t sid = m->sender_id, sgen = m->sender_gen;
    tend_value_take(L, h, &m->value);
    tend_msg_release(&h->msgs, m);
    if (sid == 0)
      lua_pushnil(L);
    else
      tend_ref_push(L, h, sid, sgen);
    return 1;
  }
  return 0;
}

/* Pushes a few words for the message at idx (for the log line). */
static void describe(lua_State *L, int idx) {
  if (lua_type(L, idx) == LUA_TSTRING) { /* its first 40 bytes, quoted */
    size_t len;
    const char *s = lua_tolstring(L, idx, &len);
    lua_pushliteral(L, "\"");
    lua_pushlstring(L, s, len > 40 ? 40 : len);
    lua_pushstring(L, len > 40 ? "...\"" : "\"");
    lua_concat(L, 3);
  } else if (lua_type(L, idx) == LUA_TNUMBER ||
             lua_type(L, idx) == LUA_TBOOLEAN || lua_type(L, idx) == LUA_TNIL ||
             tend_ref_test(L, idx)) {
    luaL_tolstring(L, idx, NULL);
  } else {
    lua_pushstring(L, tend_typename(L, idx));
  }
}

void tend_inbox_close(lua_State *L, tend_host *h, tend_actor *a) {
  int top = lua_gettop(L);
  int n = 0;
  while (tend_inbox_take(L, h, a)) { /* [msg, sender] */
    if (++n == 1) {
      describe(L, -2);
      if (lua_isnil(L, -2))
        lua_pushliteral(L, "no sender");
      else
        luaL_tolstring(L, -2, NULL);
      lua_replace(L, top + 2); /* [first, from] */
      lua_replace(L, top + 1);
    } else {
      lua_pop(L, 2);
    }
    tend_actor_dead_letter(L, h, a, NULL);
  }
  if (n > 0) {
    tend_actor_push_path(L, h, a);
    tend_host_log(h, TEND_LOG_WARN, lua_tostring(L, -1),
                  "ended with %d unread message%s (dead letters; "
                  "tend.receive reads them); the first: %s from %s",
                  n, n == 1 ? "" : "s", lua_tostring(L, top + 1),
                  lua_tostring(L, top + 2));
  }
  lua_settop(L, top);
}
