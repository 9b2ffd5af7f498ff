-- A hostile peer: frames of every kind of the node layer (MSG, WATCH,
-- DOWN, PG, PROBE, heartbeats) with each field replaced by a value of the
-- wrong kind, cut short or with bytes flipped, fed to simulated nodes.
-- Each is logged and dropped; no such frame stops a node's /system/node,
-- so the other nodes keep seeing it up; /system/node restarts in place
-- after a failure of its own. Times are exact (virtual clock).
local lu = require "luaunit"
local tend = require "tend"
local core = require "tend.core"
local H = require "helper"

if not tend.virtual_time() then return end

TestNodeFrames = {}

local T = 2 -- the node timeout: heartbeats every 0.5 s
local MSG, WATCH, DOWN, HB, PROBE, HELLO, PG = 1, 2, 3, 4, 5, 6, 7

local ECHO = [[
local tend = require "tend"
tend.spawn(function() return function(m, c) c:reply(m) end end, { name = "echo" })
]]

function TestNodeFrames:setUp() while select("#", tend.receive(0)) > 0 do end end
function TestNodeFrames:tearDown()
  tend.sim.stop()
  tend.sleep(1)
  H.settle()
  H.assert_clean()
end

local function frame(header, body)
  return string.pack(">s4", string.pack(">s2", core.codec_encode(header)) .. (body or ""))
end

local function node_line(tree)
  return tree:match("\n  node %[[^\n]*")
end

-- The frame of the issue: a WATCH whose target is an integer. Node a logs
-- it and drops it; its /system/node never fails, so ctl still sees a up
-- after twice the node timeout.
function TestNodeFrames:test_a_watch_of_an_integer_is_logged_and_dropped()
  local script = H.script([[
local tend = require "tend"
local core = require "tend.core"
tend.sim.nodes({ a = { code = "" } }, { join = "ctl", timeout = 2 })
tend.sleep(0.1)
local function frame(t) return string.pack(">s4", string.pack(">s2", core.codec_encode(t))) end
core.sim_publish("tend.n.a", frame({ 2, 42, "x" }))
core.sim_publish("tend.n.a", frame({ 2, tend.self(), "x" }))
core.sim_publish("tend.n.a", frame({ 9 }))
core.sim_publish("tend.n.a", frame({ 1, "x" }))
core.sim_publish("tend.n.a", frame("nonsense"))
core.sim_publish("tend.n.a", string.pack(">s4", string.pack(">s2", "\xc7\x05\x01\xdf\xff\xff\xff\xff")))
core.sim_publish("tend.n.a", "\0\0\0\9ab")
core.sim_publish("tend.hb", string.pack(">s2", core.codec_encode({ 4, "a/b", 1 })))
tend.sleep(4)
print(table.concat(tend.node.list(), " "))
print(tend.node.tree("a"))
tend.sim.stop()
]])
  local out, err, code = H.run({ "--virtual-time", script })
  os.remove(script)
  lu.assertEquals(code, 0, err)
  lu.assertEquals(out, "a\n/user [running] restarts=0 mailbox=0\n/system [running] restarts=0 mailbox=0\n"
    .. "  node [running] restarts=0 mailbox=0\n\n")
  local refused = "a message from another node was refused: "
  lu.assertEquals(err, table.concat({
    "[0.100] warn  @a: " .. refused .. "WATCH: target: expected a ref of this node, got 42",
    "[0.100] warn  @a: " .. refused .. "WATCH: target: expected a ref of this node, got Ref(/user/main@ctl)",
    "[0.100] warn  @a: " .. refused .. "kind: expected 1 (MSG), 2 (WATCH), 3 (DOWN), 5 (PROBE) or 7 (PG), got 9",
    "[0.100] warn  @a: " .. refused .. "MSG: target: expected a ref of this node, got \"x\"",
    "[0.100] warn  @a: " .. refused .. "a header: expected a list, got \"nonsense\"",
    "[0.100] warn  @a: " .. refused
      .. "decode: not a tend message: a malformed ref (a container longer than the bytes left)",
    "[0.100] warn  @a: " .. refused .. "a malformed batch",
    "[0.100] warn  @a: " .. refused .. "a malformed heartbeat",
    "" }, "\n"))
end

