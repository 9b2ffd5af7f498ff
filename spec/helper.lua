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

-- H.assert_clean, and no message left for the spec runner (a later spec
-- would read it).
function H.assert_clean_and_no_mail()
  H.assert_clean()
  assert(select("#", tend.receive(0)) == 0, "a message left for the spec runner")
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

-- Runs a shell command; returns its standard output without the trailing
-- newlines (as the shell's $(...)).
function H.sh(cmd)
  local p = assert(io.popen(cmd))
  local out = p:read("a")
  p:close()
  return (out:gsub("\n+$", ""))
end

-- The observer's URL in the file at `path` (what `tend observe` or `tend
-- --observe` printed: "... at http://HOST:PORT/?token=T"), once it is there
-- and, when given, the text `ready` too; waits 50 ms at a time, at most
-- `seconds` (default 10). Returns the URL, its base (http://HOST:PORT) and
-- its token, or nil when none came.
function H.observer_url(path, ready, seconds)
  for _ = 1, math.ceil((seconds or 10) / 0.05) do
    local text = read_all(path)
    local url = (ready == nil or text:find(ready, 1, true)) and text:match(" at (http://%S+)")
    if url then
      local base, token = url:match("^(http://[^/]+)/%?token=(%x+)$")
      return url, base, token
    end
    tend.sleep(0.05)
  end
end

-- Starts `tend FLAGS... --observe 0 DIR/app.lua` in the background: DIR
-- a directory of the caller's, app.lua the text `program` (written there),
-- its stdout in DIR/out and its stderr in DIR/err. Returns its pid and
-- what H.observer_url(DIR/err, ready) returns (the caller kills pid).
function H.observed(dir, program, flags, ready)
  local f = assert(io.open(dir .. "/app.lua", "w"))
  f:write(program)
  f:close()
  local words = { quote(require("tend.internal").executable()) }
  for _, w in ipairs(flags or {}) do words[#words + 1] = quote(w) end
  local pid = H.sh(string.format("%s --observe 0 '%s/app.lua' > '%s/out' 2> '%s/err' & echo $!",
    table.concat(words, " "), dir, dir, dir))
  return pid, H.observer_url(dir .. "/err", ready)
end

-- When `why` is given (a reason the spec cannot run here: H.no_browser(),
-- H.no_nats()), prints "NAME: skipped: why" and returns true: the spec
-- then defines no test.
function H.skip(name, why)
  if why then print(name .. ": skipped: " .. why) end
  return why ~= nil
end

-- Why a headless browser cannot run here (no chromium, no node: `scripts/deps
-- browser` installs them), or nil when it can.
function H.no_browser()
  local function has(cmd) return os.execute("command -v " .. cmd .. " >/dev/null 2>&1") end
  if not (has("chromium") or has("chromium-browser") or has("google-chrome")) then
    return "no chromium (scripts/deps browser installs it)"
  end
  if not has("node") then return "no node (scripts/deps browser installs it)" end
end

-- Opens `url` in headless Chromium (scripts/browser.mjs), waits until the
-- JavaScript `wait_for` holds (default: the page says it is ready), runs
-- the JavaScript `js` there; returns the flat table it gave (the script's
-- last line, with its errors and ms); raises, with what the script said,
-- when there is none. `seconds` bounds the browser (default 60).
function H.browser(url, js, wait_for, seconds)
  local words = { "node", "--experimental-websocket", "scripts/browser.mjs", url,
    "--timeout", tostring(seconds or 60),
    "--wait-for", wait_for or "document.body.dataset.ready === '1'", "--eval", js }
  for i, w in ipairs(words) do words[i] = quote(w) end
  local text = H.sh(table.concat(words, " ") .. " 2>&1")
  local r, why = require("tend.timeline").parse_line(text:match("[^\n]*$"))
  if r == nil then error("browser.mjs said: " .. text .. " (" .. tostring(why) .. ")", 2) end
  return r
end

-- Why nats-server cannot run here (scripts/deps installs it), or nil.
function H.no_nats()
  if not os.execute("command -v nats-server >/dev/null 2>&1") then
    return "nats-server is not installed (scripts/deps installs it)"
  end
end

-- A nats-server of the spec's own on 127.0.0.1 (a free port, a store
-- directory of its own): returns its URL and start(), which starts it (or
-- starts it again, on the same port and store) as a temporary child of the
-- caller named "nats", and returns that actor once its port answers.
function H.nats_server()
  local l = tend.tcp.listen { port = 0, handler = function() end }
  local port = tend.ask(l, "port")
  tend.stop(l)
  local dir = os.tmpname()
  os.remove(dir)
  local function start()
    local nats = tend.spawn(tend.process {
      cmd = { "nats-server", "-a", "127.0.0.1", "-p", tostring(port), "-js", "-sd", dir },
      stdout = "null", stderr = "null", ready = { tcp = port }, ready_timeout = 10,
    }, { name = "nats", restart = "temporary" })
    assert(H.eventually(function() return tend.inspect(nats).state == "running" end), "nats-server not ready")
    return nats
  end
  return "nats://127.0.0.1:" .. port, start
end

-- The descriptors this process holds (io.popen's shell: its parent).
function H.fds()
  local p = assert(io.popen("ls /proc/$PPID/fd | wc -l"))
  local n = tonumber(p:read("a"))
  p:close()
  return n
end

return H
