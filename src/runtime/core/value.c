/* value: inline or stored message values (see value.h). A stored value
 * sits at a slot: slots 1..TEND_FAST_VALUES are user values of one
 * userdata (lua_setiuservalue/lua_getiuservalue: no hashing, no table
 * resize; about 90 instructions per message fewer than a table, callgrind),
 * the slots above it in a table, for bursts. A fast slot is handed out
 * before any table slot. */
#include "runtime/core/value.h"

#include <lauxlib.h>
#include <stdlib.h>

/* A free fast slot whose old value is still in the store (see host.h). */
#define TEND_VALUE_DIRTY 0x8000u

#define IS_FAST(slot) ((slot) <= TEND_FAST_VALUES)
_Static_assert(TEND_FAST_VALUES < TEND_VALUE_DIRTY, "a fast slot and its bit");

void tend_value_push_store(lua_State *L, tend_host *h) {
  if (h->values_fast_ref == 0) {
    lua_newuserdatauv(L, 0, TEND_FAST_VALUES);
    lua_pushvalue(L, -1);
    h->values_fast_ref = luaL_ref(L, LUA_REGISTRYINDEX); /* with the state */
    return;
  }
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->values_fast_ref);
}

/* A free slot, or 0 when none is left. */
static uint32_t take_slot(lua_State *L, tend_host *h) {
  if (h->n_free_fast) { /* a dirty one is overwritten by the caller */
    uint32_t slot = h->free_fast[--h->n_free_fast] & ~TEND_VALUE_DIRTY;
    if (h->dirty_from > h->n_free_fast) h->dirty_from = h->n_free_fast;
    return slot;
  }
  if (h->fast_top < TEND_FAST_VALUES) {
    if (h->values_fast_ref == 0) { /* made on first use */
      tend_value_push_store(L, h);
      lua_pop(L, 1);
    }
    return ++h->fast_top;
  }
  if (h->n_free_values) return h->free_values[--h->n_free_values];
  if (h->values_top == UINT32_MAX - TEND_FAST_VALUES) return 0;
  return TEND_FAST_VALUES + ++h->values_top;
}

/* slot is free again; dirty: a fast one that still holds its value. */
static int give_slot(tend_host *h, uint32_t slot, int dirty) {
  if (IS_FAST(slot)) { /* each fast slot is free once: never overflows */
    h->free_fast[h->n_free_fast++] =
        (uint16_t)(dirty ? slot | TEND_VALUE_DIRTY : slot);
    return 0;
  }
  if (h->n_free_values == h->cap_free_values) {
    uint32_t cap = h->cap_free_values ? h->cap_free_values * 2 : 256;
    uint32_t *v = realloc(h->free_values, cap * sizeof *v);
    if (v == NULL) return -1; /* slot leaks; its value was cleared */
    h->free_values = v;
    h->cap_free_values = cap;
  }
  h->free_values[h->n_free_values++] = slot;
  return 0;
}

/* Pushes the store that holds slot (the fast one, or the table). */
static void push_store_of(lua_State *L, tend_host *h, uint32_t slot) {
  lua_rawgeti(L, LUA_REGISTRYINDEX,
              IS_FAST(slot) ? h->values_fast_ref : h->values_ref);
}

/* store[slot] = the value at the top (popped); store at index at. */
static void set_slot(lua_State *L, int at, uint32_t slot) {
  if (IS_FAST(slot))
    lua_setiuservalue(L, at, (int)slot);
  else
    lua_rawseti(L, at, slot);
}

/* Pushes store[slot]; store at index at. */
static void get_slot(lua_State *L, int at, uint32_t slot) {
  if (IS_FAST(slot))
    lua_getiuservalue(L, at, (int)slot);
  else
    lua_rawgeti(L, at, slot);
}

int tend_value_store(lua_State *L, tend_host *h, int idx, tend_value *out) {
  return tend_value_store_in(L, h, idx, out, 0);
}

int tend_value_store_in(lua_State *L, tend_host *h, int idx, tend_value *out,
                        int store) {
  switch (lua_type(L, idx)) {
    case LUA_TNIL:
    case LUA_TNONE: out->type = TEND_VALUE_NIL; return 0;
    case LUA_TBOOLEAN:
      out->type = lua_toboolean(L, idx) ? TEND_VALUE_TRUE : TEND_VALUE_FALSE;
      return 0;
    case LUA_TNUMBER:
      if (lua_isinteger(L, idx)) {
        out->type = TEND_VALUE_INT;
        out->u.i = lua_tointeger(L, idx);
      } else {
        out->type = TEND_VALUE_NUM;
        out->u.n = lua_tonumber(L, idx);
      }
      return 0;
    default: {
      uint32_t slot = take_slot(L, h);
      if (slot == 0) return -1;
      if (store && IS_FAST(slot)) { /* the caller holds the fast store */
        lua_pushvalue(L, idx);
        lua_setiuservalue(L, store, (int)slot);
      } else {
        idx = lua_absindex(L, idx);
        push_store_of(L, h, slot);
        lua_pushvalue(L, idx);
        set_slot(L, -2, slot); /* store[slot] = value */
        lua_pop(L, 1);         /* pop store */
      }
      out->type = TEND_VALUE_REF;
      out->u.slot = slot;
      return 0;
    }
  }
}

