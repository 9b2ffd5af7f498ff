-- The codec of messages that leave the process (runtime/codec.c, msgpack-c):
-- round trips of every kind that travels, the named refusals, and decoding
-- of untrusted bytes (truncated, random) that never crashes.
local lu = require "luaunit"
local tend = require "tend"
local core = require "tend.core"

TestCodec = {}

local function round(v) return core.codec_decode(core.codec_encode(v)) end

local function refused(v, kind, limit)
  local ok, err = pcall(core.codec_encode, v, limit)
  lu.assertFalse(ok)
  lu.assertEquals(err.kind, kind)
  return err.message
end

function TestCodec:test_scalars_round_trip_with_their_types()
  for _, v in ipairs({ true, false, 0, 1, -1, 127, 128, -33, 65536, math.maxinteger,
      math.mininteger, 0.5, -2.25, 1e300, math.huge, -math.huge, "", "text",
      "\0\1\255 binary", string.rep("z", 70000) }) do
    local back = round(v)
    lu.assertEquals(back, v)
    lu.assertEquals(math.type(back), math.type(v))
  end
  lu.assertNil(round(nil))
  local nan = round(0 / 0)
  lu.assertTrue(nan ~= nan)
end

function TestCodec:test_tables_lists_maps_and_nesting()
  local t = { 1, "two", { 3, { four = 4 } }, name = "x", [10] = "ten", [2.5] = "f",
    [true] = "yes", nested = { deep = { deeper = { "end" } } }, empty = {} }
  lu.assertEquals(round(t), t)
  lu.assertEquals(round({ 1, 2, 3 }), { 1, 2, 3 })
  lu.assertEquals(round({}), {})
  local shared = { 1 } -- reached twice: encoded twice
  local back = round({ a = shared, b = shared })
  lu.assertEquals(back, { a = { 1 }, b = { 1 } })
  lu.assertEquals(round(setmetatable({ k = 1 }, { __index = {} })), { k = 1 }) -- no metatable
end

function TestCodec:test_refs_travel_as_refs()
  local a = tend.spawn(function() return function() end end)
  local back = round({ to = a, list = { a, tend.self() } })
  lu.assertEquals(back.to, a)
  lu.assertTrue(rawequal(back.to, a)) -- the live actor's own ref
  lu.assertEquals(back.list[2], tend.self())
  tend.stop(a)
  tend.sleep(0)
  local dead = round(a)
  lu.assertFalse(tend.alive(dead))
end

function TestCodec:test_what_cannot_leave_the_node_is_named_with_its_place()
  lu.assertEquals(refused({ items = { 1, 2, print } }, "NotSerializable"),
    "encode: msg.items[3]: a function cannot leave the node")
  lu.assertEquals(refused({ co = coroutine.create(print) }, "NotSerializable"),
    "encode: msg.co: a coroutine cannot leave the node")
  lu.assertEquals(refused({ ["a key"] = io.stdout }, "NotSerializable"),
    'encode: msg["a key"]: a userdata (not a ref) cannot leave the node')
  local c = { name = "loop" }
  c.next = { back = c }
  lu.assertEquals(refused({ c }, "NotSerializable"),
    "encode: msg[1].next.back: a table inside itself (a cycle) cannot leave the node")
  local deep = {}
  local t = deep
  for _ = 1, 70 do t.x = {} t = t.x end
  lu.assertStrContains(refused(deep, "NotSerializable"), "tables nested deeper than 32")
  local ok32 = {} -- 32 levels travel (msgpack-c decodes as deep as that)
  t = ok32
  for _ = 1, 31 do t.x = {} t = t.x end
  lu.assertEquals(round(ok32), ok32)
  t.x = {}
  lu.assertStrContains(refused(ok32, "NotSerializable"), "tables nested deeper than 32")
  lu.assertEquals(refused(print, "NotSerializable"), "encode: msg: a function cannot leave the node")
end

