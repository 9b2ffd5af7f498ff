-- tend.explore: `tend explore FILE [--seeds A..B | --runs N] [--jobs J]
-- [--shrink] [--out DIR] [--max-time S] [-- ARGS...]`. Runs the scenario
-- FILE once per seed, each as `tend scenario FILE --seed N` in a process
-- of its own (tend.seeds), --jobs of them at once; prints one line per
-- failing seed, in seed order, a progress line on a terminal (stderr),
-- then the failures grouped by signature; exits 1 when a seed failed.
-- With --shrink, the first failing seed of each signature is shrunk
-- (tend.shrink). The host runs on the real clock (tend.process).
local core = require "tend.core"
local internal = require "tend.internal"
local seeds = require "tend.seeds"
local shrink = require "tend.shrink"

local M = {}

M.RUN_LIMIT = 300 -- wall seconds one run may take: then it is killed ("Timeout")
M.BATCH = 25 -- at most this many seeds a process (tend scenario --fork-seeds)

local function fail_usage(msg)
  io.stderr:write("tend explore: " .. msg .. "\n")
  core.shutdown(2)
end

local takes = { ["--seeds"] = true, ["--runs"] = true, ["--jobs"] = true, ["--out"] = true,
  ["--max-time"] = true }

local function positive_integer(name, v)
  local n = math.tointeger(tonumber(v))
  if not n or n < 1 or not v:match("^%d+$") then
    return nil, name .. ": expected a positive integer, got '" .. v .. "'"
  end
  return n
end

