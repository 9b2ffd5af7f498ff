-- The port of Erlang/OTP's lib/stdlib/test/supervisor_SUITE.erl, its
-- second half: a supervisor's start and stop (shutdown infinity, a
-- timeout, brutal_kill, the terminate order) and the child
-- administration (start_child, terminate_child, which_children,
-- count_children, child specs, flags). The restart strategies and types,
-- and the cases not ported with the reason, are in otp_supervisor_spec.lua;
-- the scaffolding in otp_supervisor_helper.lua.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"
local tk = tend.testkit
local O = require "otp_supervisor_helper"
local otp, child, idle, start_link = O.otp, O.child, O.idle, O.start_link
local counts, refs, restarts, check_exit = O.counts, O.refs, O.restarts, O.check_exit

TestOtpSupervisorStop = {}

function TestOtpSupervisorStop:tearDown() H.assert_clean_and_no_mail() end

-- sup_start_normal: a supervisor starts and can be stopped; its watcher
-- sees the exit. (OTP stops it with exit(Pid, shutdown); tend.stop from
-- an actor that is not its parent is reason "normal", design §5.3.)
function TestOtpSupervisorStop:test_sup_start_normal()
  local sup, top = start_link(otp("one_for_one", 2, 3600))
  local p = tk.probe()
  p:watch(sup)
  lu.assertTrue(tend.alive(sup))
  tend.stop(sup)
  lu.assertEquals(p:expect_terminated(sup).reason, "normal")
  -- stopped by its own parent it is "shutdown", OTP's name
  local sup2 = tend.start_child(top, idle, { children = otp("one_for_one", 2, 3600) })
  p:watch(sup2)
  tend.stop_child(top, sup2)
  lu.assertEquals(p:expect_terminated(sup2).reason, "shutdown")
  H.stop_all(top, p.ref)
end

-- sup_start_fail: init/1 raises: the supervisor does not start, and the
-- error reaches whoever watches it (OTP: {error, Term} and exit Term).
function TestOtpSupervisorStop:test_sup_start_fail()
  local p = tk.probe()
  local top = tend.spawn(idle)
  local sup = tend.start_child(top, function() error({ badmatch = 2 }) end,
    { children = otp("one_for_one", 2, 3600) })
  p:watch(sup)
  local t = p:expect_terminated(sup)
  lu.assertEquals(t.reason.kind, "InitError")
  lu.assertTrue(t.existence_confirmed)
  lu.assertFalse(tend.alive(sup))
  lu.assertEquals(tend.children(top), {}) -- InitError stops it by default, no restart
  H.stop_all(top, p.ref)
end

-- sup_stop_infinity: shutdown = infinity for a supervisor child and a
-- worker: both end with reason shutdown when their supervisor stops.
function TestOtpSupervisorStop:test_sup_stop_infinity()
  local log = {}
  local sup, top = start_link(otp("one_for_one", 2, 3600))
  local c1 = tend.start_child(sup, idle, { name = "child1", shutdown = math.huge,
    restart = "permanent", children = tend.one_for_one {} })
  local c2 = tend.start_child(sup, child(log, "child2"), { name = "child2",
    shutdown = math.huge, restart = "permanent" })
  local p = tk.probe()
  p:watch(c1)
  p:watch(c2)
  tend.stop_child(top, sup)
  -- youngest first
  lu.assertEquals(p:expect_terminated(c2).reason, "shutdown")
  lu.assertEquals(p:expect_terminated(c1).reason, "shutdown")
  lu.assertEquals(log, { "start child2", "stop child2" })
  H.stop_all(top, p.ref)
end