function TestCodec:test_the_size_limit()
  lu.assertEquals(refused(string.rep("x", 2 << 20), "MessageTooLarge"),
    "encode: msg: the message is over the size limit (1048576 bytes)")
  lu.assertStrContains(refused({ string.rep("y", 60), string.rep("y", 60) }, "MessageTooLarge", 100),
    "over the size limit (100 bytes)")
  lu.assertEquals(#core.codec_encode(string.rep("y", 90), 100), 92)
  lu.assertEquals(#core.codec_encode(string.rep("y", 98), 100), 100) -- exactly the limit
  lu.assertStrContains(refused(string.rep("y", 99), "MessageTooLarge", 100), "(100 bytes)")
end

function TestCodec:test_untrusted_bytes_are_refused_never_a_crash()
  local good = core.codec_encode({ 1, "two", { three = 3.5 }, tend.self(), string.rep("s", 300) })
  for n = 0, #good - 1 do -- every truncation
    local ok, err = pcall(core.codec_decode, good:sub(1, n))
    lu.assertFalse(ok)
    lu.assertEquals(err.kind, "BadMessage")
  end
  local ok, err = pcall(core.codec_decode, good .. "\0")
  lu.assertEquals(err.message, "decode: not a tend message: bytes after the value")
  ok, err = pcall(core.codec_decode, "\xc7\x01\x05\x00") -- ext type 5
  lu.assertEquals(err.message, "decode: not a tend message: an unknown extension type")
  ok, err = pcall(core.codec_decode, "\x81\xc0\x01") -- {nil = 1}
  lu.assertEquals(err.message, "decode: not a tend message: a map key that is nil or NaN")
  ok, err = pcall(core.codec_decode, string.rep("\x91", 100) .. "\x01") -- 100 nested arrays
  lu.assertFalse(ok)
  lu.assertEquals(err.kind, "BadMessage")
  -- a ref's extension is untrusted bytes too: a map of 2^32-1 entries or
  -- an array of 2^28-1 elements in 8 bytes is refused by its shape, not
  -- handed to msgpack-c (which would ask for 128 GiB or 8 GiB up front)
  for _, bytes in ipairs({ "\xc7\x05\x01\xdf\xff\xff\xff\xff", "\xc7\x05\x01\xdd\x0f\xff\xff\xff",
                           "\xd6\x01\xdd\x0f\xff\xff" }) do
    ok, err = pcall(core.codec_decode, bytes)
    lu.assertFalse(ok)
    lu.assertEquals(err.kind, "BadMessage")
    lu.assertStrContains(err.message, "a malformed ref (")
  end
  ok, err = pcall(core.codec_decode, "\xc7\x05\x01\xdf\xff\xff\xff\xff")
  lu.assertEquals(err.message,
    "decode: not a tend message: a malformed ref (a container longer than the bytes left)")
  ok, err = pcall(core.codec_decode, "\xc7\x02\x01\x96\x01") -- [6 fields] cut short
  lu.assertEquals(err.message,
    "decode: not a tend message: a malformed ref (a container longer than the bytes left)")
  ok, err = pcall(core.codec_decode, "\xc7\x02\x01\x01\x01") -- two values in one ref
  lu.assertEquals(err.message, "decode: not a tend message: a malformed ref (bytes after the value)")
  ok, err = pcall(core.codec_decode, "\xd4\x01\x01") -- a ref that is an integer
  lu.assertEquals(err.message, "decode: not a tend message: a malformed ref")
  local decoded = 0
  for _ = 1, 3000 do -- random bytes: a value or BadMessage, nothing else
    local bytes = {}
    for i = 1, tend.random(1, 40) do bytes[i] = string.char(tend.random(0, 255)) end
    local okr, v = pcall(core.codec_decode, table.concat(bytes))
    if okr then decoded = decoded + 1 else lu.assertEquals(v.kind, "BadMessage") end
  end
  lu.assertTrue(decoded > 0)
end
