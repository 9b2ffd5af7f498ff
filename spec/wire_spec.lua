-- The bytes the nodes exchange (runtime/nodes/wire.c): envelopes (a
-- 2-byte length, the header, the body) and batches (a 4-byte length before
-- each envelope), byte for byte; the kinds' numbers; the refusals of
-- bytes that are no envelope or batch; and what a simulated node really
-- puts on the bus, against a framing written here by hand.
local lu = require "luaunit"
local tend = require "tend"
local core = require "tend.core"
local H = require "helper"

TestWire = {}

function TestWire:test_the_kinds_and_subjects_are_those_that_travel()
  lu.assertEquals(core.wire_kind, { MSG = 1, WATCH = 2, DOWN = 3, HB = 4, PROBE = 5, HELLO = 6, PG = 7 })
  lu.assertEquals(core.wire_subject, { to_node = "tend.n.", heartbeats = "tend.hb" })
end

function TestWire:test_an_envelope_is_a_two_byte_length_the_header_and_the_body()
  -- {1, "x"}: fixarray of 2, fixint 1, fixstr of 1
  lu.assertEquals(core.wire_envelope({ 1, "x" }, "BODY"), "\0\4\x92\1\xa1xBODY")
  lu.assertEquals(core.wire_envelope({ 5 }), "\0\2\x91\5")
  local long = string.rep("z", 300) -- a header of 305 bytes: its length is 0x0131
  lu.assertEquals(core.wire_envelope({ 4, long }), "\1\49\x92\4\xda\1\44" .. long)
end

function TestWire:test_an_envelope_opens_into_its_header_and_body()
  local h, body = core.wire_open("\0\4\x92\1\xa1xBODY")
  lu.assertEquals(h, { 1, "x" })
  lu.assertEquals(body, "BODY")
  lu.assertEquals({ core.wire_open("\0\2\x91\5") }, { { 5 }, "" })
  for _, bytes in ipairs { "", "\0", "\0\5\x91\5", "\255\255" } do
    local ok, err = pcall(core.wire_open, bytes)
    lu.assertFalse(ok)
    lu.assertEquals(err.kind, "BadMessage")
    lu.assertEquals(err.message, "decode: a malformed envelope (a header's length past its end)")
  end
  local ok, err = pcall(core.wire_open, "\0\1\xc1")
  lu.assertFalse(ok)
  lu.assertEquals(err.kind, "BadMessage")
  lu.assertStrContains(err.message, "decode: ")
end

function TestWire:test_a_header_over_65535_bytes_is_too_large()
  local ok, err = pcall(core.wire_envelope, { 3, string.rep("r", 65535) })
  lu.assertFalse(ok)
  lu.assertEquals(err.kind, "MessageTooLarge")
  lu.assertEquals(err.message, "encode: a header of 65540 bytes (at most 65535)")
  -- the limit applies to the header as to a message
  ok, err = pcall(core.wire_envelope, { 3, string.rep("r", 100) }, "", 64)
  lu.assertFalse(ok)
  lu.assertEquals(err.kind, "MessageTooLarge")
  ok, err = pcall(core.wire_envelope, { 3, print })
  lu.assertFalse(ok)
  lu.assertEquals(err.kind, "NotSerializable")
end

function TestWire:test_a_batch_is_each_envelope_after_its_four_byte_length()
  lu.assertEquals(core.wire_batch("ab", "", "c"), "\0\0\0\2ab\0\0\0\0\0\0\0\1c")
  lu.assertEquals(core.wire_batch(), "")
  local big = string.rep("e", 70000)
  lu.assertEquals(core.wire_batch(big), "\0\1\x11\x70" .. big)
  lu.assertEquals({ core.wire_unbatch("\0\0\0\2ab\0\0\0\0\0\0\0\1c") }, { { "ab", "", "c" }, true })
  lu.assertEquals({ core.wire_unbatch("") }, { {}, true })
  lu.assertEquals({ core.wire_unbatch("\0\1\x11\x70" .. big) }, { { big }, true })
  -- bytes that are no envelope: those before them are taken
  lu.assertEquals({ core.wire_unbatch("\0\0\0\9ab") }, { {}, false })
  lu.assertEquals({ core.wire_unbatch("\0\0\0\1a\0\0") }, { { "a" }, false })
  lu.assertEquals({ core.wire_unbatch("\0\0\0\1a\255\255\255\255") }, { { "a" }, false })
end

-- A simulated node's heartbeat and a message it sends, as they travel on
-- the bus (the world takes its deliveries itself): framed as written by
-- hand here with string.pack, around the codec's bytes.
function TestWire:test_a_simulated_node_puts_these_bytes_on_the_bus()
  if not tend.virtual_time() then return end
  local script = H.script([[
package.path = "./spec/?.lua;" .. package.path
local tend = require "tend"
local core = require "tend.core"
tend.sim.nodes({ a = { code = "" } }, { join = "ctl", timeout = 2 })
tend.sleep(0.1)
local e = tend.spawn_on("a", "simnode_actors.echo")
local me = tend.self()
local seen = {}
core.sim_dispatch(function(subject, data) seen[#seen + 1] = { subject, data } end)
e:tell("hi", me)
tend.sleep(0.6)
local inc = tend.sim.list()[1].inc
local svc = require("tend.node").service("a")
local hb = string.pack(">s2", core.codec_encode({ 4, "a", inc, svc }))
local watch = string.pack(">s4", string.pack(">s2", core.codec_encode({ 2, me, "a" })))
-- (the echo's answer, a map, is compared decoded: its keys' order is the table's)
local function is_msg(data)
  local head = string.pack(">s2", core.codec_encode({ 1, me, e }))
  if string.unpack(">I4", data) ~= #data - 4 or data:sub(5, 4 + #head) ~= head then return false end
  local body = core.codec_decode(data:sub(5 + #head))
  return body.node == "a" and body.echo == "hi"
end
local got = {}
for _, s in ipairs(seen) do
  local what = s[2] == hb and "HB" or s[2] == watch and "WATCH" or is_msg(s[2]) and "MSG"
    or ("? " .. s[2]:gsub(".", function(c) return string.format("%02x", c:byte()) end))
  got[#got + 1] = s[1] .. " " .. what
end
print(table.concat(got, "\n"))
tend.sim.stop()
]])
  local out, err, code = H.run({ "--virtual-time", script })
  os.remove(script)
  lu.assertEquals(code, 0, err)
  lu.assertEquals(out, "tend.n.ctl WATCH\ntend.n.ctl MSG\ntend.hb HB\n")
end