-- sup_stop_timeout: a child busy past its shutdown time (1 s) is killed;
-- the other stops with shutdown.
function TestOtpSupervisorStop:test_sup_stop_timeout()
  local log = {}
  local sup, top = start_link(otp("one_for_one", 2, 3600))
  local c1 = tend.start_child(sup, child(log, "child1"), { name = "child1", shutdown = 1,
    restart = "permanent" })
  local c2 = tend.start_child(sup, function(ctx)
    return { receive = function() end,
             post_stop = function(self, ctx) ctx:sleep(200) end } -- terminate/2 hangs
  end, { name = "child2", shutdown = 1, restart = "permanent" })
  local p = tk.probe()
  p:watch(c1)
  p:watch(c2)
  local t0 = tend.now()
  tend.stop_child(top, sup)
  local t2 = p:expect_terminated(c2, 5)
  lu.assertEquals(t2.reason, "killed")
  lu.assertAlmostEquals(tend.now() - t0, 1, 1e-9) -- after exactly its shutdown time
  lu.assertEquals(p:expect_terminated(c1).reason, "shutdown")
  H.stop_all(top, p.ref)
end

-- sup_stop_timeout, the child busy in a message (OTP's {sleep, 200000}:
-- it does not reach the exit signal in time): killed after 1 s as well.
function TestOtpSupervisorStop:test_sup_stop_timeout_busy_in_a_message()
  local log = {}
  local sup, top = start_link(otp("one_for_one", 2, 3600))
  local c2 = tend.start_child(sup, child(log, "child2"), { name = "child2", shutdown = 1,
    restart = "permanent" })
  c2:send({ sleep = 200000 })
  H.settle()
  local p = tk.probe()
  p:watch(c2)
  local t0 = tend.now()
  tend.stop_child(top, sup)
  local t = p:expect_terminated(c2, 5)
  lu.assertTrue(t.reason == "killed" or t.reason == "shutdown", tostring(t.reason))
  lu.assertTrue(tend.now() - t0 <= 1 + 1e-9, "stopped after " .. (tend.now() - t0) .. " s")
  H.stop_all(top, p.ref)
end

-- sup_stop_brutal_kill: shutdown = brutal_kill (0) is killed, no
-- terminate/2 (post_stop); the other child stops with shutdown.
function TestOtpSupervisorStop:test_sup_stop_brutal_kill()
  local log = {}
  local sup, top = start_link(otp("one_for_one", 2, 3600))
  local c1 = tend.start_child(sup, child(log, "child1"), { name = "child1", shutdown = 1,
    restart = "permanent" })
  local c2 = tend.start_child(sup, child(log, "child2"), { name = "child2", shutdown = 0,
    restart = "permanent" })
  local p = tk.probe()
  p:watch(c1)
  p:watch(c2)
  tend.stop_child(top, sup)
  lu.assertEquals(p:expect_terminated(c2).reason, "killed")
  lu.assertEquals(p:expect_terminated(c1).reason, "shutdown")
  lu.assertEquals(log, { "start child1", "start child2", "stop child1" })
  H.stop_all(top, p.ref)
end