-- Parses the arguments after FILE; returns the options, or nil and the
-- usage error.
local function parse(args)
  local o = { args = {}, out = "explore-out" }
  local i = 1
  while i <= #args do
    local a = args[i]
    if a == "--" then
      table.move(args, i + 1, #args, 1, o.args)
      break
    elseif a == "--shrink" then
      o.shrink, i = true, i + 1
    elseif takes[a] then
      local v = args[i + 1]
      if v == nil then return nil, a .. ": expected a value, got nothing" end
      o[a:sub(3)], i = v, i + 2
    else
      return nil, "unknown option '" .. tostring(a) .. "' (expected --seeds A..B, --runs N, " ..
        "--jobs J, --shrink, --out DIR, --max-time S or -- ARGS)"
    end
  end
  if o.seeds and o.runs then return nil, "expected --seeds A..B or --runs N, got both" end
  local err
  if o.seeds then
    local from, to = o.seeds:match("^(%-?%d+)%.%.(%-?%d+)$")
    o.from, o.to = math.tointeger(tonumber(from)), math.tointeger(tonumber(to))
    if not o.from or not o.to or o.to < o.from then
      return nil, "--seeds: expected A..B with integers A <= B, got '" .. o.seeds .. "'"
    end
  elseif o.runs then
    o.to, err = positive_integer("--runs", o.runs)
    if not o.to then return nil, err end
    o.from = 1
  else
    o.from, o.to = 1, 100
  end
  if o.jobs then
    o.jobs, err = positive_integer("--jobs", o.jobs)
    if not o.jobs then return nil, err end
  else
    o.jobs = internal.cpus()
  end
  if o["max-time"] then
    local s = tonumber(o["max-time"])
    if not s or s <= 0 or s ~= s or s == math.huge then
      return nil, "--max-time: expected a positive number of seconds, got '" .. o["max-time"] .. "'"
    end
    o.max_time = s
  end
  return o
end

-- The progress line, on stderr when it is a terminal.
local function progress(shown, done, total, failed, t0)
  if not shown then return end
  local dt = internal.wall_clock() - t0
  io.stderr:write(string.format("\r%d/%d seeds, %d failed, %.1f seeds/s\27[K", done, total,
    failed, dt > 0 and done / dt or 0))
end

-- The failures grouped by signature, in the order of their first seed.
local function groups(failures)
  local by, list = {}, {}
  for _, f in ipairs(failures) do
    local g = by[f.signature]
    if not g then
      g = { signature = f.signature, seeds = {}, first = f }
      by[f.signature], list[#list + 1] = g, g
    end
    g.seeds[#g.seeds + 1] = f.seed
  end
  return list
end

local function summary(file, o, ran, failures, t0)
  local total = o.to - o.from + 1
  print(string.format("-- summary: %d of %d seeds run (%d..%d), %d failed", ran, total, o.from,
    o.to, #failures))
  if ran < total then
    print(string.format("stopped by --max-time %g: seeds from %d not run", o.max_time,
      o.from + ran))
  end
  local list = groups(failures)
  for _, g in ipairs(list) do
    local shown = {}
    for i = 1, math.min(#g.seeds, 8) do shown[i] = tostring(g.seeds[i]) end
    print(string.format("%5d  %s  seeds %s%s", #g.seeds, g.signature, table.concat(shown, " "),
      #g.seeds > 8 and " ..." or ""))
  end
  if #list > 0 then
    print(string.format("replay one with: tend scenario %s --seed N", file))
  end
  local dt = internal.wall_clock() - t0
  io.stderr:write(string.format("wall time %.3f s, %.1f seeds/s with %d job%s\n", dt,
    dt > 0 and ran / dt or 0, o.jobs, o.jobs == 1 and "" or "s"))
  return list
end

-- Seeds a batch: enough batches for every job to take several (the
-- progress line moves), few enough that a batch's process start is paid
-- over many seeds.
local function batch_size(total, jobs)
  return math.max(1, math.min(M.BATCH, math.ceil(total / (jobs * 4))))
end

function M.run(file, ...)
  local o, err = parse({ ... })
  if not o then return fail_usage(err) end
  local f = io.open(file, "r")
  if not f then return fail_usage("cannot open " .. file) end
  f:close()
  local total = o.to - o.from + 1
  local size = batch_size(total, o.jobs)
  local argvs, firsts = {}, {}
  for a = o.from, o.to, size do
    local b = math.min(o.to, a + size - 1)
    firsts[#firsts + 1] = a
    argvs[#argvs + 1] = seeds.argv(file, string.format("%d..%d/%d", a, b, M.RUN_LIMIT),
      { args = o.args })
  end
  local t0 = internal.wall_clock()
  local tty = internal.isatty(2)
  local results, failures, next_print, done, ran, failed = {}, {}, o.from, 0, 0, 0
  local function go(i)
    if o.max_time and internal.wall_clock() - t0 >= o.max_time then return false end
    ran = math.min(o.to, firsts[i] + size - 1) - o.from + 1
    return true
  end
  seeds.run_parallel(argvs, o.jobs, M.RUN_LIMIT * size, function(i, r)
    local runs = type(r) == "table" and not r.timed_out and seeds.batch(r.stdout or "", M.RUN_LIMIT)
      or {}
    local last = math.min(o.to, firsts[i] + size - 1)
    for k = firsts[i], last do -- a batch that died: its missing seeds fail
      local run = runs[k - firsts[i] + 1]
      results[k] = run and run.seed == k and run.outcome or seeds.result(r, M.RUN_LIMIT * size)
      if results[k].ok and not run then
        results[k] = { ok = false, reason = "no result from its batch", signature = "Error at batch" }
      end
      if not results[k].ok then failed = failed + 1 end
    end
    done = done + (last - firsts[i] + 1)
    if tty then io.stderr:write("\r\27[K") end
    while results[next_print] do -- the failing seeds' lines in seed order
      local rr = results[next_print]
      if not rr.ok then
        rr.seed = next_print
        failures[#failures + 1] = rr
        print(string.format("seed %d: %s", rr.seed, rr.failure or rr.reason))
      end
      next_print = next_print + 1
    end
    progress(tty, done, total, failed, t0)
  end, go)
  if tty then io.stderr:write("\r\27[K") end
  if #failures == 0 then
    summary(file, o, ran, failures, t0)
    print(string.format("all %d seeds passed", ran))
    return core.shutdown(0)
  end
  local list = summary(file, o, ran, failures, t0)
  if o.shrink then
    local made, merr = internal.mkdir(o.out)
    if not made then
      io.stderr:write("tend explore: --out: cannot create " .. tostring(merr) .. "\n")
      return core.shutdown(1)
    end
    for _, g in ipairs(list) do
      shrink.run { file = file, seed = g.first.seed, signature = g.signature, t = g.first.t,
        args = o.args,
        out = o.out, jobs = o.jobs, limit = M.RUN_LIMIT }
    end
  end
  core.shutdown(1)
end

return M
