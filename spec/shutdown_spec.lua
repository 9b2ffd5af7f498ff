-- The spawn option `shutdown`: 0 is OTP's brutal_kill (the child is killed
-- at once, reason "killed", post_stop never runs), not the default 5 s.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"
local tk = tend.testkit

TestShutdown = {}

function TestShutdown:tearDown() H.assert_clean() end

-- A supervisor with one child of the given shutdown; the child's post_stop
-- sleeps 1 s and then notes it ran in `log`. Returns the supervisor and
-- the child's ref.
local function sup_with_child(shutdown, log)
  local sup = tend.spawn(function(ctx)
    ctx:spawn(function()
      return {
        receive = function(self, msg, ctx)
          if msg == "busy" then ctx:sleep(100) end
        end,
        post_stop = function(self, ctx)
          log[#log + 1] = "post_stop began"
          ctx:sleep(1)
          log[#log + 1] = "post_stop ended"
        end,
      }
    end, { name = "c", shutdown = shutdown })
    return function(msg, ctx)
      if msg == "child" then ctx:reply(ctx:children()[1]) end
      if type(msg) == "table" and msg.stop then ctx:stop(msg.stop) end
    end
  end)
  return sup, tend.ask(sup, "child", 1)
end

function TestShutdown:test_shutdown_0_kills_at_once_without_post_stop()
  local log = {}
  local sup, c = sup_with_child(0, log)
  local p = tk.probe()
  p:watch(c)
  local t0 = tend.now()
  sup:send { stop = c } -- ctx:stop(child): its supervisor stops it
  local m = p:expect_terminated(c, 10)
  lu.assertEquals(m.reason, "killed")
  lu.assertEquals(tend.now() - t0, 0)
  lu.assertEquals(log, {})
  H.stop_all(sup, p.ref)
end

-- Busy in a message (a sleep of 100 s), it dies at once all the same.
function TestShutdown:test_shutdown_0_kills_a_busy_child_at_once()
  local log = {}
  local sup, c = sup_with_child(0, log)
  local p = tk.probe()
  p:watch(c)
  c:send "busy"
  H.settle()
  local t0 = tend.now()
  sup:send { stop = c }
  lu.assertEquals(p:expect_terminated(c, 10).reason, "killed")
  lu.assertEquals(tend.now() - t0, 0)
  lu.assertEquals(log, {})
  H.stop_all(sup, p.ref)
end

-- Its parent's stop stops it as a brutal kill too.
function TestShutdown:test_shutdown_0_child_of_a_stopping_parent_is_killed()
  local log = {}
  local sup, c = sup_with_child(0, log)
  local p = tk.probe()
  p:watch(c)
  p:watch(sup)
  local t0 = tend.now()
  tend.stop(sup)
  lu.assertEquals(p:expect_terminated(c, 10).reason, "killed")
  lu.assertEquals(p:expect_terminated(sup, 10).reason, "normal")
  lu.assertEquals(tend.now() - t0, 0)
  lu.assertEquals(log, {})
  H.stop_all(p.ref)
end

-- The default (5 s) and any other value still give post_stop its time.
function TestShutdown:test_a_short_shutdown_still_runs_post_stop()
  local log = {}
  local sup, c = sup_with_child(0.5, log)
  local p = tk.probe()
  p:watch(c)
  local t0 = tend.now()
  sup:send { stop = c }
  lu.assertEquals(p:expect_terminated(c, 10).reason, "killed")
  lu.assertEquals(tend.now() - t0, 0.5)
  lu.assertEquals(log, { "post_stop began" })
  H.stop_all(sup)
  log = {}
  sup, c = sup_with_child(nil, log)
  p:watch(c)
  t0 = tend.now()
  sup:send { stop = c }
  lu.assertEquals(p:expect_terminated(c, 10).reason, "shutdown")
  lu.assertEquals(tend.now() - t0, 1)
  lu.assertEquals(log, { "post_stop began", "post_stop ended" })
  H.stop_all(sup, p.ref)
end

-- The host's shutdown kills a shutdown = 0 actor without its post_stop;
-- its siblings' post_stop still run.
function TestShutdown:test_host_shutdown_skips_the_post_stop_of_shutdown_0()
  local path = H.script([[
local tend = require "tend"
for _, s in ipairs { 0, 5 } do
  tend.spawn(function()
    return { receive = function() end,
             post_stop = function() print("post_stop of shutdown " .. s) end }
  end, { shutdown = s })
end
tend.shutdown(0)
]])
  local out, err, code = H.run({ "--virtual-time", path })
  lu.assertEquals(code, 0)
  lu.assertEquals(out, "post_stop of shutdown 5\n")
  lu.assertEquals(err, "")
  os.remove(path)
end
