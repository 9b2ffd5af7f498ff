/* value: inline or table-held message values (see value.h). */
#include "runtime/value.h"

#include <stdlib.h>

/* A free slot whose old value is still in the store (see host.h). */
#define TEND_VALUE_DIRTY 0x80000000u

static uint32_t take_slot(tend_host *h) {
  if (h->n_free_values) { /* a dirty one is overwritten by the caller */
    uint32_t slot = h->free_values[--h->n_free_values] & ~TEND_VALUE_DIRTY;
    if (h->dirty_from > h->n_free_values) h->dirty_from = h->n_free_values;
    return slot;
  }
  return ++h->values_top;
}

/* slot may carry TEND_VALUE_DIRTY. */
static int give_slot(tend_host *h, uint32_t slot) {
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
      if (h->n_free_values == 0 && h->values_top == ~TEND_VALUE_DIRTY)
        return -1;
      uint32_t slot = take_slot(h);
      if (store) { /* the caller holds the store (an upvalue) */
        lua_pushvalue(L, idx);
        lua_rawseti(L, store, slot);
      } else {
        idx = lua_absindex(L, idx);
        lua_rawgeti(L, LUA_REGISTRYINDEX, h->values_ref); /* push store */
        lua_pushvalue(L, idx);
        lua_rawseti(L, -2, slot); /* store[slot] = value */
        lua_pop(L, 1);            /* pop store */
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
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->values_ref);
  lua_rawgeti(L, -1, v->u.slot);
  lua_remove(L, -2); /* leave only the value */
}

void tend_value_take(lua_State *L, tend_host *h, tend_value *v) {
  if (v->type != TEND_VALUE_REF) {
    push_inline(L, v);
    return;
  }
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->values_ref);
  lua_rawgeti(L, -1, v->u.slot);
  lua_pushnil(L);
  lua_rawseti(L, -3, v->u.slot); /* store[slot] = nil */
  lua_replace(L, -2);            /* leave only the value */
  give_slot(h, v->u.slot);
  v->type = TEND_VALUE_NIL;
}

void tend_value_take_at(lua_State *L, tend_host *h, tend_value *v, int store) {
  if (v->type != TEND_VALUE_REF) {
    push_inline(L, v);
    return;
  }
  lua_rawgeti(L, store, v->u.slot);
  /* the store keeps the value until the slot is reused or swept (a store
   * of nil per message saved); if the free list cannot grow, clear it now */
  if (give_slot(h, v->u.slot | TEND_VALUE_DIRTY) != 0) {
    lua_pushnil(L);
    lua_rawseti(L, store, v->u.slot);
  }
  v->type = TEND_VALUE_NIL;
}

void tend_value_sweep(lua_State *L, tend_host *h) {
  if (h->dirty_from >= h->n_free_values) return;
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->values_ref); /* push store */
  for (uint32_t i = h->dirty_from; i < h->n_free_values; i++) {
    if (!(h->free_values[i] & TEND_VALUE_DIRTY)) continue;
    h->free_values[i] &= ~TEND_VALUE_DIRTY;
    lua_pushnil(L);
    lua_rawseti(L, -2, h->free_values[i]); /* store[slot] = nil */
  }
  lua_pop(L, 1); /* pop store */
  h->dirty_from = h->n_free_values;
}

void tend_value_drop(lua_State *L, tend_host *h, tend_value *v) {
  if (v->type == TEND_VALUE_REF) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, h->values_ref);
    lua_pushnil(L);
    lua_rawseti(L, -2, v->u.slot);
    lua_pop(L, 1);
    give_slot(h, v->u.slot);
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