-- Every field of every kind replaced by values of the wrong kind, every
-- truncation, seeded byte flips: node a logs and drops them all, stays up
-- for ctl and b, its /system/node never fails and its actors answer.
function TestNodeFrames:test_mutated_frames_of_every_kind_leave_the_node_up()
  tend.sim.nodes({ a = { code = ECHO }, b = { code = "" } }, { join = "ctl", timeout = T })
  tend.sleep(0.1)
  local e = tend.spawn_on("a", "simnode_actors.echo")
  local sink_b = tend.spawn_on("b", "simnode_actors.sink")
  local sink = tend.spawn(function() return function() end end)
  local inc = require("tend.node").incarnation()
  local body = core.codec_encode({ "hi", 1 })
  local pg_body = core.codec_encode({ "join", { { "g", { sink } } } })
  local valid = {
    { { MSG, e, sink }, body },
    { { WATCH, e, "ctl" } },
    { { DOWN, sink_b, "normal" } },
    { { PG, "ctl", inc }, pg_body },
    { { PROBE } },
  }
  local wrong = { 42, -1, 0, 2 ^ 53, 1.5, -0.0, "x", "", "a b", true, false, {}, { 1, 2 }, { x = { 1 } },
    string.rep("z", 300), sink_b, sink, "ctl" } -- (not e: as a sender, it would answer itself for ever)
  local sent = 0
  local function feed(bytes)
    core.sim_publish("tend.n.a", bytes)
    sent = sent + 1
  end
  for _, v in ipairs(valid) do
    local h, b = v[1], v[2]
    for i = 1, #h + 1 do
      for _, w in ipairs(wrong) do
        local m = table.move(h, 1, #h, 1, {})
        m[i] = w
        feed(frame(m, b))
      end
      local m = table.move(h, 1, #h, 1, {})
      m[i] = nil
      feed(frame(m, b))
    end
    -- the body cut short or not msgpack
    if b then
      for n = 0, #b - 1 do feed(frame(h, b:sub(1, n))) end
      feed(frame(h, "\xc1"))
    end
    -- the header's bytes cut short, and flipped (seeded)
    local raw = core.codec_encode(h)
    for n = 0, #raw - 1 do feed(string.pack(">s4", string.pack(">s2", raw:sub(1, n)))) end
    for _ = 1, 200 do
      local at = tend.random(1, #raw)
      local bytes = raw:sub(1, at - 1) .. string.char(tend.random(0, 255)) .. raw:sub(at + 1)
      feed(string.pack(">s4", string.pack(">s2", bytes) .. (b or "")))
    end
  end
  -- heartbeats with wrong fields
  for i = 1, 4 do
    for _, w in ipairs(wrong) do
      local h = { HB, "z", 7, sink }
      h[i] = w
      if w ~= "ctl" then -- (a heartbeat in ctl's name would be a valid one)
        core.sim_publish("tend.hb", string.pack(">s2", core.codec_encode(h)))
      end
    end
  end
  lu.assertTrue(sent > 1000, "sent " .. sent)
  tend.sleep(2 * T)
  lu.assertEquals(tend.node.list(), { "a", "b" })
  lu.assertEquals(node_line(tend.node.tree("a")), "\n  node [running] restarts=0 mailbox=0")
  lu.assertEquals(tend.ask(e, "still here"), { node = "a", echo = "still here" })
  tend.stop(sink)
end

-- /system/node fails (here: chaos in its tick): it restarts in place,
-- same ref, and goes on with heartbeats and the watches it holds for
-- other nodes; the others never see this node down.
function TestNodeFrames:test_the_node_actor_restarts_in_place_after_a_failure()
  tend.sim.nodes({ a = { code = ECHO } }, { join = "ctl", timeout = T })
  tend.sleep(0.1)
  local e = tend.spawn_on("a", "simnode_actors.echo")
  local q = tend.spawn_on("a", "simnode_actors.quitter")
  local got = {}
  local w = tend.spawn(function(ctx)
    ctx:watch(q)
    return function(m) got[#got + 1] = { m.tend, m.reason } end
  end)
  -- a's node actor fails at its next tick
  lu.assertEquals(tend.ask(tend.spawn_on("a", "simnode_actors.saboteur"), "crash"), "armed")
  tend.sleep(1)
  lu.assertEquals(node_line(tend.node.tree("a")), "\n  node [running] restarts=1 mailbox=0")
  -- and ctl's own, the same way
  local once = true
  tend.chaos.crash_on("/system/node", function(m)
    if m == "tick" and once then once = false return true end
    return false
  end, { nth = 1 })
  tend.sleep(1)
  lu.assertEquals(node_line(tend.tree()), "\n  node [running] restarts=1 mailbox=0")
  tend.chaos.heal()
  tend.sleep(2 * T)
  lu.assertEquals(tend.node.list(), { "a" })
  lu.assertEquals(tend.ask(e, "x"), { node = "a", echo = "x" })
  lu.assertEquals(got, {})
  -- the watch a's node actor holds for ctl (made before its restart) fires
  q:send("quit")
  tend.sleep(0.1)
  lu.assertEquals(got, { { "terminated", "normal" } })
  tend.stop(w)
end
