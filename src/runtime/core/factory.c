/* factory: "module.field" resolved to a function (tend.h). */
#include <string.h>

#include "runtime/tend.h"

void tend_factory_push(lua_State *L, const char *spec, const char *fn) {
  const char *sep = fn ? ": " : "";
  if (fn == NULL) fn = "";
  const char *dot = strrchr(spec, '.');
  if (dot == NULL || dot == spec || dot[1] == '\0')
    luaL_error(L,
               "%s%sfactory: expected a function or \"module.factory\", "
               "got \"%s\"",
               fn, sep, spec);
  lua_getglobal(L, "require");
  lua_pushlstring(L, spec, (size_t)(dot - spec));
  lua_call(L, 1, 1);
  if (!lua_istable(L, -1))
    luaL_error(L, "%s%sfactory: module '%s' is not a table", fn, sep,
               lua_tostring(L, -2));
  lua_getfield(L, -1, dot + 1);
  if (!lua_isfunction(L, -1))
    luaL_error(L, "%s%sfactory: '%s' is not a function", fn, sep, spec);
  lua_remove(L, -2);
}
