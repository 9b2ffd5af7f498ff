-- tend.scenario: `tend scenario FILE [--seed N] [--seeds A..B] [--svg OUT]
-- [--trace OUT] [--only EV,...] [--path /user/x] [--chaos-schedule LIST.lua]
-- [-- ARGS...]`. Runs FILE under the virtual clock (the host is started
-- so), then prints a readable timeline, one line per event, and a
-- summary; exits 1 if the scenario raised (a failed check is an error), an
-- invariant failed (tend.invariant, tend.eventually), nothing could happen
-- any more while it waited (NoProgress) or a failure escalated past the
-- guardian, N if it ended with tend.shutdown(N). A failing run prints
-- `failure: <Kind> "<invariant name or message>" at t=<t>`.
-- --chaos-schedule: every tend.chaos.nemesis of the run applies the list
-- LIST.lua returns instead of drawing (lua/tend/nemesis.lua).
-- With --seeds it runs every seed as its own process and prints one line
-- per seed (a failing one with its reason).
local core = require "tend.core"
local K = require "tend.kinds" -- the error kinds (src/runtime/core/errkind.h)
local internal = require "tend.internal"
local seeds = require "tend.seeds" -- a seed's run in a process of its own
local invariant = require "tend.invariant"
local nemesis = require "tend.nemesis"
local timeline = require "tend.timeline"
local tend = require "tend"

local M = {}

-- Events worth a timeline line (spawn/start/stop are in the trace).
local shown = { fail = true, directive = true, restart = true, backoff = true, reset = true,
  give_up = true, terminated = true, escalate = true, chaos = true, stash_drop = true,
  spawn_os = true, exit = true }

