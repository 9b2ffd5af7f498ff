/* lhttp: the real half of tend.http (lua/tend/http.lua picks it, or the
 * simulated network under the virtual clock): core.http_check checks the
 * options of tend.http.request, core.http_request makes the request (the
 * actor waits), core.http_in_flight counts what is in flight. */
#include <lauxlib.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#include "api/api.h"

#define FN "tend.http.request"
#define HTTP_REQUEST_MT "tend.HttpRequest"
#define DEFAULT_TIMEOUT 30.0        /* seconds */
#define DEFAULT_MAX_BODY (16 << 20) /* bytes of a response body */
#define HANDLE 10 /* stack index of the request's handle (after options) */

static const char *const option_names[] = {
    "method", "url", "headers", "body", "timeout", "max_body", NULL};
static const char *const methods[] = {"GET",   "HEAD",   "POST",    "PUT",
                                      "PATCH", "DELETE", "OPTIONS", NULL};

/* The index in methods of the method at idx (nil: GET; any case), or -1. */
static int method_at(lua_State *L, int idx) {
  if (lua_isnil(L, idx)) return 0;
  if (lua_type(L, idx) != LUA_TSTRING) return -1;
  const char *m = lua_tostring(L, idx);
  for (int i = 0; methods[i]; i++)
    if (strcasecmp(m, methods[i]) == 0) return i;
  return -1;
}

/* Is s an HTTP token (a header name): letters, digits and !#$%&'*+-.^_`|~ */
static int is_token(const char *s, size_t n) {
  if (n == 0) return 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (!(c > 32 && c < 127 && !strchr("\"(),/:;<=>?@[\\]{}", c))) return 0;
  }
  return 1;
}

/* Checks the headers table at idx; pushes a userdata holding the NULL-ended
 * array of "Name: value" lines, and the table of those strings (they
 * stay alive while both are on the stack). */
static const char *const *check_headers(lua_State *L, int idx) {
  int n = 0;
  if (!lua_isnil(L, idx)) {
    if (!lua_istable(L, idx))
      tend_bad_option(L, FN, "headers", "a table of name = value strings", idx);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
      size_t kn, vn;
      const char *k =
          lua_type(L, -2) == LUA_TSTRING ? lua_tolstring(L, -2, &kn) : NULL;
      if (k == NULL || !is_token(k, kn))
        luaL_error(L,
                   "%s: option 'headers': expected names that are HTTP "
                   "tokens (no space, ':' or control character), got %s",
                   FN, k ? k : tend_typename(L, -2));
      if (lua_type(L, -1) != LUA_TSTRING)
        luaL_error(L, "%s: option 'headers': %s: expected a string, got %s", FN,
                   k, tend_typename(L, -1));
      const char *v = lua_tolstring(L, -1, &vn);
      if (strcspn(v, "\r\n") != vn)
        luaL_error(L,
                   "%s: option 'headers': %s: expected a value without CR, "
                   "LF or NUL",
                   FN, k);
      lua_pop(L, 1);
      n++;
    }
  }
  const char **lines = lua_newuserdatauv(L, sizeof *lines * (size_t)(n + 1), 0);
  lua_createtable(L, n, 0);
  int i = 0;
  if (n > 0) {
    lua_pushnil(L);
    while (lua_next(L, idx)) {
      /* an empty value: curl sends "Name;" for "Name:" would remove it */
      lua_pushfstring(L, lua_rawlen(L, -1) ? "%s: %s" : "%s;",
                      lua_tostring(L, -2), lua_tostring(L, -1));
      lines[i++] = lua_tostring(L, -1);
      lua_rawseti(L, -4, i);
      lua_pop(L, 1);
    }
  }
  lines[i] = NULL;
  return lines;
}

/* Checks the options table at 1 into s (what it points at stays on the
 * stack, above 1). Raises naming FN and the option. */
