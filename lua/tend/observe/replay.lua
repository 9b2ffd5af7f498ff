-- tend.observe.replay: `tend observe TRACE.jsonl [--port [HOST:]PORT]`,
-- time travel through a recorded trace (from --trace, tend scenario,
-- tend explore's minimal scenarios): serves the observer's page, whose
-- time slider and timeline ask for the state at an instant
-- (tend.observe.state), and steps to the next or previous failure,
-- restart or chaos event. Endpoints (each needs ?token=):
--   /api/info           { mode = "replay", trace, events, t_max, title }
--   /api/timeline.svg   the trace drawn by tend.timeline
--   /api/state?t=T      the state at T (tend.observe.state.at)
--   /api/step?t=T&what=failure|restart|chaos|any&dir=next|prev -> { t }
--   /api/events?from=A&to=B   the events with A < t <= B (at most 500)
local timeline = require "tend.timeline"
local state = require "tend.observe.state"
local server = require "tend.observe.server"
local json = require "tend.observe.json"

local M = {}

M.USAGE = "usage: tend observe TRACE.jsonl [--port [HOST:]PORT]"

-- The number a query parameter gives, or nil, 400, a message naming it.
local function number(q, name, default)
  local v = q[name]
  if v == nil and default ~= nil then return default end
  local x = tonumber(v)
  if not x or x ~= x or math.abs(x) > timeline.MAX_SECONDS then
    return nil, 400, string.format("%s: expected a number of seconds, got %s", name,
      v == nil and "nothing" or string.format("%q", v))
  end
  return x
end

-- The routes of a trace's events (a list, in time order).
function M.routes(events, name)
  local svg = timeline.render(events, "tend observe " .. name)
  local t_max = tonumber(svg:match('data%-t%-max="([%d.]+)"')) or 0
  local routes = {}
  routes["/api/info"] = function()
    return { mode = "replay", trace = name, events = #events, t_max = t_max,
      t_last = events[#events] and events[#events].t or 0 }
  end
  routes["/api/timeline.svg"] = function() return svg end
  routes["/api/state"] = function(q)
    local t, status, why = number(q, "t")
    if not t then return nil, status, why end
    local s = state.at(events, t)
    json.array(s.actors)
    json.array(s.nodes)
    json.array(s.outages)
    return s
  end
  routes["/api/step"] = function(q)
    local t, status, why = number(q, "t")
    if not t then return nil, status, why end
    local what, dir = q.what or "any", q.dir or "next"
    if not (state.KINDS[what] or what == "any") then
      return nil, 400, "what: expected failure, restart, chaos or any, got " .. string.format("%q", what)
    end
    if dir ~= "next" and dir ~= "prev" then
      return nil, 400, "dir: expected next or prev, got " .. string.format("%q", dir)
    end
    return { t = state.step(events, t, what, dir) or json.null, what = what, dir = dir }
  end
  routes["/api/events"] = function(q)
    local from, status, why = number(q, "from", -1)
    if not from then return nil, status, why end
    local to
    to, status, why = number(q, "to", math.huge)
    if not to then return nil, status, why end
    local out = json.array({})
    for _, e in ipairs(events) do
      if e.t > from and e.t <= to then
        out[#out + 1] = e
        if #out == 500 then break end
      end
    end
    return out
  end
  return routes, { ["/api/timeline.svg"] = "image/svg+xml" }
end

-- tend observe TRACE.jsonl [--port [HOST:]PORT]
function M.main(...)
  local core = require "tend.core"
  local args = { ... }
  local trace, address = nil, tostring(server.DEFAULT_PORT)
  local i = 1
  local function usage(msg)
    io.stderr:write("tend observe: " .. msg .. "\n" .. M.USAGE .. "\n")
    return core.shutdown(2)
  end
  while i <= #args do
    if args[i] == "--port" then
      if args[i + 1] == nil then return usage("--port: expected [HOST:]PORT, got nothing") end
      address = args[i + 1]
      i = i + 2
    elseif not trace then trace = args[i]; i = i + 1
    else return usage("unexpected argument '" .. args[i] .. "'") end
  end
  if not trace then return usage("expected a trace file (from --trace), got nothing") end
  local host, port = server.parse_address(address, "--port")
  if not host then return usage(port) end
  local events, err = timeline.read(trace)
  if not events then
    io.stderr:write("tend observe: " .. err .. "\n")
    return core.shutdown(1)
  end
  if err then io.stderr:write("tend observe: warning: " .. err .. "\n") end
  local routes, types = M.routes(events, trace)
  local ok, ref, url = pcall(server.start, { host = host, port = port, routes = routes,
    types = types, page = require("tend.observe.page") })
  if not ok then
    io.stderr:write("tend observe: cannot serve on " .. address .. ": " .. tostring(ref) .. "\n")
    return core.shutdown(1)
  end
  print(string.format("tend observe: %s (%d events) at %s", trace, #events, url))
  io.stdout:flush()
  return ref
end

return M
