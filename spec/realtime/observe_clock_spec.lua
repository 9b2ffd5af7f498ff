-- The observer's pause of a virtual-time run (POST /api/clock): `tend
-- --virtual-time --observe 0 SCRIPT` starts paused at 0 s (the run would
-- be over before a page opened); the clock held stays at its instant while
-- the observer (real I/O) still answers; each step grants one jump to the
-- next timer (what is due then runs); resume lets it run on; each verb is
-- a trace event on /clock; the token is needed; bad input is named. The
-- program runs as an OS process, driven over HTTP from this real-clock
-- spec.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

if tend.virtual_time() then return end

TestObserveClock = {}

local dir, pid, base, token

local function read(name)
  local f = io.open(dir .. "/" .. name)
  local s = f and f:read("a") or ""
  if f then f:close() end
  return s
end

-- A ticker that prints the virtual time of each tick (every second).
local PROGRAM = [[
local tend = require "tend"
tend.spawn(function(ctx)
  ctx:every(1, "tick")
  return function() io.stdout:write("tick ", tend.now(), "\n") io.stdout:flush() end
end, { name = "ticker" })
tend.sleep(5.5)
tend.shutdown(0)
]]

function TestObserveClock:setUp()
  local url
  dir = H.sh("mktemp -d")
  -- the URL and the paused line, which may come after it on a busy machine
  pid, url, base, token = H.observed(dir, PROGRAM, { "--virtual-time", "--seed", "1", "--trace", dir .. "/trace.jsonl" },
    "the virtual clock is paused")
  lu.assertNotNil(url, "tend --observe printed no URL")
  lu.assertStrMatches(base, "http://127%.0%.0%.1:%d+")
end

function TestObserveClock:tearDown()
  os.execute("kill " .. pid .. " 2>/dev/null")
  os.execute("rm -rf '" .. dir .. "'")
end

local function post(verb, tok)
  local r = tend.http.request { method = "POST", body = "",
    url = base .. "/api/clock?do=" .. verb .. (tok == false and "" or "&token=" .. token) }
  return r.status, r.body
end

local function info()
  local r = tend.http.get(base .. "/api/info?token=" .. token)
  return tonumber(r.body:match('"t":([%d.e+-]+)')), r.body:match('"paused":(%a+)')
end

-- waits (real time, 2 s at most) until the run's clock has moved from `from`
local function moved(from)
  for _ = 1, 100 do
    local t = info()
    if t ~= from then return t end
    tend.sleep(0.02)
  end
end

function TestObserveClock:test_it_starts_paused_and_steps_one_timer_at_a_time()
  lu.assertStrContains(read("err"), "tend: the virtual clock is paused at 0 s: resume or step it from the page")
  tend.sleep(0.2) -- held: 0.2 s of real time, the clock stays at 0
  lu.assertEquals({ info() }, { 0, "true" })
  lu.assertEquals(read("out"), "")

  lu.assertEquals(post("step", false), 403) -- the token is needed
  lu.assertEquals(post("step"), 200)
  lu.assertEquals(moved(0), 1) -- one jump: to the ticker's first tick
  tend.sleep(0.1)
  lu.assertEquals({ info() }, { 1, "true" })
  lu.assertEquals(read("out"), "tick 1\n")
  lu.assertEquals(post("step"), 200)
  lu.assertEquals(moved(1), 2)
  lu.assertEquals(read("out"), "tick 1\ntick 2\n")

  local status, body = post("jump")
  lu.assertEquals({ status, body }, { 400, '{"error":"do: expected pause, resume or step, got \\"jump\\""}\n' })
  status, body = post("resume")
  lu.assertEquals({ status, body }, { 200, '{"done":"resume","paused":false,"t":2}\n' })
  for _ = 1, 100 do -- it runs on to its end (5.5 s)
    if H.sh("kill -0 " .. pid .. " 2>/dev/null && echo alive") == "" then break end
    tend.sleep(0.02)
  end
  lu.assertEquals(read("out"), "tick 1\ntick 2\ntick 3\ntick 4\ntick 5\n")
  local clock = {}
  for line in read("trace.jsonl"):gmatch("[^\n]+") do
    if line:find('"path":"/clock"', 1, true) then clock[#clock + 1] = line:match('"detail":"([^"]*)"') end
  end
  lu.assertEquals(clock, { "observer: pause", "observer: step at 0 s", "observer: step at 1 s", "observer: resume" })
end
