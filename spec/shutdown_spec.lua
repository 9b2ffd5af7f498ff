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

function TestShutdown:test_a_permanent_child_that_stops_during_a_shutdown_is_not_restarted()
  local path = H.script([[
local tend = require "tend"
local starts = 0
local p
tend.spawn(function(ctx)
  p = ctx:spawn(function()
    starts = starts + 1
    return function(m) if m == "quit" then return tend.stopped end end
  end, { name = "p", restart = "permanent" })
  return { receive = function() end, post_stop = function() print("starts " .. starts) end }
end, { name = "a" })
tend.spawn(function()
  return { receive = function() end,
           post_stop = function(self, ctx) p:send("quit") ctx:sleep(1) end }
end, { name = "b" })
tend.sleep(0)
tend.shutdown(0)
]])
  local out, _, code = H.run({ "--virtual-time", path })
  lu.assertEquals(code, 0)
  lu.assertEquals(out, "starts 1\n")
  os.remove(path)
end

function TestShutdown:test_a_permanent_child_that_stops_while_its_supervisor_stops_is_not_restarted()
  local p = tk.probe()
  local starts = 0
  local sup = tend.spawn(function(ctx)
    local c1 = ctx:spawn(function()
      starts = starts + 1
      return function(m) if m == "quit" then return tend.stopped end end
    end, { name = "c1", restart = "permanent" })
    ctx:spawn(function()
      return { receive = function() end, post_stop = function() c1:send("quit") end }
    end, { name = "c2" })
    return function(m, ctx) ctx:reply(c1) end
  end)
  local c1 = tend.ask(sup, "?", 1)
  p:watch(c1)
  tend.stop(sup) -- c2 first: its post_stop makes c1 stop by itself
  lu.assertEquals(p:expect_terminated(c1, 1).reason, "normal")
  lu.assertEquals(starts, 1)
  H.stop_all(p.ref)
end

-- shutdown = math.huge: post_stop is never killed, however long it takes;
-- the longest finite shutdown (1e9 s: longer is refused, see
-- timers_spec) waits as long as it says.
function TestShutdown:test_shutdown_math_huge_never_kills_post_stop()
  for _, shutdown in ipairs { "math.huge", "1e9" } do
    local path = H.script([[
local tend = require "tend"
local a = tend.spawn(function()
  return { receive = function() end,
           post_stop = function(self, ctx) ctx:sleep(1e9 - 1) print("post_stop done") end }
end, { shutdown = ]] .. shutdown .. [[ })
tend.stop(a)
]])
    local out, err, code = H.run({ "--virtual-time", path })
    lu.assertEquals(code, 0)
    lu.assertEquals(out, "post_stop done\n", "shutdown = " .. shutdown)
    lu.assertEquals(err, "")
    os.remove(path)
  end
end

-- Nothing can be spawned once a shutdown has begun, and a stopping actor
-- takes no new children.
function TestShutdown:test_no_spawn_during_a_shutdown_or_by_a_stopping_actor()
  local errs = {}
  local a = tend.spawn(function()
    return { receive = function() end, post_stop = function(self, ctx)
      errs[1] = select(2, pcall(ctx.spawn, ctx, function() return function() end end))
    end }
  end)
  H.stop_all(a)
  lu.assertStrContains(errs[1], "the parent is stopping; it cannot take new children")
  local path = H.script([[
local tend = require "tend"
tend.spawn(function()
  return { receive = function() end, post_stop = function()
    print(select(2, pcall(tend.spawn, function() return function() end end)))
  end }
end)
tend.shutdown(0)
]])
  local out, _, code = H.run({ "--virtual-time", path })
  lu.assertEquals(code, 0)
  lu.assertStrContains(out, "the host is shutting down; nothing can be spawned")
  os.remove(path)
end

-- A tend.after function due once a shutdown has begun does not run.
function TestShutdown:test_tend_after_functions_do_not_run_during_a_shutdown()
  local path = H.script([[
local tend = require "tend"
tend.after(0.5, function() print("ran") end)
tend.spawn(function()
  return { receive = function() end, post_stop = function(self, ctx) ctx:sleep(1) print("stopped") end }
end)
tend.shutdown(0)
]])
  local out, _, code = H.run({ "--virtual-time", path })
  lu.assertEquals(code, 0)
  lu.assertEquals(out, "stopped\n")
  os.remove(path)
end

-- A closed stdout (the reader of a pipe went away) killed the host with
-- SIGPIPE before any post_stop ran: now it is said once and the tree stops.
function TestShutdown:test_a_closed_stdout_stops_the_tree_gracefully()
  local script = H.script([[
    local tend = require "tend"
    tend.spawn(function() return { receive = function() end,
      post_stop = function() io.stderr:write("post_stop ran\n") end } end)
    for i = 1, 100000 do print(i) end]])
  local err = os.tmpname()
  os.execute("(\"" .. require("tend.internal").executable() .. "\" " .. script .. " 2>" .. err
    .. "; echo $? >>" .. err .. ") | head -n 1 >/dev/null")
  local f = io.open(err, "rb")
  local text = f:read("a")
  f:close()
  os.remove(err)
  os.remove(script)
  lu.assertStrContains(text, "tend: stdout is closed (EPIPE); stopping every actor\npost_stop ran\n141\n")
