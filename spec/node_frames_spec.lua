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

-- A malformed frame: a WATCH whose target is an integer. Node a logs it
-- and drops it; its /system/node never fails, so ctl still sees a up after
-- twice the node timeout.
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
-- truncation, seeded byte flips: node a refuses each frame the protocol
-- does not allow (one warn line each, counted against what was fed) and
-- takes the others; it stays up for ctl and b, its /system/node never
-- fails and its actors answer. (Run as a child: its log is the count.)
function TestNodeFrames:test_mutated_frames_of_every_kind_leave_the_node_up()
  local script = H.script([=[
package.path = "./spec/?.lua;" .. package.path
local tend = require "tend"
local core = require "tend.core"
local MSG, WATCH, DOWN, HB, PROBE, PG = 1, 2, 3, 4, 5, 7
local T = 2
tend.sim.nodes({ a = { code = "" }, b = { code = "" } }, { join = "ctl", timeout = T })
tend.sleep(0.1)
local e = tend.spawn_on("a", "simnode_actors.echo")
local sink_b = tend.spawn_on("b", "simnode_actors.sink")
local sink = tend.spawn(function() return function() end end)
local inc = require("tend.node").incarnation()
local function frame(header, body)
  return string.pack(">s4", string.pack(">s2", core.codec_encode(header)) .. (body or ""))
end
-- What the protocol allows in each field (beyond the last: anything).
local function ref(v) return (pcall(core.alive, v)) end
local function of_a(v) return v == e end -- the only ref of node a fed here
local function name(v) return type(v) == "string" and v:match("^[%w_-]+$") ~= nil end
local function int(v) return math.type(v) == "integer" end
local function is(k) return function(v) return v == k end end
local allows = {
  [MSG] = { is(MSG), of_a, function(v) return v == nil or ref(v) end },
  [WATCH] = { is(WATCH), of_a, name },
  [DOWN] = { is(DOWN), ref },
  [PG] = { is(PG), name, int },
  [PROBE] = { is(PROBE) },
  [HB] = { is(HB), name, int, function(v) return v == nil or ref(v) end },
}
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
local fed, refusable = 0, 0
local function feed(bytes, refused)
  core.sim_publish("tend.n.a", bytes)
  fed = fed + 1
  if refused then refusable = refusable + 1 end
end
local function mutated(h, i, w)
  local m = table.move(h, 1, #h, 1, {})
  m[i] = w
  local ok = allows[h[1]][i]
  return m, ok and not ok(w)
end
for _, v in ipairs(valid) do
  local h, b = v[1], v[2]
  for i = 1, #h + 1 do
    for _, w in ipairs(wrong) do
      local m, refused = mutated(h, i, w)
      feed(frame(m, b), refused)
    end
    local m, refused = mutated(h, i, nil)
    feed(frame(m, b), refused)
  end
  -- the body cut short or not msgpack
  if b then
    for n = 0, #b - 1 do feed(frame(h, b:sub(1, n)), true) end
    feed(frame(h, "\xc1"), true)
  end
  -- the header's bytes cut short
  local raw = core.codec_encode(h)
  for n = 0, #raw - 1 do feed(string.pack(">s4", string.pack(">s2", raw:sub(1, n))), true) end
end
-- heartbeats with wrong fields (every node hears them; a's lines are counted)
for i = 1, 4 do
  for _, w in ipairs(wrong) do
    local m, refused = mutated({ HB, "z", 7, sink }, i, w)
    if w ~= "ctl" then -- (a heartbeat in ctl's name would be a valid one)
      core.sim_publish("tend.hb", string.pack(">s2", core.codec_encode(m)))
      fed = fed + 1
      if refused then refusable = refusable + 1 end
    end
  end
end
tend.sleep(0.1)
io.stderr:write("-- flips\n")
-- the header's bytes flipped (seeded): each refused at most once
local flips = 0
for _, v in ipairs(valid) do
  local h, b = v[1], v[2]
  local raw = core.codec_encode(h)
  for _ = 1, 200 do
    local at = tend.random(1, #raw)
    local bytes = raw:sub(1, at - 1) .. string.char(tend.random(0, 255)) .. raw:sub(at + 1)
    core.sim_publish("tend.n.a", string.pack(">s4", string.pack(">s2", bytes) .. (b or "")))
    flips = flips + 1
  end
end
tend.sleep(2 * T)
print(fed, refusable, flips)
print(table.concat(tend.node.list(), " "))
print(tend.node.tree("a"):match("\n  node %[[^\n]*"))
local r = tend.ask(e, "still here")
print(r.node .. ": " .. r.echo)
tend.stop(sink)
tend.sim.stop()
]=])
  local out, err, code = H.run({ "--virtual-time", script })
  os.remove(script)
  lu.assertEquals(code, 0, err)
  local fed, refusable, flips, nodes, node_line, echo = out:match("^(%d+)\t(%d+)\t(%d+)\n([^\n]*)\n\n([^\n]*)\n([^\n]*)\n$")
  lu.assertNotNil(fed, out)
  lu.assertEquals({ nodes, node_line, echo }, { "a b", "  node [running] restarts=0 mailbox=0", "a: still here" })
  local before, after = err:match("^(.*)%-%- flips\n(.*)$")
  lu.assertNotNil(before, err)
  local function refusals(s)
    local n = 0
    for line in s:gmatch("[^\n]+") do
      if line:find("warn  @a: a message from another node was refused: ", 1, true) then n = n + 1 end
    end
    return n
  end
  lu.assertTrue(tonumber(fed) > 500, "fed " .. fed)
  lu.assertTrue(tonumber(refusable) < tonumber(fed))
  -- exactly one line for each frame refused, none for those allowed
  lu.assertEquals(refusals(before), tonumber(refusable))
  -- a flipped byte may make a frame that is allowed: at most one line each
  local f = refusals(after)
  lu.assertTrue(f > 0 and f <= tonumber(flips), f .. " refused of " .. flips .. " flipped")
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
