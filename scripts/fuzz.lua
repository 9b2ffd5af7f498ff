-- scripts/fuzz.lua: a fuzzer of tend's Lua API, run by tend itself:
--
--   build/asan/tend --virtual-time --log-level error scripts/fuzz.lua SEED SECONDS [LOG]
--
-- It calls every public function and method (tend.*, ref:*, ctx:* from
-- inside and outside its actor, timers, error values, strategies, backoff
-- and typed specs, tend.chaos) with random values of every type: nil,
-- booleans, integers at the edges, floats (inf, nan, huge), strings (empty,
-- NUL bytes, long), tables (empty, lists, option tables with wrong values,
-- tables whose metamethods raise), functions (that return junk, raise or
-- yield), coroutines, refs (live and dead), and the values tend itself
-- makes. A call that raises a Lua error is fine; the host must not crash,
-- hang or leak (the ASan build checks the first and the last). The choices
-- come from SEED alone, so a crash replays with the same SEED; each call is
-- written to LOG (flushed) before it runs, so the log's last lines are the
-- sequence that crashed. Ends with "fuzz: N calls in T s (R calls/s), seed S".
local tend = require "tend"
local internal = require "tend.internal"

local seed = math.tointeger(tonumber(arg[1])) or 1
local seconds = tonumber(arg[2]) or 5
local log = arg[3] and assert(io.open(arg[3], "w"))

------------------------------------------------------------ choices
local state = seed ~ 0x5DEECE66D -- the fuzzer's own generator (xorshift64)
if state == 0 then state = 1 end
local function rand(n) -- 1..n
  state = state ~ (state << 13)
  state = state ~ (state >> 7)
  state = state ~ (state << 17)
  return (state >> 1) % n + 1
