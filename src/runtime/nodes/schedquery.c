/* schedquery: a question put to another scheduler about itself (its rows
 * for tend.ps, its counters for tend.stats): a C function of the api run
 * in that scheduler's own state, on its own thread, its one result copied
 * back with the codec (refs in it arrive as proxies). See tend.h. */
#include <lauxlib.h>
#include <string.h>

#include "runtime/nodes/codec.h"
#include "runtime/nodes/schedrec.h"

/* Calls q in L (protected); pushes its result encoded, or the error. */
static int run_encoded(lua_State *L, tend_host *h, lua_CFunction q) {
  lua_pushcfunction(L, q);
  if (lua_pcall(L, 0, 1, 0) != LUA_OK) return -1;
  if (tend_codec_encode_to(L, h, -1, NO_LIMIT, AWAY) != TEND_CODEC_OK) {
    lua_remove(L, -2);
    return -1;
  }
  lua_remove(L, -2);
  return 0;
}

void tend_schedulers_query_now(lua_State *L, tend_host *h, int k,
                               lua_CFunction q, const char *fn) {
  tend_host *kh = h->scheds->h[k];
  lua_State *KL = kh->L; /* one thread under the virtual clock */
  if (run_encoded(KL, kh, q) != 0) {
    lua_pushfstring(L, "%s: scheduler %d: %s", fn, k,
                    luaL_tolstring(KL, -1, NULL));
    lua_pop(KL, 2);
    lua_error(L);
  }
  size_t len;
  const char *bytes = lua_tolstring(KL, -1, &len);
  int ok = tend_codec_decode(L, h, bytes, len) == TEND_CODEC_OK;
  lua_pop(KL, 1);
  if (!ok) lua_error(L);
}

int tend_schedulers_query_request(tend_host *h, int k, lua_CFunction q,
                                  uint32_t ask_id, uint32_t ask_gen) {
  return tend_sched_post(h, k, ENV_QUERY, 0, 0, ask_id, ask_gen, (char *)&q,
                         sizeof q);
}

/* Scheduler h answers the question in e: {value = the result} or
 * {error = why}, to the pending ask (e->a, e->b) of e->from. */
int tend_sched_answer_query(lua_State *L, tend_host *h, const envelope *e) {
  lua_CFunction q;
  if (e->len != sizeof q) return luaL_error(L, "a malformed question");
  memcpy(&q, e->data, sizeof q);
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, q);
  if (lua_pcall(L, 0, 1, 0) != LUA_OK) {
    lua_setfield(L, -2, "error");
  } else {
    lua_setfield(L, -2, "value");
  }
  tend_sched_answer(L, h, e->from, e->a, e->b, -1);
  return 0;
}
