-- tend.http without a network: the checks of bad input (the same under
-- both clocks: spec/realtime/http_spec.lua loads this file too) and what
-- tend.http does under the virtual clock. The real client against real
-- servers is spec/realtime/http_spec.lua.
local lu = require "luaunit"
local tend = require "tend"

-- Bad input: the same under both clocks (checked in C before anything).
TestHttpOptions = {}

local function err_of(fn, ...)
  local ok, e = pcall(fn, ...)
  lu.assertFalse(ok, "expected an error")
  return tostring(e)
end

function TestHttpOptions:test_bad_options_name_the_function_and_the_option()
  local R = tend.http.request
  local url = "http://127.0.0.1:1/"
  local cases = {
    { { method = "FETCH", url = url }, "tend.http.request: option 'method': expected GET, HEAD, POST, PUT, PATCH, DELETE or OPTIONS, got FETCH (string)" },
    { { method = 1, url = url }, "option 'method': expected GET, HEAD, POST, PUT, PATCH, DELETE or OPTIONS, got 1 (number)" },
    { {}, "tend.http.request: option 'url': expected an http:// or https:// URL, got nil" },
    { { url = 42 }, "option 'url': expected an http:// or https:// URL, got 42 (number)" },
    { { url = "" }, "option 'url': expected an http:// or https:// URL, got  (string)" },
    { { url = "ftp://example.com/" }, "option 'url': expected an http:// or https:// URL, got ftp://example.com/ (string)" },
    { { url = "http://" }, "option 'url': expected an http:// or https:// URL, got http:// (string)" },
    { { url = url, headers = "x" }, "option 'headers': expected a table of name = value strings, got x (string)" },
    { { url = url, headers = { "a" } }, "option 'headers': expected names that are HTTP tokens (no space, ':' or control character), got an integer" },
    { { url = url, headers = { ["a b"] = "1" } }, "option 'headers': expected names that are HTTP tokens (no space, ':' or control character), got a b" },
    { { url = url, headers = { a = 1 } }, "tend.http.request: option 'headers': a: expected a string, got an integer" },
    { { url = url, headers = { a = "x\r\nb: y" } }, "option 'headers': a: expected a value without CR, LF or NUL" },
    { { url = url, body = {} }, "option 'body': expected a string, got a table" },
    { { url = url, timeout = 0 }, "option 'timeout': expected a number of seconds > 0 (<= 1e9), got 0 (number)" },
    { { url = url, timeout = -1 }, "option 'timeout': expected a number of seconds > 0 (<= 1e9), got -1 (number)" },
    { { url = url, timeout = "1" }, "option 'timeout': expected a number of seconds > 0 (<= 1e9), got 1 (string)" },
    { { url = url, timeout = 0 / 0 }, "option 'timeout': expected a number of seconds > 0" },
    { { url = url, max_body = 0 }, "option 'max_body': expected an integer number of bytes > 0, got 0 (number)" },
    { { url = url, max_body = 1.5 }, "option 'max_body': expected an integer number of bytes > 0, got 1.5 (number)" },
    { { url = url, tiemout = 1 }, "tend.http.request: unknown option 'tiemout' (expected one of: method, url, headers, body, timeout, max_body)" },
  }
  for _, c in ipairs(cases) do
    lu.assertStrContains(err_of(R, c[1]), c[2])
  end
  lu.assertStrContains(err_of(R, "http://x/"),
    "tend.http.request: expected a table of options {method, url, ...}, got a string")
  lu.assertStrContains(err_of(tend.http.get, 42), "tend.http.get: url: expected an http:// or https:// URL, got number")
  lu.assertStrContains(err_of(tend.http.get, url, 5), "tend.http.get: opts: expected a table")
  lu.assertStrContains(err_of(tend.http.get, url, { method = "POST" }), "tend.http.get: opts.method: expected nothing or GET, got POST")
  lu.assertEquals(tend.http.in_flight(), 0)
end

if tend.virtual_time() then
  TestHttpVirtual = {}

  -- Under the virtual clock a URL that no simulated server serves is a
  -- named error at once; the real network is never reached.
  function TestHttpVirtual:test_under_the_virtual_clock_no_real_request_is_made()
    local t0 = tend.now()
    local ok, e = pcall(tend.http.get, "http://127.0.0.1:1/")
    lu.assertFalse(ok)
    lu.assertEquals(e.kind, "HttpError")
    lu.assertEquals(e.reason, "no simulated server")
    lu.assertStrContains(e.message, "under --virtual-time tend.http reaches only tend.http.serve servers")
    lu.assertEquals(tend.now(), t0)
    lu.assertEquals(tend.http.in_flight(), 0)
  end
end