static void push_inline(lua_State *L, const tend_value *v) {
  switch (v->type) {
    case TEND_VALUE_NIL: lua_pushnil(L); break;
    case TEND_VALUE_FALSE: lua_pushboolean(L, 0); break;
    case TEND_VALUE_TRUE: lua_pushboolean(L, 1); break;
    case TEND_VALUE_INT: lua_pushinteger(L, (lua_Integer)v->u.i); break;
    case TEND_VALUE_NUM: lua_pushnumber(L, v->u.n); break;
    case TEND_VALUE_REF: break;
  }
}

void tend_value_push(lua_State *L, tend_host *h, const tend_value *v) {
  if (v->type != TEND_VALUE_REF) {
    push_inline(L, v);
    return;
  }
  push_store_of(L, h, v->u.slot);
  get_slot(L, -1, v->u.slot);
  lua_remove(L, -2); /* leave only the value */
}

void tend_value_take(lua_State *L, tend_host *h, tend_value *v) {
  if (v->type != TEND_VALUE_REF) {
    push_inline(L, v);
    return;
  }
  push_store_of(L, h, v->u.slot);
  get_slot(L, -1, v->u.slot);
  lua_pushnil(L);
  set_slot(L, -3, v->u.slot); /* store[slot] = nil */
  lua_replace(L, -2);         /* leave only the value */
  give_slot(h, v->u.slot, 0);
  v->type = TEND_VALUE_NIL;
}

void tend_value_take_at(lua_State *L, tend_host *h, tend_value *v, int store) {
  if (v->type != TEND_VALUE_REF) {
    push_inline(L, v);
    return;
  }
  if (!IS_FAST(v->u.slot)) {
    tend_value_take(L, h, v);
    return;
  }
  /* the store keeps the value until the slot is reused or swept (a store
   * of nil per message saved) */
  lua_getiuservalue(L, store, (int)v->u.slot);
  give_slot(h, v->u.slot, 1);
  v->type = TEND_VALUE_NIL;
}

void tend_value_sweep(lua_State *L, tend_host *h) {
  if (h->dirty_from >= h->n_free_fast) return;
  tend_value_push_store(L, h);
  for (uint32_t i = h->dirty_from; i < h->n_free_fast; i++) {
    if (!(h->free_fast[i] & TEND_VALUE_DIRTY)) continue;
    h->free_fast[i] &= (uint16_t)~TEND_VALUE_DIRTY;
    lua_pushnil(L);
    lua_setiuservalue(L, -2, h->free_fast[i]); /* store[slot] = nil */
  }
  lua_pop(L, 1); /* pop store */
  h->dirty_from = h->n_free_fast;
}

void tend_value_drop(lua_State *L, tend_host *h, tend_value *v) {
  if (v->type == TEND_VALUE_REF) {
    push_store_of(L, h, v->u.slot);
    lua_pushnil(L);
    set_slot(L, -2, v->u.slot);
    lua_pop(L, 1);
    give_slot(h, v->u.slot, 0);
  }
  v->type = TEND_VALUE_NIL;
}

static int gettable_p(lua_State *L) {
  lua_gettable(L, 1);
  return 1;
}

static int raise_upvalue(lua_State *L) {
  lua_pushvalue(L, lua_upvalueindex(1));
  return lua_error(L);
}

int tend_value_hook(lua_State *L, int idx, const char *k) {
  idx = lua_absindex(L, idx);
  if (!lua_getmetatable(L, idx)) return lua_getfield(L, idx, k);
  lua_pop(L, 1); /* its __index may run Lua code: protected */
  lua_pushcfunction(L, gettable_p);
  lua_pushvalue(L, idx);
  lua_pushstring(L, k);
  if (lua_pcall(L, 2, 1, 0) == LUA_OK) return lua_type(L, -1);
  lua_pushcclosure(L, raise_upvalue, 1); /* calling it raises the error */
  return LUA_TFUNCTION;
}