local function describe(e)
  local parts = {}
  if e.ev == "restart" then parts[#parts + 1] = "#" .. math.tointeger(e.count)
  elseif e.ev == "backoff" then
    parts[#parts + 1] = string.format("#%d after %.3f s", math.tointeger(e.count), e.delay)
  elseif e.ev == "directive" then
    parts[#parts + 1] = e.directive .. " (" .. tostring(e.clause) .. ")"
    if e.window then
      parts[#parts + 1] = string.format("window %d/%d%s", e.window[1], e.window[2],
        e.window[3] and e.window[3] ~= timeline.null and (" per " .. e.window[3] .. " s") or "")
    end
  end
  if e.ev == "spawn_os" then parts[#parts + 1] = string.format("pid %d %s", e.pid, tostring(e.argv0))
  elseif e.ev == "exit" then
    parts[#parts + 1] = e.signal and ("signal " .. e.signal) or ("status " .. tostring(e.status))
  end
  if e.kind then parts[#parts + 1] = "(" .. e.kind .. ": " .. tostring(e.message) .. ")" end
  if e.reason then parts[#parts + 1] = e.reason end
  if e.to then parts[#parts + 1] = "-> " .. e.to end
  if e.detail then parts[#parts + 1] = e.detail end
  return table.concat(parts, " ")
end

M.describe = describe -- (the REPL's trace(true) prints the same details)

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  return keys
end

local function summary(events, seed, failed)
  local restarts, failures, dead = {}, {}, 0
  for _, e in ipairs(events) do
    if e.ev == "restart" then -- an attempt at a new incarnation (C counts it)
      restarts[e.path] = (restarts[e.path] or 0) + 1
    elseif e.ev == "fail" then
      failures[e.kind or K.Error] = (failures[e.kind or K.Error] or 0) + 1
    elseif e.ev == "dead_letter" then
      dead = dead + 1
    end
  end
  print("-- summary")
  local total_r = 0
  for _, p in ipairs(sorted_keys(restarts)) do
    print(string.format("restarts  %-40s %d", p, restarts[p]))
    total_r = total_r + restarts[p]
  end
  local total_f = 0
  for _, k in ipairs(sorted_keys(failures)) do
    print(string.format("failures  %-40s %d", k, failures[k]))
    total_f = total_f + failures[k]
  end
  print(string.format("dead letters %d, virtual time %.3f s, seed %d", dead, core.now(), seed))
  print(string.format("result: %s, %d events, %d restarts, %d failures",
    failed and "FAILED" or "ok", #events, total_r, total_f))
end

-- Every event the host traces (--only takes these names).
local known = { "trace", "spawn", "start", "fail", "directive", "restart", "backoff", "reset",
  "give_up", "stop", "terminated", "escalate", "dead_letter", "stash_drop", "chaos",
  "spawn_os", "ready", "exit" }

local function fail_usage(msg)
  io.stderr:write("tend scenario: " .. msg .. "\n")
  core.shutdown(2)
end

local function run_seeds(file, from, to, extra)
  local bad = {}
  -- one process for them all, a child forked per seed (tend.seeds)
  seeds.each_blocking(seeds.argv(file, string.format("%d..%d", from, to), extra), function(seed, r)
    if r.ok then
      print(string.format("seed %d: %s", seed, r.result))
    else
      print(string.format("seed %d: FAILED: %s", seed, r.reason))
      bad[#bad + 1] = seed
    end
  end)
  if #bad > 0 then
    local list = {}
    for i, s in ipairs(bad) do list[i] = tostring(s) end
    print("failed seeds: " .. table.concat(list, " ") ..
      " (replay one with: tend scenario " .. file .. " --seed N)")
    core.shutdown(1)
  end
  print(string.format("all %d seeds passed", to - from + 1))
end

-- The error's first line and its traceback without the runner's frames.
local function report(e)
  local msg = type(e) == "table" and tostring(e) or tostring(e)
  local tb = debug.traceback("", 3)
  local keep = {}
  for line in tb:gmatch("[^\n]+") do
    if line:match("^\t") and not line:match("%[C%]: in function 'xpcall'")
      and not line:match("tend/scenario") and not line:match("%[C%]: in %?") then
      keep[#keep + 1] = line
    end
  end
  if #keep == 0 then return msg end
  return msg .. "\nstack traceback:\n" .. table.concat(keep, "\n")
end

-- Parses the runner's arguments (the host took --seed, --trace and
-- --trace-internal).
-- Returns the options, or nil after a usage error.
local function parse(args)
  local o = { rest = {} }
  local i = 1
  while i <= #args do
    local a = args[i]
    if a == "--" then
      table.move(args, i + 1, #args, 1, o.rest)
      break
    end
    local takes = a == "--svg" or a == "--seeds" or a == "--only" or a == "--path"
      or a == "--seed" or a == "--trace" or a == "--chaos-schedule"
    if a == "--trace-internal" then
      i = i + 1
    else
      if not takes and a:sub(1, 1) ~= "-" then
        return fail_usage("unexpected argument '" .. tostring(a) .. "' (the scenario's own "
          .. "arguments go after --)")
      end
      if not takes then
        return fail_usage("unknown option '" .. tostring(a) .. "' (expected --seed, --seeds, "
          .. "--svg, --only, --path, --trace or --chaos-schedule)")
      end
      local v = args[i + 1]
      if v == nil then return fail_usage(a .. ": expected a value, got nothing") end
      if a ~= "--seed" and a ~= "--trace" then o[a:sub(3)] = v end
      i = i + 2
    end
  end
  if o.only then
    o.events = {}
    for name in (o.only .. ","):gmatch("([^,]*),") do
      local found = false
      for _, k in ipairs(known) do found = found or k == name end
      if not found then
        return fail_usage("--only: expected event names separated by commas (" ..
          table.concat(known, ",") .. "), got '" .. name .. "'")
      end
      o.events[name] = true
    end
  end
  if o.path and not o.path:match("^/.") then
    return fail_usage("--path: expected an actor path such as /user/x, got '" .. o.path .. "'")
  end
  if o.path then o.path = o.path:gsub("/$", "") end
  return o
end

-- Whether e passes the --only and --path filters.
local function selected(o, e)
  if o.events and not o.events[e.ev] then return false end
  if o.path and type(e.path) == "string" and e.path ~= o.path
    and e.path:sub(1, #o.path + 1) ~= o.path .. "/" then
    return false
  end
  return (o.path == nil or type(e.path) == "string")
end

function M.run(file, ...)
  local o = parse({ ... })
  if not o then return end
  if o.seeds then
    local from, to = o.seeds:match("^(%-?%d+)%.%.(%-?%d+)$")
    from, to = math.tointeger(tonumber(from)), math.tointeger(tonumber(to))
    if not from or not to or to < from then
      return fail_usage("--seeds: expected A..B with integers A <= B, got '" .. o.seeds .. "'")
    end
    return run_seeds(file, from, to, { svg = o.svg and "/dev/null" })
  end
  local chunk, err = loadfile(file)
  if not chunk then
    io.stderr:write("tend scenario: " .. err .. "\n")
    return core.shutdown(1)
  end
  if o["chaos-schedule"] then
    local ok, list = pcall(dofile, o["chaos-schedule"])
    if ok and type(list) ~= "table" then ok, list = false, "it returned " .. type(list) .. ", not a list" end
    if ok then ok, list = pcall(nemesis.replace, list) end
    if not ok then
      return fail_usage("--chaos-schedule: expected a file returning a list of injections: " ..
        tostring(list))
    end
  end
  local events, finished = {}, false
  -- The end of the run: the timeline, the failure (a `failure:` line),
  -- the summary, then the host exits with code.
  local wall0 = internal.wall_clock()
  local function finish(code, why, failure)
    if finished then return end
    finished = true
    local drawn = {}
    for _, e in ipairs(events) do
      if selected(o, e) then
        drawn[#drawn + 1] = e
        if (o.events or shown)[e.ev] then
          print(string.format("t=%-10.3f %-32s %-10s %s", e.t,
            e.path .. (e.node and ("@" .. e.node) or ""), e.ev, describe(e)))
        end
      end
    end
    if why then print("scenario failed: " .. why) end
    if failure then
      print(string.format('failure: %s "%s" at t=%.3f', failure.kind, failure.name, failure.t))
    end
    summary(events, core.seed(), code ~= 0)
    io.stderr:write(string.format("wall time %.3f s for %.3f s of virtual time\n",
      internal.wall_clock() - wall0, core.now()))
    if o.svg then
      local written, werr = timeline.write(o.svg, timeline.render(drawn,
        "tend scenario " .. file .. " - seed " .. core.seed()))
      if not written then
        io.stderr:write("tend scenario: cannot write " .. o.svg .. ": " .. tostring(werr) .. "\n")
        return core.shutdown(1)
      end
    end
    core.shutdown(code)
  end
  core.trace(function(e)
    events[#events + 1] = e
    if e.ev == "fail" and e.path == "/user" and not finished then -- past the guardian
      local msg = tostring(e.message):gsub("^failure of ", "")
      finish(1, tostring(e.kind) .. ": " .. msg,
        { kind = e.kind or K.Error, name = msg:match("^[^\n]*"), t = e.t })
    end
  end)
  invariant.on_failure = function(f)
    finish(1, string.format('%s: "%s" at t=%.3f: %s', f.kind, f.name, f.t, f.message), f)
  end
  invariant.waiting = function() return not finished end
  invariant.hook()
  -- tend.shutdown(code) in the file's main chunk ends the scenario there:
  -- the timeline and the summary still print, then the host exits with code
  local real_shutdown, main, ended = tend.shutdown, core.self(), nil
  tend.shutdown = function(code)
    if core.self() ~= main or (code ~= nil and not (math.type(code) == "integer"
        and code >= 0 and code <= 255)) then
      return real_shutdown(code) -- elsewhere, or a bad code (it says so)
    end
    ended = { code = code or 0 }
    error(ended, 0)
  end
  _G.arg = table.move(o.rest, 1, #o.rest, 1, { [0] = file })
  local raised
  local ok, why = xpcall(chunk, function(e)
    if e == ended then return e end
    raised = e
    return report(e)
  end, table.unpack(o.rest))
  tend.shutdown = real_shutdown
  if finished then return end -- (an invariant or an escalation ended it)
  core.sleep(0) -- the events of the last turns reach the trace function
  if finished then return end
  local code = ended and ended.code or (ok and 0 or 1)
  if ok or ended then invariant.check() end -- (its failure finishes)
  if finished then return end
  if ended then -- tend.shutdown(code): a failure unless code is 0
    if code ~= 0 then
      return finish(code, "tend.shutdown(" .. code .. ")",
        { kind = "Shutdown", name = file .. ": tend.shutdown(" .. code .. ")", t = core.now() })
    end
    return finish(code)
  elseif not ok then
    local kind = type(raised) == "table" and type(raised.kind) == "string" and raised.kind or K.Error
    local msg = type(raised) == "table" and raised.message ~= nil
      and tostring(raised.where or "") .. tostring(raised.message) or tostring(raised)
    return finish(1, tostring(why), { kind = kind, name = msg:match("^[^\n]*"), t = core.now() })
  end
  finish(code)
end

return M