-- child_adm: start_child, which_children, count_children,
-- terminate_child. tend keeps no child spec for a stopped child, so what
-- OTP's restart_child and delete_child act on does not exist: a
-- terminated child is gone ([0,0,0,0] where OTP says [1,0,0,1]).
function TestOtpSupervisorStop:test_child_adm()
  local log = {}
  local sup, top = start_link(otp("one_for_one", 2, 3600))
  local c = tend.start_child(sup, child(log, "child1"), { name = "child1", restart = "permanent" })
  lu.assertEquals(refs(sup), { c })
  lu.assertEquals(counts(sup), { 1, 1, 0, 1 })
  -- start of an already running child: {error, {already_started, _}}
  lu.assertErrorMsgContains("child1", tend.start_child, sup, child(log, "x"), { name = "child1" })
  lu.assertEquals(counts(sup), { 1, 1, 0, 1 })
  -- terminate_child of what is not a child: {error, not_found}
  local other = tend.spawn(idle)
  local ok, why = tend.stop_child(sup, other)
  lu.assertNil(ok)
  lu.assertStrContains(why, "is not a live child of")
  lu.assertTrue(tend.alive(other))
  -- termination: reason shutdown, final for a permanent child
  local p = tk.probe()
  p:watch(c)
  lu.assertTrue(tend.stop_child(sup, c))
  lu.assertEquals(p:expect_terminated(c).reason, "shutdown")
  H.settle()
  lu.assertEquals(refs(sup), {})
  lu.assertEquals(counts(sup), { 0, 0, 0, 0 })
  -- start again (OTP: restart_child, or start_child after delete_child)
  local c3 = tend.start_child(sup, child(log, "child1"), { name = "child1", restart = "permanent" })
  H.settle()
  lu.assertEquals(refs(sup), { c3 })
  lu.assertEquals(counts(sup), { 1, 1, 0, 1 })
  lu.assertEquals(log, { "start child1", "stop child1", "start child1" })
  -- a supervisor that is gone: OTP raises noproc
  H.stop_all(top)
  lu.assertNil((tend.children(sup)))
  lu.assertNil((tend.count_children(sup)))
  lu.assertErrorMsgContains("tend.start_child: sup:", tend.start_child, sup, idle)
  H.stop_all(other, p.ref)
end

-- child_adm_simple: dynamic children (simple_one_for_one): started with
-- arguments, listed, terminated by ref; a ref that is not a child is
-- not_found and left alone.
function TestOtpSupervisorStop:test_child_adm_simple()
  local sup, top = start_link(otp("one_for_one", 2, 3600))
  lu.assertEquals(refs(sup), {})
  local function worker(ctx, x) return function(msg, c) c:reply(x) end end
  local c1 = tend.start_child(sup, worker, { args = { 1 }, restart = "permanent" })
  lu.assertEquals(counts(sup), { 1, 1, 0, 1 })
  local c2 = tend.start_child(sup, worker, { args = { 2 }, restart = "permanent" })
  lu.assertEquals(refs(sup), { c1, c2 })
  lu.assertEquals(counts(sup), { 2, 2, 0, 2 })
  lu.assertEquals(tend.ask(c2, "x"), 2)
  lu.assertTrue(tend.stop_child(sup, c1))
  H.settle()
  lu.assertEquals(refs(sup), { c2 })
  lu.assertEquals(counts(sup), { 1, 1, 0, 1 })
  lu.assertFalse(tend.alive(c1))
  -- terminating it again: OTP says ok; tend says it is not a live child
  lu.assertNil((tend.stop_child(sup, c1)))
  lu.assertEquals(counts(sup), { 1, 1, 0, 1 })
  local nochild = tend.spawn(idle)
  lu.assertNil((tend.stop_child(sup, nochild)))
  lu.assertTrue(tend.alive(nochild))
  H.stop_all(top, nochild)
end

-- child_specs: bad child specs are refused with the reason named.
function TestOtpSupervisorStop:test_child_specs()
  local sup, top = start_link(otp("one_for_one", 2, 3600))
  lu.assertErrorMsgContains("factory", tend.start_child, sup, "hej")
  lu.assertErrorMsgContains("restart", tend.start_child, sup, idle, { restart = "prmanent" })
  lu.assertErrorMsgContains("shutdown", tend.start_child, sup, idle, { shutdown = -10 })
  lu.assertErrorMsgContains("did you mean 'shutdown'", tend.start_child, sup, idle, { shutdwn = 1 })
  lu.assertEquals(counts(sup), { 0, 0, 0, 0 }) -- nothing started
  H.stop_all(top)
end

