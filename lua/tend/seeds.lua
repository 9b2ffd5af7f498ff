-- tend.seeds: one run of a scenario for one seed in a process of its own,
-- as `tend scenario --seeds` and `tend explore` run it: the command line,
-- and what the run's output says (passed, or how it failed and the
-- failure's signature, the key that groups and shrinks failures).
local internal = require "tend.internal"
local tend = require "tend"

local M = {}

-- The argv of `tend scenario FILE --seed SEED` with o's options:
-- schedule (a --chaos-schedule file), trace, svg (files), args (a list
-- passed after `--`); SEED a string "A..B/LIMIT": a --fork-seeds batch.
function M.argv(file, seed, o)
  o = o or {}
  local argv = { internal.executable(), "scenario", file,
    type(seed) == "string" and "--fork-seeds" or "--seed", tostring(seed) }
  for _, k in ipairs { "chaos-schedule", "trace", "svg" } do
    local v = o[k == "chaos-schedule" and "schedule" or k]
    if v then
      argv[#argv + 1] = "--" .. k
      argv[#argv + 1] = v
    end
  end
  if o.args and #o.args > 0 then
    argv[#argv + 1] = "--"
    table.move(o.args, 1, #o.args, #argv + 1, argv)
  end
  return argv
end

-- argv as one shell command (for io.popen).
function M.shell(argv)
  local words = {}
  for i, w in ipairs(argv) do words[i] = "'" .. w:gsub("'", "'\\''") .. "'" end
  return table.concat(words, " ")
end

-- The failures whose name is the signature (the others are located).
local named = { InvariantFailed = true, EventuallyFailed = true }

-- Where a failure happened, from its message: the file:line or the actor
-- path it begins with, else the message itself.
local function where(msg)
  return msg:match("^([^%s:]+:%d+):") or msg:match("^(/[^%s:,;]*)") or msg
end

-- The signature of a failure of kind `kind` with name or message `name`:
-- `Kind "name"` for an invariant, `Kind at where` otherwise.
function M.signature(kind, name)
  if named[kind] then return string.format('%s "%s"', kind, name) end
  return kind .. " at " .. where(name)
end

-- The reason a run failed, in one line: what its scenario said after
-- "scenario failed: ", else the last line it wrote to stderr.
local function reason_of(out, err)
  local why = out:match("scenario failed: ([^\n]*)")
  if why then return why end
  local last
  for line in (err or ""):gmatch("[^\n]+") do
    if line:match("%S") and not line:match("^wall time") then last = line end
  end
  return last or "no result"
end

-- What a run's output says: { ok = true, result = its summary's } or
-- { ok = false, reason = one line, failure = its failure line after
-- "failure: " or nil, signature = ..., t = the failure's virtual time or
-- nil }.
function M.outcome(ok, out, err)
  if ok then return { ok = true, result = out:match("result: ([^\n]*)") or "ok" } end
  local r = { ok = false, reason = reason_of(out, err) }
  local line = out:match("\nfailure: ([^\n]*)") or out:match("^failure: ([^\n]*)")
  r.failure = line
  local kind, name, t
  if line then kind, name, t = line:match('^(%S+) "(.*)" at t=(%S+)$') end
  if kind then
    r.signature, r.t = M.signature(kind, name), tonumber(t)
  else -- no failure line (a usage error, a crash): the reason locates it
    r.signature = M.signature("Error", r.reason)
  end
  return r
end

-- Runs the batch argv (a --fork-seeds run), blocking, and calls
-- each(seed, outcome) as each seed's record arrives, in seed order.
function M.each_blocking(argv, each)
  local p = io.popen(M.shell(argv) .. " 2>&1", "r")
  while true do
    local h = p:read("l")
    if not h then break end
    local seed, len = h:match("^@@seed (%-?%d+) %a+ %-?%d+ (%d+)$")
    if not seed then break end
    local text = p:read(tonumber(len)) or ""
    local runs = M.batch(h .. "\n" .. text, 0)
    each(math.tointeger(tonumber(seed)), runs[1].outcome)
  end
  return p:close()
end

-- Runs argv (blocking: the scenario runner's host is on the virtual clock,
-- where tend.process would be simulated); returns its outcome.
function M.run_blocking(argv)
  local errpath = os.tmpname()
  local p = io.popen(M.shell(argv) .. " 2>'" .. errpath .. "'", "r")
  local out = p:read("a")
  local ok = p:close()
  local f = io.open(errpath, "r")
  local err = f and f:read("a") or ""
  if f then f:close() end
  os.remove(errpath)
  return M.outcome(ok, out, err), out
end

-- The outcome of a run of tend.process.run (its result r), or of a run
-- that raised (r a message).
function M.result(r, limit)
  if type(r) ~= "table" then
    return { ok = false, reason = tostring(r), signature = "Error at " .. tostring(r) }
  elseif r.timed_out then
    return { ok = false, reason = string.format("killed after %g s", limit), signature = "Timeout" }
  end
  return M.outcome(r.status == 0 and not r.signal, r.stdout or "", r.stderr)
end

-- The runs of a `--fork-seeds A..B/LIMIT` batch's output: a list of
-- { seed = N, outcome = ..., out = its output } in seed order.
function M.batch(out, limit)
  local runs, pos = {}, 1
  while true do
    local _, e, seed, how, code, len = out:find("^@@seed (%-?%d+) (%a+) (%d+) (%d+)\n", pos)
    if not e then break end
    local text = out:sub(e + 1, e + tonumber(len))
    pos = e + tonumber(len) + 1
    local o
    if how == "signal" and code == "14" then -- SIGALRM: the limit
      o = { ok = false, reason = string.format("killed after %g s", limit), signature = "Timeout" }
    elseif how == "signal" then
      o = { ok = false, reason = "killed by signal " .. code, signature = "Signal " .. code }
    else
      o = M.outcome(code == "0", text, text)
    end
    runs[#runs + 1] = { seed = math.tointeger(tonumber(seed)), outcome = o, out = text }
  end
  return runs
end

-- Runs the argv lists argvs[1..n] with tend.process.run, at most `jobs`
-- at once, each killed after `limit` seconds; needs the real clock.
-- done(i, r) is called as each ends, with tend.process.run's result (or
-- the message it raised); go(i) -> false starts no more (a time budget).
function M.run_parallel(argvs, jobs, limit, done, go)
  local me, next_i, running = tend.self(), 1, 0
  local function start()
    while running < jobs and next_i <= #argvs and (go == nil or go(next_i)) do
      local i = next_i
      next_i, running = next_i + 1, running + 1
      tend.after(0, function()
        local ok, r = pcall(tend.process.run, argvs[i], { timeout = limit })
        tend.send(me, { i = i, r = ok and r or tostring(r) })
      end)
    end
  end
  start()
  while running > 0 do
    local m = tend.receive()
    running = running - 1
    done(m.i, m.r)
    start()
  end
end

return M
