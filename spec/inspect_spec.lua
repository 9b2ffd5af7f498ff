-- tend.ps() and tend.tree() tell an actor blocked in ask or sleep
-- ("waiting") from one preempted in the middle of a long message ("busy",
-- with how long that message has run). Preemption needs the real clock
-- (under the virtual clock the watchdog never preempts), so the busy
-- cases run as subprocesses with --real-time.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

TestInspect = {}

function TestInspect:tearDown() H.assert_clean() end

local function row(path)
  for _, r in ipairs(tend.ps()) do
    if r.path == path then return r end
  end
end

function TestInspect:test_blocked_in_sleep_or_ask_is_waiting_not_busy()
  local sleeper = tend.spawn(function() return function(m, ctx) ctx:sleep(10) end end, { name = "sleeper" })
  local mute = tend.spawn(function() return function() end end, { name = "mute" })
  local asker = tend.spawn(function() return function(m, ctx) pcall(ctx.ask, ctx, mute, "?", 10) end end,
    { name = "asker" })
  sleeper:send("go")
  asker:send("go")
  H.settle()
  for _, path in ipairs { "/user/sleeper", "/user/asker" } do
    local r = row(path)
    lu.assertEquals(r.state, "waiting", path)
    lu.assertNil(r.busy, path)
  end
  lu.assertEquals(row("/user/mute").state, "running")
  lu.assertStrContains(tend.tree(), "sleeper [waiting] restarts=0 mailbox=0")
  H.stop_all(sleeper, mute, asker)
end

local function run_real(text)
  local path = H.script(text)
  local out, err, code = H.run { "--real-time", path }
  os.remove(path)
  lu.assertEquals(code, 0, err)
  return out
end

function TestInspect:test_a_busy_loop_is_busy_with_its_running_time()
  local out = run_real [[
local tend = require "tend"
local spin = tend.spawn(function()
  return function(m) while true do end end
end, { name = "spin" })
local sleeper = tend.spawn(function() return function(m, ctx) ctx:sleep(100) end end, { name = "sleeper" })
local t0 = tend.now()
spin:send("go")
sleeper:send("go")
tend.sleep(0.3)
local elapsed = tend.now() - t0
for _, r in ipairs(tend.ps()) do
  if r.path == "/user/spin" then
    print(r.state, r.busy >= 0.1 and r.busy <= elapsed + 0.05)
  elseif r.path == "/user/sleeper" then
    print(r.state, r.busy)
  end
end
print((tend.tree():match("spin %[busy %d+%.%d s%] restarts=0 mailbox=0") ~= nil))
tend.chaos.kill(spin) -- tend.kill would wait behind the endless message
tend.sleep(0.05)
print(tend.alive(spin))
tend.shutdown(0)
]]
  lu.assertEquals(out, "busy\ttrue\nwaiting\tnil\ntrue\nfalse\n")
end

-- Once its long message is over, a preempted actor is no longer busy.
function TestInspect:test_busy_ends_with_the_message()
  local out = run_real [[
local tend = require "tend"
local done = false
local function state()
  for _, r in ipairs(tend.ps()) do
    if r.path == "/user/worker" then return r.state, r.busy ~= nil end
  end
end
local worker = tend.spawn(function()
  return function(m, ctx)
    if m == "state?" then ctx:reply(table.pack(state())) end
    if m == "long" then
      local t = tend.now()
      while tend.now() - t < 0.2 do end
      done = true
    end
  end
end, { name = "worker" })
worker:send("long")
tend.sleep(0.1)
print(state())
while not done do tend.sleep(0.05) end
tend.sleep(0.01)
print(state())
local own = tend.ask(worker, "state?", 1) -- its next message: not busy
print(own[1], own[2])
tend.stop(worker)
]]
  lu.assertEquals(out, "busy\ttrue\nrunning\tfalse\nrunning\tfalse\n")
end

-- A task whose call never ends (the main chunk, the REPL's loop) is busy
-- while it runs long, and no longer once it waits.
function TestInspect:test_a_task_that_waits_is_not_busy()
  local out = run_real [[
local tend = require "tend"
local t0 = tend.now()
while tend.now() - t0 < 0.2 do end -- long enough for the watchdog to mark it busy
local seen
tend.after(0.05, function()
  for _, r in ipairs(tend.ps()) do if r.path == "/user/main" then seen = r.state end end
end)
tend.sleep(0.2) -- main waits
local now
for _, r in ipairs(tend.ps()) do if r.path == "/user/main" then now = r.state end end
print(seen, now) -- busy no more once it waited (the REPL's loop after Ctrl-C)
tend.shutdown(0)
]]
  lu.assertEquals(out, "waiting\trunning\n")
end
