-- tend's side of the process benchmarks (make bench): spawn-and-reap of
-- /bin/true, and lines read from `yes | head -n N`, in the peers' output
-- format; `wc -l` on the same stream as the reference for the reader;
-- bytes of `head -c N /dev/zero` read as chunks (stdout = "chunks"), with
-- `cat > /dev/null` on the same stream as the reference (rate: bytes/s).
-- Usage: tend bench/process.lua spawn N | lines N | chunks BYTES
local tend = require "tend"
local clock = require("tend.internal").wall_clock

local bench, n = arg[1], math.tointeger(tonumber(arg[2]))

local function emit(name, impl, count, secs)
  print(string.format("bench=%s impl=%s count=%d secs=%.4f rate=%d", name, impl, count, secs,
    math.floor(count / secs + 0.5)))
end

if bench == "spawn" then
  n = n or 2000
  local t0 = clock()
  for _ = 1, n do
    local r = tend.process.run({ "/bin/true" })
    assert(r.status == 0)
  end
  emit("proc_spawn", "tend", n, clock() - t0)
elseif bench == "lines" then
  n = n or 1000000
  local stream = "yes | head -n " .. n
  local t0 = clock()
  local r = tend.process.run(stream .. " | wc -l")
  emit("proc_lines", "wc", tonumber(r.stdout), clock() - t0)
  local count, done = 0, false
  local counter = tend.spawn(function()
    return function(msg)
      if msg.line then count = count + 1 end
    end
  end)
  local p = tend.testkit.probe()
  t0 = clock()
  local proc = tend.spawn(tend.process { cmd = { "sh", "-c", stream }, to = counter })
  p:watch(proc)
  p:expect_terminated(proc, 600)
  while count < n do tend.sleep(0) end
  emit("proc_lines", "tend", count, clock() - t0)
  tend.stop(counter)
  p:stop()
elseif bench == "chunks" then
  n = n or 1000000000
  local stream = "head -c " .. n .. " /dev/zero"
  local t0 = clock()
  local r = tend.process.run(stream .. " | cat > /dev/null")
  assert(r.status == 0)
  emit("proc_chunks", "cat", n, clock() - t0)
  local bytes, chunks = 0, 0
  local counter = tend.spawn(function()
    return function(msg)
      if msg.chunk then bytes, chunks = bytes + #msg.chunk, chunks + 1 end
    end
  end)
  local p = tend.testkit.probe()
  t0 = clock()
  local proc = tend.spawn(tend.process { cmd = { "sh", "-c", stream }, to = counter, stdout = "chunks" })
  p:watch(proc)
  p:expect_terminated(proc, 600)
  while bytes < n do tend.sleep(0) end
  emit("proc_chunks", "tend", bytes, clock() - t0)
  io.stderr:write(string.format("proc_chunks: %d chunks, %d bytes each on average\n", chunks,
    bytes // math.max(chunks, 1)))
  tend.stop(counter)
  p:stop()
else
  io.stderr:write("usage: tend bench/process.lua spawn N | lines N | chunks BYTES\n")
  tend.shutdown(2)
end
