-- tend.scenario: `tend scenario FILE [--seed N] [--seeds A..B] [--svg OUT]
-- [--trace OUT]`. Runs FILE under the virtual clock (the host is started so),
-- then prints a readable timeline, one line per event, and a summary; exits
-- 1 if the scenario raised (a failed check is an error). With --seeds it
-- runs every seed as its own process and prints one line per seed.
local core = require "tend.core"
local internal = require "tend.internal"
local timeline = require "tend.timeline"

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

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  return keys
end

local function summary(events, seed, failed)
  local restarts, failures, dead = {}, {}, 0
  for _, e in ipairs(events) do
    if e.ev == "restart" or (e.ev == "start" and (e.incarnation or 1) > 1) then
      restarts[e.path] = (restarts[e.path] or 0) + 1
    elseif e.ev == "fail" then
      failures[e.kind or "Error"] = (failures[e.kind or "Error"] or 0) + 1
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

local function fail_usage(msg)
  io.stderr:write("tend scenario: " .. msg .. "\n")
  core.shutdown(2)
end

local function run_seeds(file, from, to, extra)
  local exe = internal.executable()
  local bad = {}
  for seed = from, to do
    local cmd = string.format("%q scenario %q --seed %d%s 2>/dev/null", exe, file, seed, extra)
    local p = io.popen(cmd, "r")
    local out = p:read("a")
    local ok = p:close()
    local result = out:match("result: ([^\n]*)") or "no result"
    print(string.format("seed %d: %s", seed, result))
    if not ok then bad[#bad + 1] = seed end
  end
  if #bad > 0 then
    local list = {}
    for i, s in ipairs(bad) do list[i] = tostring(s) end
    print("failed seeds: " .. table.concat(list, " ") ..
      " (replay one with: tend scenario " .. file .. " --seed N)")
    core.shutdown(1)
  end
  print(string.format("all %d seeds passed", to - from + 1))
end

function M.run(file, ...)
  local args = { ... }
  local svg, seeds
  local i = 1
  while i <= #args do
    local a = args[i]
    if a == "--svg" then svg = args[i + 1]; i = i + 2
    elseif a == "--seeds" then seeds = args[i + 1]; i = i + 2
    elseif a == "--seed" or a == "--trace" then i = i + 2 -- the host took them
    else return fail_usage("unknown option '" .. tostring(a) .. "'") end
    if (a == "--svg" or a == "--seeds") and args[i - 1] == nil then
      return fail_usage(a .. ": expected a value, got nothing")
    end
  end
  if seeds then
    local from, to = seeds:match("^(%-?%d+)%.%.(%-?%d+)$")
    from, to = math.tointeger(tonumber(from)), math.tointeger(tonumber(to))
    if not from or not to or to < from then
      return fail_usage("--seeds: expected A..B with integers A <= B, got '" .. seeds .. "'")
    end
    return run_seeds(file, from, to, svg and " --svg /dev/null" or "")
  end
  local chunk, err = loadfile(file)
  if not chunk then
    io.stderr:write("tend scenario: " .. err .. "\n")
    return core.shutdown(1)
  end
  local events = {}
  core.trace(function(e) events[#events + 1] = e end)
  local wall0 = internal.wall_clock()
  local ok, why = xpcall(chunk, function(e)
    return debug.traceback(type(e) == "table" and tostring(e) or e, 2)
  end)
  core.sleep(0) -- the events of the last turns reach the trace function
  for _, e in ipairs(events) do
    if shown[e.ev] then
      print(string.format("t=%-10.3f %-32s %-10s %s", e.t, e.path, e.ev, describe(e)))
    end
  end
  if not ok then print("scenario failed: " .. tostring(why)) end
  summary(events, core.seed(), not ok)
  io.stderr:write(string.format("wall time %.3f s for %.3f s of virtual time\n",
    internal.wall_clock() - wall0, core.now()))
  if svg then
    local written, werr = timeline.write(svg, timeline.render(events,
      "tend scenario " .. file .. " - seed " .. core.seed()))
    if not written then
      io.stderr:write("tend scenario: cannot write " .. svg .. ": " .. tostring(werr) .. "\n")
      return core.shutdown(1)
    end
  end
  core.shutdown(ok and 0 or 1)
end

return M
