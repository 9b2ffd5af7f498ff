-- tend.http: HTTP calls from actors. Under the real clock on libcurl
-- (core.http_request, src/api/lhttp.c: the actor waits, the others run);
-- under --virtual-time only on the simulated network (tend.simnet), never
-- the real one. The options are checked in C in both cases.
local core = require "tend.core"
local K = require "tend.kinds" -- the error kinds (src/runtime/core/errkind.h)
require "tend.http_ws" -- ctx:ws_send, ctx:ws_close (WebSocket connections' actors)

local M = {}

-- The simulated network, when this build has it.
local function simnet()
  if package.preload["tend.simnet"] == nil and package.loaded["tend.simnet"] == nil then
    return nil
  end
  return require "tend.simnet"
end

local function virtual_only(fn, what)
  local e = core.error(K.HttpError, fn .. ": under --virtual-time tend.http reaches only "
    .. "simulated servers (tend.http.serve), and " .. what)
  e.reason = "no simulated network"
  error(e, 3)
end

-- tend.http.request{ method, url, headers, body, timeout, max_body }
--   -> { status, headers, body }; raises HttpError (e.reason) when no
--   response came. The clock of a host never changes: under the real one
--   it is the C function itself (its errors then point at the caller).
if core.virtual_time() then
  function M.request(opts)
    core.http_check(opts)
    local sim = simnet()
    if sim == nil or sim.http_request == nil then
      virtual_only("tend.http.request", "this build has no simulated network (tend.simnet)")
    end
    return sim.http_request(opts)
  end
else
  M.request = core.http_request
end

-- tend.http.get(url [, opts]): request with method GET.
function M.get(url, opts)
  if opts ~= nil and type(opts) ~= "table" then
    error("tend.http.get: opts: expected a table {headers, timeout, max_body}, got "
      .. type(opts), 2)
  end
  if type(url) ~= "string" then
    error("tend.http.get: url: expected an http:// or https:// URL, got " .. type(url), 2)
  end
  local o = {}
  for k, v in pairs(opts or {}) do o[k] = v end
  if o.method ~= nil and tostring(o.method):upper() ~= "GET" then
    error("tend.http.get: opts.method: expected nothing or GET, got " .. tostring(o.method), 2)
  end
  o.url, o.method = url, "GET"
  return M.request(o)
end

-- tend.http.serve{ host, port, handler, name, max_connections, max_body,
-- timeout, debug, tls, ws } [, spawn opts] -> the server's ref, a child of
-- the caller (lua/tend/http_server.lua): on H2O under the real clock, on
-- the simulated network (tend.simnet) under --virtual-time, where tls and
-- ws are refused.
function M.serve(opts, spawn_opts)
  if core.virtual_time() and simnet() == nil then
    virtual_only("tend.http.serve", "this build has no simulated network (tend.simnet)")
  end
  return require("tend.http_server").serve(opts, spawn_opts)
end

-- tend.http.server{...} -> a factory of the same server, for a supervisor.
function M.server(opts)
  return require("tend.http_server").server(opts)
end

-- tend.http.router{ { method, "/path/:param", handler }, ... } -> a handler.
function M.router(routes)
  return require("tend.http_server").router(routes)
end

-- tend.http.in_flight() -> real requests in flight now.
M.in_flight = core.http_in_flight

return M
