-- tail: an endless program's output (`yes`, as fast as it can write)
-- through map_async(4) into a sink that takes 1 ms per line. Demand keeps
-- the program blocked on its pipe: memory stays flat however long it runs.
-- Prints the Lua heap and the process's mailbox after 500 lines and again
-- after N (default 2000), then stops the stream (and so the program).
-- Run: tend examples/streams/tail.lua [N]
local tend = require "tend"
local S = tend.stream

local n = tonumber(arg and arg[1]) or 2000
local function heap_kib()
  collectgarbage()
  return tend.stats().lua_bytes // 1024
end
local function mailbox()
  for _, p in ipairs(tend.ps()) do
    if p.path:match("^/user/tail/async") then return p.mailbox end
  end
  return 0
end

local seen, samples = 0, {}
S.lines({ cmd = { "yes", "a line of output" } })
  :map_async(4, function(line) tend.sleep(0.001) return #line end)
  :take(n)
  :run_with(S.sink.foreach(function()
    tend.sleep(0.001)
    seen = seen + 1
    if seen == 500 or seen == n then samples[#samples + 1] = { heap_kib(), mailbox() } end
  end), { name = "tail" })
local a, b = samples[1], samples[2]
local flat = b[1] <= a[1] * 1.2 + 64
print(string.format("tail: %d lines; Lua heap %d KiB after 500, %d KiB after %d (%s); mailbox %d, %d",
  seen, a[1], b[1], n, flat and "flat" or "GREW", a[2], b[2]))