-- sup_flags: a bad strategy is refused (invalid_intensity, invalid_period).
function TestOtpSupervisorStop:test_sup_flags()
  lu.assertErrorMsgContains("max_retries", tend.one_for_one, { max_retries = math.huge })
  lu.assertErrorMsgContains("max_retries", tend.one_for_one, { max_retries = -2 })
  lu.assertErrorMsgContains("within", tend.one_for_one, { within = 0 })
  lu.assertErrorMsgContains("window", tend.one_for_one, { window = "none" })
  lu.assertErrorMsgContains("unknown option 'silly_flag'", tend.one_for_one, { silly_flag = true })
  -- OTP: period = infinity is invalid; tend (Akka) takes it as no window
  lu.assertStrContains(tend.describe(tend.one_for_one { max_retries = 2, within = math.huge }),
    "at most 2 restarts")
end

-- count_children: 1000 then 2000 dynamic temporary children are counted;
-- when all are killed, none is left.
function TestOtpSupervisorStop:test_count_children()
  local sup, top = start_link(otp("one_for_one", 2, 3600))
  for _ = 1, 1000 do tend.start_child(sup, idle, { restart = "temporary" }) end
  lu.assertEquals(#tend.children(sup), 1000)
  lu.assertEquals(counts(sup), { 1000, 1000, 0, 1000 })
  for _ = 1, 1000 do tend.start_child(sup, idle, { restart = "temporary" }) end
  lu.assertEquals(counts(sup), { 2000, 2000, 0, 2000 })
  lu.assertEquals(refs(sup), refs(sup))
  for _, r in ipairs(refs(sup)) do tend.chaos.kill(r) end
  H.settle()
  lu.assertEquals(counts(sup), { 0, 0, 0, 0 })
  lu.assertTrue(tend.alive(sup))
  H.stop_all(top)
end

-- simple_one_for_one_shutdown: children with a 2 s shutdown whose
-- terminate takes 1 s, 1 s and 5 s: the first two stop, the third is
-- killed at 2 s. OTP stops simple_one_for_one children all at once (the
-- supervisor is down after 2 s); tend stops every supervisor's children
-- one at a time, youngest first (design §5.3): 2 + 1 + 1 = 4 s.
function TestOtpSupervisorStop:test_simple_one_for_one_shutdown()
  local sup, top = start_link(otp("one_for_one", 2, 3600))
  local function slow(ctx, t)
    return { receive = function() end,
             post_stop = function(self, ctx) ctx:sleep(t) end }
  end
  local kids = {}
  for i, t in ipairs { 1, 1, 5 } do
    kids[i] = tend.start_child(sup, slow, { args = { t }, shutdown = 2, restart = "permanent" })
  end
  local p = tk.probe()
  for _, k in ipairs(kids) do p:watch(k) end
  p:watch(sup)
  local t0 = tend.now()
  tend.stop_child(top, sup)
  lu.assertEquals(p:expect_terminated(kids[3], 10).reason, "killed")
  lu.assertAlmostEquals(tend.now() - t0, 2, 1e-9)
  lu.assertEquals(p:expect_terminated(kids[2], 10).reason, "shutdown")
  lu.assertEquals(p:expect_terminated(kids[1], 10).reason, "shutdown")
  lu.assertEquals(p:expect_terminated(sup, 10).reason, "shutdown")
  lu.assertAlmostEquals(tend.now() - t0, 4, 1e-9)
  H.stop_all(top, p.ref)
end

-- (newer OTP, shutdown order) children terminate in the reverse of their
-- start order, each gone before the next is asked.
function TestOtpSupervisorStop:test_terminate_order()
  local log = {}
  local sup, top = start_link(otp("one_for_one", 2, 3600))
  for i = 1, 4 do
    tend.start_child(sup, function(ctx)
      return { receive = function() end,
               post_stop = function(self, ctx) ctx:sleep(0.1) log[#log + 1] = i end }
    end, { name = "c" .. i })
  end
  local t0 = tend.now()
  tend.stop_child(top, sup)
  H.settle()
  tend.sleep(1)
  lu.assertEquals(log, { 4, 3, 2, 1 })
  lu.assertFalse(tend.alive(sup))
  lu.assertTrue(tend.now() - t0 >= 0.4)
  H.stop_all(top)
end
