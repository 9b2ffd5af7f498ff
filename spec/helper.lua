-- Helpers shared by the specs: settling the system, recording messages,
-- running the tend binary as a subprocess.
local tend = require "tend"

local H = {}

-- Lets every other runnable actor run until none can (the clock does not
-- move: timers due later stay pending).
function H.settle()
  repeat tend.sleep(0) until tend.stats().runnable == 0
end

-- An actor that appends every message it gets to `log` (a plain table).
function H.recorder(log)
  return tend.spawn(function()
    return function(msg, ctx)
      log[#log + 1] = msg
    end
  end)
end

-- Live actors other than the running spec's own (/user/main).
function H.live()
  return tend.stats().actors - 1
end

-- Asserts that a test left nothing behind: no actor but the spec runner,
-- no pending timer, no runnable actor. What it finds left is stopped
-- first, so that one failed test does not fail every test after it.
function H.assert_clean()
  H.settle()
  local s = tend.stats()
  if s.actors ~= 1 then
    for _, row in ipairs(tend.children("/user")) do
      if row.ref ~= tend.self() then tend.stop(row.ref) end
    end
    H.settle()
  end
  assert(s.actors == 1, "actors left behind: " .. (s.actors - 1))
  assert(s.timers == 0, "timers left behind: " .. s.timers)
end

-- Drops what is queued for the running spec task (what a test before
-- left), after letting other actors run a moment.
function H.drain()
  tend.sleep(0.01)
  while select("#", tend.receive(0)) > 0 do end
end

-- Stops every actor under /user but the spec runner (the servers a test
-- started, say).
function H.stop_user()
  for _, row in ipairs(tend.children("/user")) do
    if row.ref ~= tend.self() then tend.stop(row.ref) end
  end
end

-- H.stop_user, then asserts that no actor is left (sockets close
-- asynchronously: it waits, as H.eventually), that no HTTP request is in
-- flight, and H.assert_clean.
function H.stop_user_and_assert_clean()
  H.stop_user()
  local clean = H.eventually(function() return tend.stats().actors == 1 end)
  assert(clean, "actors left behind: " .. (tend.stats().actors - 1))
  assert(tend.http.in_flight() == 0, "HTTP requests left in flight: " .. tend.http.in_flight())
  H.assert_clean()
end

-- Waits until pred() holds, sleeping 10 ms at a time, at most `seconds`
-- (default 20: valgrind on a loaded machine is slow); returns whether it
-- held. For specs in real time (sockets, processes).
function H.eventually(pred, seconds)
  for _ = 1, math.ceil((seconds or 20) / 0.01) do
    if pred() then return true end
    tend.sleep(0.01)
  end
  return pred()
end

-- Stops the given refs and waits until they are gone.
function H.stop_all(...)
  for _, r in ipairs { ... } do tend.stop(r) end
  H.settle()
end

local function read_all(path)
  local f = io.open(path, "rb")
  if not f then return "" end
  local s = f:read("a")
  f:close()
  return s
end

local function quote(s)
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

-- Runs the tend binary with the given argument list (and stdin text);
-- returns stdout, stderr, exit code.
function H.run(args, stdin)
  local words = { quote(require("tend.internal").executable()) }
  for _, a in ipairs(args) do words[#words + 1] = quote(a) end
  local out, err = os.tmpname(), os.tmpname()
  local cmd = table.concat(words, " ") .. " >" .. out .. " 2>" .. err
  if stdin then
    local inp = os.tmpname()
    local f = assert(io.open(inp, "wb"))
    f:write(stdin)
    f:close()
    cmd = cmd .. " <" .. inp
  else
    cmd = cmd .. " </dev/null"
  end
  local _, _, code = os.execute(cmd)
  local o, e = read_all(out), read_all(err)
  os.remove(out)
  os.remove(err)
  return o, e, code
end

-- Runs the tend binary as H.run, bounded by `timeout` (a spin fails the
-- test instead of hanging the suite); returns stdout and stderr together,
-- and the exit code (124: still running after `seconds`).
function H.run_bounded(seconds, args)
  local words = { "timeout", tostring(seconds), quote(require("tend.internal").executable()) }
  for _, a in ipairs(args) do words[#words + 1] = quote(a) end
  local p = assert(io.popen(table.concat(words, " ") .. " 2>&1 </dev/null"))
  local out = p:read("a")
  local _, _, code = p:close()
  return out, code
end

-- Writes text to a fresh temporary .lua file; returns its path.
function H.script(text)
  local path = os.tmpname() .. ".lua"
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
  return path
end

-- The gaps between successive times, in whole microseconds (virtual times
-- are sums of floats).
function H.gaps(times)
  local g = {}
  for i = 2, #times do
    g[i - 1] = math.floor((times[i] - times[i - 1]) * 1e6 + 0.5) / 1e6
  end
  return g
end

-- The URL of `path` on a real HTTP server (its ref).
function H.http_url(server, path)
  return "http://127.0.0.1:" .. tend.ask(server, "port") .. path
end

-- A raw TCP connection to a real HTTP server: returns it and
-- read(pattern, seconds) -> all that came so far, closed (reads until
-- pattern is found, the peer closes, or seconds pass; what other
-- connections sent the caller is dropped).
function H.http_raw(server)
  local c = tend.tcp.connect({ host = "127.0.0.1", port = tend.ask(server, "port"),
    framing = "raw" })
  local got, closed = "", false
  local function read(pattern, seconds)
    local deadline = tend.now() + (seconds or 10)
    while not closed and not (pattern and got:find(pattern)) and tend.now() < deadline do
      local msg, from = tend.receive(deadline - tend.now())
      if msg == nil then break end
      if from == c and msg.tend == "data" then got = got .. msg.data end
      if from == c and msg.tend == "closed" then closed = true end
    end
    return got, closed
  end
  return c, read
end

-- The descriptors this process holds (io.popen's shell: its parent).
function H.fds()
  local p = assert(io.popen("ls /proc/$PPID/fd | wc -l"))
  local n = tonumber(p:read("a"))
  p:close()
  return n
end

return H