end

-- After the main chunk returns, actors busy in one long call (preempted,
-- no max_message_time) are all that is left: the host's end begins; a call
-- that ends within its actor's shutdown time is followed by post_stop, one
-- still running then is killed (no post_stop, reason "killed"), as OTP's
-- shutdown timeout; the host exits 0 instead of spinning for ever.
function TestShutdown:test_a_spinning_actor_is_killed_at_the_end_of_its_shutdown_time()
  local script = H.script([[
local tend = require "tend"
local clock = require("tend.internal").wall_clock
tend.spawn(function() return {
  receive = function() while true do end end,
  post_stop = function() print("spin post_stop") end } end, { name = "spin", shutdown = 1 }):send(1)
tend.spawn(function() return {
  receive = function() local t = clock() while clock() - t < 2 do end print("short done") end,
  post_stop = function() print("short post_stop") end } end, { name = "short" }):send(1)
tend.sleep(0.1)
print("main returns")
]])
  local trace = os.tmpname()
  local t0 = require("tend.internal").wall_clock()
  local out, err, code = H.run({ "--trace", trace, script })
  local took = require("tend.internal").wall_clock() - t0
  lu.assertEquals(code, 0, err)
  lu.assertEquals(out, "main returns\nshort done\nshort post_stop\n")
  lu.assertStrMatches(err, "^%[[%d.]+%] warn  /user/spin: still in its call at the end of its " ..
    "shutdown time; killed\n$")
  lu.assertTrue(took >= 1 and took < 30, took)
  local f = io.open(trace, "rb")
  local text = f:read("a")
  f:close()
  lu.assertStrContains(text, '"ev":"terminated","path":"/user/short","reason":"shutdown"}')
  lu.assertStrContains(text, '"ev":"terminated","path":"/user/spin","reason":"killed"}')
  os.remove(trace)
  os.remove(script)
end

-- A call killed at the end of its shutdown time never gets its post_stop,
-- even when its supervisor restarts in the middle of a group restart (the
-- group's "build it anew" went to every held child, and the killed actor
-- took it as leave to run post_stop once its own children were gone). m is
-- stopped by c while busy, so it is not in p's group restart that c's
-- failure begins; r's busy child keeps that group waiting; y makes p fail
-- (g restarts it) after m was killed and before m's child k is.
function TestShutdown:test_a_call_killed_at_the_end_runs_no_post_stop_when_its_group_is_abandoned()
  local script = H.script([[
local tend = require "tend"
local clock = require("tend.internal").wall_clock
local function spin(s) local t = clock() while clock() - t < s do end end
local function forever() return function() while true do end end end
local refs, made = {}, 0
tend.spawn(function(gctx)
  gctx:spawn(function(ctx)
    made = made + 1
    if made == 1 then
      refs.c = ctx:spawn(function() return function()
        spin(0.2) tend.stop(refs.m) error("c fails") end end, { name = "c" })
      refs.m = ctx:spawn(function(mctx)
        refs.k = mctx:spawn(forever, { name = "k", shutdown = 2 })
        return { receive = function() while true do end end,
                 post_stop = function() print("m post_stop") end }
      end, { name = "m", shutdown = 0.3 })
      refs.r = ctx:spawn(function(rctx)
        refs.kk = rctx:spawn(forever, { name = "kk", shutdown = 2.5 })
        return function() end
      end, { name = "r" })
    end
    return function(msg) if msg == "boom" then error("p fails") end end
  end, { name = "p", children = tend.all_for_one {} })
  return function() end
end, { name = "g" })
tend.sleep(0.1)
tend.spawn(function() return function()
  spin(1.2) tend.send("/user/g/p", "boom") while true do end end end, { name = "y", shutdown = 3.5 }):send(1)
refs.k:send(1) refs.kk:send(1) refs.m:send(1) refs.c:send(1)
print("main returns")
]])
  local trace = os.tmpname()
  local out, err, code = H.run({ "--trace", trace, script })
  lu.assertEquals(code, 0, err)
  lu.assertEquals(out, "main returns\n")
  local killed = {}
  for p in err:gmatch("warn  (%S+): still in its call at the end of its shutdown time; killed\n") do
    killed[#killed + 1] = p
  end
  lu.assertEquals(killed, { "/user/g/p/m", "/user/g/p/m/k", "/user/g/p/r/kk", "/user/y" })
  local f = io.open(trace, "rb")
  local text = f:read("a")
  f:close()
  -- m was killed before p failed, and p restarted before m was gone
  local at = {}
  for t, what in text:gmatch('{"t":([%d.]+),"ev":"([^"]+","path":"[^"]+)"') do
    at[what] = at[what] or tonumber(t)
  end
  lu.assertTrue(at['fail","path":"/user/g/p'] < at['terminated","path":"/user/g/p/m'], text)
  lu.assertStrContains(text, '"ev":"terminated","path":"/user/g/p/m","reason":"killed"}')
  lu.assertStrContains(text, '"ev":"restart","path":"/user/g/p","count":1,"incarnation":2}')
  os.remove(trace)
  os.remove(script)
end