static void check_options(lua_State *L, tend_http_spec *s) {
  if (!lua_istable(L, 1))
    luaL_error(L, "%s: expected a table of options {method, url, ...}, got %s",
               FN, tend_typename(L, 1));
  lua_settop(L, 1);
  tend_check_keys(L, 1, option_names, FN, "");
  lua_getfield(L, 1, "method"); /* 2 */
  int m = method_at(L, 2);
  if (m < 0)
    tend_bad_option(L, FN, "method",
                    "GET, HEAD, POST, PUT, PATCH, DELETE or OPTIONS", 2);
  s->method = methods[m < 0 ? 0 : m]; /* m < 0 raised above */
  lua_getfield(L, 1, "url");          /* 3 */
  size_t un;
  const char *url =
      lua_type(L, 3) == LUA_TSTRING ? lua_tolstring(L, 3, &un) : NULL;
  if (url == NULL || strlen(url) != un ||
      (strncasecmp(url, "http://", 7) != 0 &&
       strncasecmp(url, "https://", 8) != 0) ||
      un == (url[4] == ':' ? 7u : 8u))
    tend_bad_option(L, FN, "url", "an http:// or https:// URL", 3);
  s->url = url;
  lua_getfield(L, 1, "body"); /* 4 */
  s->body = NULL;
  s->body_len = 0;
  if (!lua_isnil(L, 4)) {
    if (lua_type(L, 4) != LUA_TSTRING)
      tend_bad_option(L, FN, "body", "a string", 4);
    s->body = lua_tolstring(L, 4, &s->body_len);
  }
  lua_getfield(L, 1, "timeout"); /* 5 */
  double t = DEFAULT_TIMEOUT;
  if (!lua_isnil(L, 5)) {
    t = lua_type(L, 5) == LUA_TNUMBER ? lua_tonumber(L, 5) : -1;
    if (!(t > 0 && t <= 1e9))
      tend_bad_option(L, FN, "timeout", "a number of seconds > 0 (<= 1e9)", 5);
  }
  s->timeout_ms = (int64_t)ceil(t * 1000);
  lua_getfield(L, 1, "max_body"); /* 6 */
  s->max_body = DEFAULT_MAX_BODY;
  if (!lua_isnil(L, 6)) {
    if (!lua_isinteger(L, 6) || lua_tointeger(L, 6) <= 0)
      tend_bad_option(L, FN, "max_body", "an integer number of bytes > 0", 6);
    s->max_body = (size_t)lua_tointeger(L, 6);
  }
  lua_getfield(L, 1, "headers");    /* 7 */
  s->headers = check_headers(L, 7); /* 8, 9 */
}

/* core.http_check(opts): raises as tend.http.request would. */
static int l_http_check(lua_State *L) {
  tend_http_spec s;
  check_options(L, &s);
  return 0;
}

/* Raises HttpError "FN: METHOD url: why" with e.reason = why, e.url. */
static int raise_http(lua_State *L, const tend_http_spec *s, const char *why) {
  lua_pushfstring(L, "%s: %s %s: %s", FN, s->method, s->url, why);
  tend_error_new(L, TEND_ERR_NAME(HTTP_ERROR), lua_tostring(L, -1));
  lua_pushstring(L, why);
  lua_setfield(L, -2, "reason");
  lua_pushstring(L, s->url);
  lua_setfield(L, -2, "url");
  return lua_error(L);
}

/* After the wait: the stack is as l_http_request left it (the checked
 * options at 2..9, the handle at HANDLE). */
static int request_k(lua_State *L, int status, lua_KContext k) {
  (void)status;
  (void)k;
  tend_host *h = tend_host_of(L);
  tend_http_req *r = *(tend_http_req **)lua_touserdata(L, HANDLE);
  const char *why = tend_http_error(r); /* not answered: abandoned */
  if (tend_sched_woken(L, h) == TEND_WAKE_OK) {
    tend_sched_take_reply(L, h);
    lua_pop(L, 1);
  }
  if (why) {
    tend_http_spec s;
    s.url = lua_tostring(L, 3);
    s.method = methods[method_at(L, 2)];
    return raise_http(L, &s, why);
  }
  tend_http_push_response(L, r);
  return 1;
}

/* core.http_request(opts) -> {status, headers, body}: the actor waits;
 * raises HttpError on a transport failure. */
static int l_http_request(lua_State *L) {
  tend_host *h = tend_host_of(L);
  tend_http_spec s;
  check_options(L, &s);
  tend_actor *a = tend_sched_check_wait(L, h, FN);
  tend_http_req **ud = lua_newuserdatauv(L, sizeof *ud, 0);
  *ud = NULL;
  luaL_setmetatable(L, HTTP_REQUEST_MT);
  if (lua_gettop(L) != HANDLE) return luaL_error(L, "%s: bad stack", FN);
  if (tend_http_start(L, h, a, &s, ud) == NULL)
    return raise_http(L, &s, lua_tostring(L, -1));
  return tend_sched_wait(L, h, TEND_WAIT_ASK, request_k);
}

static int l_request_gc(lua_State *L) {
  tend_http_req **r = lua_touserdata(L, 1);
  if (*r) tend_http_release(*r);
  *r = NULL;
  return 0;
}

/* core.http_in_flight() -> requests in flight now. */
static int l_http_in_flight(lua_State *L) {
  lua_pushinteger(L, tend_http_in_flight(tend_host_of(L)));
  return 1;
}

void tend_open_http(lua_State *L) {
  static const luaL_Reg fns[] = {{"http_check", l_http_check},
                                 {"http_request", l_http_request},
                                 {"http_in_flight", l_http_in_flight},
                                 {NULL, NULL}};
  luaL_newmetatable(L, HTTP_REQUEST_MT);
  lua_pushcfunction(L, l_request_gc);
  lua_setfield(L, -2, "__gc");
  lua_pushliteral(L, "tend.HttpRequest");
  lua_setfield(L, -2, "__name");
  lua_pop(L, 1);
  luaL_setfuncs(L, fns, 0);
}
