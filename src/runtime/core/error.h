/* error: structured error values (design §3.2): a table {kind, message,
 * traceback, ...} with metatable "tend.Error" (whose methods the API layer
 * adds). Every error an actor raises passes through the message handler
 * (tend_error_push_handler), so it has a kind and a traceback by the time its
 * supervisor sees it. */
#ifndef TEND_ERROR_H
#define TEND_ERROR_H

#include <lauxlib.h>
#include <lua.h>

#include "runtime/core/errkind.h"

#define TEND_ERROR_MT "tend.Error"

/* Pushes a new error value {kind, message}. */
void tend_error_new(lua_State *L, const char *kind, const char *message);
/* Is the value at idx an error value? */
int tend_error_is(lua_State *L, int idx);
/* Adds "src:line: " of the function at level to b (luaL_where's words,
 * without printf), or nothing when the level has no line. */
void tend_error_add_where(luaL_Buffer *b, lua_State *L, int level);
/* Pushes "src:line: " of the function at level followed by the string
 * at idx (luaL_where's words and the message, one string made once), or
 * that string alone when the level has no line. */
void tend_error_push_where_msg(lua_State *L, int level, int idx);
/* Pushes a traceback of L1 from level (luaL_traceback's format). */
void tend_traceback(lua_State *L, lua_State *L1, int level);
/* Pushes the message handler for lua_pcall: it turns any error into an
 * error value with a traceback. */
void tend_error_push_handler(lua_State *L);
/* Pushes an error of kind, message "prefix: <the error at idx>", that
 * keeps the error at idx as its cause (and its traceback). */
void tend_error_wrap(lua_State *L, int idx, const char *kind,
                     const char *prefix);
/* Pushes "kind: message" for the error value at idx. */
void tend_error_describe(lua_State *L, int idx);
/* For an error value whose kind says the environment refused the
 * configuration (the kinds errkind.h marks brief: a server down, a port
 * taken), pushes its one line "src:line: Kind: message" (the first level
 * of its traceback outside tend, when it has no `where`) and returns 1:
 * a traceback into tend would only hide that line. Else pushes nothing
 * and returns 0. */
int tend_error_push_brief(lua_State *L, int idx);
/* Raises Interrupted (Ctrl-C at the REPL). */
int tend_error_interrupted(lua_State *L);
/* A type name for error messages ("an actor ref", "a table", ...). */
const char *tend_typename(lua_State *L, int idx);

#endif