end
local function pick(list) return list[rand(#list)] end

------------------------------------------------------------ values
local pool = {} -- values tend made: refs, timers, errors, specs, ctxs
local function keep(v)
  if v ~= nil and #pool < 200 then pool[#pool + 1] = v
  elseif v ~= nil then pool[rand(#pool)] = v end
end

local function raising() error("metamethod raised") end
local bad_mt = { __index = raising, __newindex = raising, __tostring = raising, __len = raising,
  __eq = raising, __lt = raising, __le = raising, __call = raising, __concat = raising,
  __pairs = raising, __close = raising, __name = "Raising" }

local value -- forward
local makers = {
  function() return nil end,
  function() return rand(2) == 1 end,
  function() return pick { 0, 1, -1, 2, 7, 64, 1000, math.maxinteger, math.mininteger, 2 ^ 53 } end,
  function() return pick { 0.5, -0.5, 1e-9, 1e9, 1e300, -1e300, math.huge, -math.huge, 0 / 0, 3.25 } end,
  function() return pick { "", "x", "a/b", "$1", "*", "\0", "restart", "stop", "resume", "escalate",
    "on_failure", "on_stop", "fail", "drop_new", "permanent", "temporary", "sliding", "fixed",
    "Error", "InitError", "name" .. rand(5), string.rep("long", 300), "\255\254" } end,
  function() return {} end,
  function() return { value(), value(), value() } end,
  function() -- an options table: real keys, random values
    local t = {}
    for _ = 1, rand(4) do
      t[pick { "name", "args", "mailbox", "shutdown", "supervisor", "restart", "max_message_time",
        "capacity", "overflow", "max_retries", "within", "window", "on_limit", "decider", "log",
        "min_backoff", "max_backoff", "random_factor", "jitter", "algorithm", "slot_time", "mode",
        "factory", "reset", "reset_after", "stash", "p", "error", "nth", "bogus" }] = value()
    end
    return t
  end,
  function() return setmetatable({}, bad_mt) end,
  function() return function(...) return value() end end,
  function() return function() error(value()) end end,
  function() return function() coroutine.yield() end end,
  function() return coroutine.create(function() end) end,
  function() return #pool > 0 and pick(pool) or nil end,
  function() return #pool > 0 and pick(pool) or nil end,
  function() return tend.stopped end,
}
local depth = 0
function value()
  depth = depth + 1
  local v = depth > 3 and nil or pick(makers)()
  depth = depth - 1
  return v
end

------------------------------------------------------------ actors
-- A factory that keeps its ctx (to call ctx methods from outside too) and
-- whose behavior does random things with what it gets.
local function factory(ctx, ...)
  keep(ctx)
  keep(ctx.self)
  local n = select("#", ...)
  if rand(10) == 1 then error("factory failed") end
  return {
    receive = function(self, msg, ctx)
      local r = rand(8)
      if r == 1 then error(msg) end
      if r == 2 then ctx:reply(msg) end
      if r == 3 then return pick { tend.stopped, tend.unhandled, factory } end
      if r == 4 then keep(ctx:spawn(factory)) end
      if r == 5 then ctx:sleep(rand(3) / 10) end
    end,
    pre_restart = rand(2) == 1 and function() if rand(4) == 1 then error("pre_restart") end end or nil,
    post_stop = function() if rand(4) == 1 then error("post_stop") end end,
    n = n,
  }
end

------------------------------------------------------------ targets
local skip = { shutdown = true, guardian_strategy = true, -- they end the run
  invariant = true, eventually = true, -- (a property that fails ends it too)
  trace = true, trace_file = true } -- they write files and floods, nothing more
local functions = {}
for name, f in pairs(tend) do
  if type(f) == "function" and not skip[name] then functions[#functions + 1] = "tend." .. name end
end
for _, name in ipairs { "crash", "kill", "flaky", "crash_on", "delay", "drop", "freeze", "heal" } do
  functions[#functions + 1] = "tend.chaos." .. name
end
for _, name in ipairs { "probe" } do functions[#functions + 1] = "tend.testkit." .. name end
for _, name in ipairs { "on_failure", "on_stop", "delays", "child", "restart_count", "reset" } do
  functions[#functions + 1] = "tend.backoff." .. name
end
for _, name in ipairs { "join", "leave", "members", "send", "which_groups" } do
  functions[#functions + 1] = "tend.pg." .. name
end
table.sort(functions) -- pairs order is not the same in every run

local function resolve(path)
  local f = { tend = tend }
  for part in path:gmatch("[^%.]+") do f = f[part] end
  return f
end

local function describe(v)
  local t = type(v)
  if t == "string" then return string.format("%q", #v > 20 and v:sub(1, 20) .. "..." or v) end
  if t == "number" or t == "boolean" or t == "nil" then return tostring(v) end
  return t
end

local self_ref -- the task that runs the batch
local main_ref = tend.self() -- the fuzzer
local calls = 0

-- One call: a function or a method of a value tend made, with random
-- arguments (the running actor itself is never stopped, killed or crashed:
-- that would end the fuzzer, not find a bug).
local function one()
  local f, name, args = nil, nil, {}
  local r = rand(10)
  if r <= 6 then
    name = pick(functions)
    f = resolve(name)
    if name == "tend.spawn" and rand(2) == 1 then args[1] = factory end
  else
    local obj = #pool > 0 and pick(pool) or tend.self()
    local ok, mt = pcall(getmetatable, obj)
    local methods = ok and type(mt) == "table" and rawget(mt, "__index")
    if type(methods) ~= "table" then
      methods = ok and type(mt) == "table" and rawget(mt, "methods") or {}
    end
    local names = {}
    for k, v in pairs(methods) do if type(v) == "function" then names[#names + 1] = k end end
    table.sort(names)
    if #names == 0 then return end
    name = "method " .. pick(names)
    f = methods[name:sub(8)]
    args[1] = obj
  end
  for i = #args + 1, rand(4) do args[i] = value() end
  for i = 1, #args do
    if (rawequal(args[i], self_ref) or rawequal(args[i], main_ref)) and (name:match("stop") or name:match("kill") or name:match("crash")
      or name:match("freeze")) then args[i] = nil end
  end
  calls = calls + 1
  if log then
    local words = {}
    for i = 1, #args do words[i] = describe(args[i]) end
    log:write(calls, " ", name, "(", table.concat(words, ", "), ")\n")
    log:flush()
  end
  local results = table.pack(pcall(f, table.unpack(args, 1, #args)))
  for i = 2, results.n do if type(results[i]) ~= "nil" then keep(results[i]) end end
end

-- Calls run in batches, each in a task of its own (tend.after): a call
-- that blocks for ever (tend.sleep(math.huge)) blocks only its batch.
local t0 = internal.wall_clock()
while internal.wall_clock() - t0 < seconds do
  tend.after(0, function()
    self_ref = tend.self()
    for _ = 1, 50 do one() end
  end)
  tend.sleep(0.001) -- the batch and the actors run
end
local secs = internal.wall_clock() - t0
tend.chaos.heal()
pool = {}
print(string.format("fuzz: %d calls in %.1f s (%d calls/s), seed %d", calls, secs,
  math.floor(calls / secs), seed))
tend.shutdown(0)
