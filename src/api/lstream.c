/* lstream: the plumbing of tend.stream (lua/tend/stream.lua): its stage
 * tasks and its trace events. */
#include <string.h>

#include "api/api.h"

/* core.stream_task(parent, name, fn [, args]) -> ref: a task (a function
 * run once that reads its mailbox with tend.receive) made a child of the
 * live actor parent (a stream's supervisor), named name. */
static int l_stream_task(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_ref *r = tend_check_ref(L, 1, "stream_task", "parent");
  luaL_checkstring(L, 2);
  luaL_checktype(L, 3, LUA_TFUNCTION);
  lua_settop(L, 4);
  tend_actor *parent = tend_ref_actor(h, r);
  if (parent == NULL) luaL_error(L, "stream_task: the stream has ended");
  tend_actor_check_spawn(L, h, parent, 2, "stream_task");
  tend_spawn_opts o;
  tend_spawn_opts_init(&o);
  o.name = 2;
  o.args = lua_istable(L, 4) ? 4 : 0;
  o.task = 1;
  tend_actor_spawn(L, h, parent, 3, &o);
  return 1;
}

/* core.on_wait(fn | nil): fn runs each time the current task is about to
 * be suspended in a wait (runtime/tend.h: tend_actor_set_on_wait). */
static int l_on_wait(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_actor *a = tend_host_current(h);
  if (!lua_isnoneornil(L, 1)) luaL_checktype(L, 1, LUA_TFUNCTION);
  lua_settop(L, 1);
  if (a == NULL) return luaL_error(L, "on_wait: only inside an actor");
  tend_actor_set_on_wait(L, a);
  return 0;
}

/* core.watch_restarts(ref): the running actor's watch of ref (made with a
 * message) fires at ref's next restart too: a stream's supervisor ends
 * with its owner's incarnation (runtime/tend.h: tend_watch_also_restarts). */
static int l_watch_restarts(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_ref *r = tend_check_ref(L, 1, "watch_restarts", "ref");
  tend_actor *w = tend_host_current(h);
  if (w == NULL) return luaL_error(L, "watch_restarts: only inside an actor");
  tend_watch_also_restarts(h, w, r->id, r->gen);
  return 0;
}

static const struct {
  const char *name;
  tend_event_kind ev;
} kinds[] = {{"stream_start", TEND_EV_STREAM_START},
             {"stream_complete", TEND_EV_STREAM_COMPLETE},
             {"stream_fail", TEND_EV_STREAM_FAIL},
             {"stream_cancel", TEND_EV_STREAM_CANCEL},
             {"stream_restart", TEND_EV_STREAM_RESTART},
             {"stream_backoff", TEND_EV_STREAM_BACKOFF},
             {"stream_drop", TEND_EV_STREAM_DROP}};

/* core.stream_event(path, ev, {detail, kind, message, count, delay}): a
 * stream's trace event; path is its supervisor's. */
static int l_stream_event(lua_State *L) {
  tend_host *h = tend_host_of(L);
  const char *path = luaL_checkstring(L, 1);
  const char *ev = luaL_checkstring(L, 2);
  luaL_checktype(L, 3, LUA_TTABLE);
  size_t i = 0;
  while (i < sizeof kinds / sizeof kinds[0] && strcmp(kinds[i].name, ev)) i++;
  if (i == sizeof kinds / sizeof kinds[0])
    return luaL_error(L, "stream_event: no event '%s'", ev);
  tend_event e = TEND_EVENT_INIT(kinds[i].ev, NULL);
  e.path = path;
  lua_getfield(L, 3, "detail");
  e.detail = lua_tostring(L, -1);
  lua_getfield(L, 3, "kind");
  e.kind = lua_tostring(L, -1);
  lua_getfield(L, 3, "message");
  e.message = lua_tostring(L, -1);
  lua_getfield(L, 3, "count");
  if (lua_isinteger(L, -1)) e.count = lua_tointeger(L, -1);
  lua_getfield(L, 3, "delay");
  if (lua_isnumber(L, -1)) {
    double s = lua_tonumber(L, -1);
    e.delay_ns = s > 0 ? (int64_t)(s * 1e9 + 0.5) : 0;
  }
  tend_event_emit(L, h, &e);
  return 0;
}

void tend_open_stream(lua_State *L) {
  static const luaL_Reg fns[] = {{"stream_task", l_stream_task},
                                 {"stream_event", l_stream_event},
                                 {"on_wait", l_on_wait},
                                 {"watch_restarts", l_watch_restarts},
                                 {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
}
