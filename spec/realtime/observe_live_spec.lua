-- The live observer (tend --observe PORT SCRIPT) in a real browser: a
-- program runs with it as an OS process; the URL it prints holds the token;
-- an action without the token is refused (403), a malformed literal is a
-- 400 naming where, and nothing of it runs; headless Chromium
-- (scripts/browser.mjs) opens the page: the tree shows an actor spawned
-- after the page opened (the page follows /api/events, a stream of
-- server-sent events: about 50 ms on an idle machine; 1 s is asserted, a
-- sanity bound on a loaded one), a crash (the crash button) shows its
-- restart, a message sent from the page (a Lua literal) reaches the actor.
-- Skipped, saying why, without chromium or node.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

if tend.virtual_time() or H.skip("observe_live_spec", H.no_browser()) then return end

TestObserveLive = {}

local dir, pid, url, base, token

-- The program observed: /user/w spawns a child named by each string it
-- gets, and fails on "boom"; it prints each message it gets.
local PROGRAM = [[
local tend = require "tend"
tend.spawn(function()
  return function(msg, ctx)
    io.stdout:write("w got ", type(msg) == "table" and ("table " .. tostring(msg.n)) or tostring(msg), "\n")
    io.stdout:flush()
    if msg == "boom" then error("boom") end
    if type(msg) == "string" then ctx:spawn(function() return function() end end, { name = msg }) end
  end
end, { name = "w" })
tend.sleep(60)
]]

function TestObserveLive:setUp()
  dir = H.sh("mktemp -d")
  pid, url, base, token = H.observed(dir, PROGRAM)
  lu.assertNotNil(url, "tend --observe printed no URL")
  lu.assertStrMatches(base, "http://127%.0%.0%.1:%d+")
  lu.assertNotNil(token)
end

function TestObserveLive:tearDown()
  os.execute("kill " .. pid)
  os.execute("rm -rf '" .. dir .. "'")
end

local function out()
  local f = io.open(dir .. "/out")
  local s = f and f:read("a") or ""
  if f then f:close() end
  return s
end

function TestObserveLive:test_actions_need_the_token_and_a_literal_that_is_data()
  local function post(q, body)
    return tend.http.request { method = "POST", url = base .. "/api/action?" .. q, body = body }
  end
  lu.assertEquals(post("do=crash&path=/user/w", "").status, 403)
  lu.assertEquals(post("do=crash&path=/user/w&token=" .. string.rep("f", 32), "").status, 403)
  local r = post("do=send&path=/user/w&token=" .. token, "os.exit(3)")
  lu.assertEquals(r.status, 400)
  lu.assertStrContains(r.body, "the message: at character 1: 'os' is a name: only literals are read, nothing runs")
  r = post("do=explode&path=/user/w&token=" .. token, "")
  lu.assertEquals(r.status, 400)
  lu.assertStrContains(r.body, 'do: expected send, stop, kill, crash, suspend, resume (path=), partition, repair '
    .. '(node=, to=), crash_node or restart_node (node=), got \\"explode\\"')
  r = post("do=stop&path=/user/nobody&token=" .. token, "")
  lu.assertEquals(r.status, 404)
  r = tend.http.get(base .. "/api/action?do=stop&path=/user/w&token=" .. token)
  lu.assertEquals(r.status, 405)
  r = post("do=send&path=/user/w&token=" .. token, "{ n = 7 }")
  lu.assertEquals(r.status, 200)
  tend.sleep(0.2)
  lu.assertEquals(out(), "w got table 7\n") -- the refused ones never reached it
  -- the tree hides the observer's own actors unless asked
  r = tend.http.get(base .. "/api/tree?token=" .. token)
  lu.assertNotStrContains(r.body, "/system/observer")
  lu.assertStrContains(tend.http.get(base .. "/api/tree?all=1&token=" .. token).body, '"/system/observer"')
  -- every endpoint refuses bad input with a clear error
  r = tend.http.get(base .. "/api/actor?path=/user/nobody&token=" .. token)
  lu.assertEquals({ r.status, r.body }, { 404, '{"error":"path: no live actor at \\"/user/nobody\\""}\n' })
  r = tend.http.get(base .. "/api/actor?token=" .. token)
  lu.assertEquals({ r.status, r.body }, { 404, '{"error":"path: no live actor at \\"nil\\""}\n' })
  r = post("do=send&path=/user/w&token=" .. token, string.rep("x", 100 * 1024))
  lu.assertEquals(r.status, 413)
  r = post("do=send&path=/user/w&token=" .. token, "{ 1, 2")
  lu.assertEquals(r.status, 400)
  lu.assertStrContains(r.body, "the message: ")
  r = tend.http.get(base .. "/api/nowhere?token=" .. token)
  lu.assertEquals({ r.status, r.body }, { 404, '{"error":"no such endpoint: /api/nowhere"}\n' })
  -- the events: bad parameters named; the stream (read by curl for 0.5 s)
  r = tend.http.get(base .. "/api/events?from=soon&token=" .. token)
  lu.assertEquals(r.status, 400)
  lu.assertStrContains(r.body, 'from: expected an event number, got \\"soon\\"')
  r = tend.http.get(base .. "/api/events?format=xml&token=" .. token)
  lu.assertEquals(r.status, 400)
  lu.assertStrContains(r.body, 'format: expected json (or none: a stream), got \\"xml\\"')
  r = tend.http.get(base .. "/api/events?format=json&from=0&token=" .. token)
  lu.assertStrContains(r.body, '"path":"/user/w"')
  if os.execute("command -v curl >/dev/null 2>&1") then
    local text = H.sh("curl -sN --max-time 0.5 '" .. base .. "/api/events?from=0&token=" .. token .. "'")
    lu.assertEquals(text:match("^retry: 1000\n\nid: (%d+)\nevent: trace\ndata: %[") ~= nil, true, text:sub(1, 300))
    lu.assertStrContains(text, '\n\nevent: tree\ndata: {"actors":[')
    lu.assertStrContains(text, '{"ev":"spawn","path":"/user/w"')
  end
end

function TestObserveLive:test_the_page_shows_a_spawn_within_a_second_and_a_crash_with_its_restart()
  local js = [[(async () => {
    const wait = (ms) => new Promise((r) => setTimeout(r, ms));
    const until = async (f, ms) => { const t0 = Date.now(); while (!f() && Date.now() - t0 < ms) await wait(10); return Date.now() - t0; };
    const row = (p) => document.querySelector(`tr[data-path="${p}"]`);
    const token = new URLSearchParams(location.search).get("token");
    // an actor spawned now (a message sent from outside the page)
    await fetch("/api/action?" + new URLSearchParams({ do: "send", path: "/user/w", token }), { method: "POST", body: '"late"' });
    const spawn_ms = await until(() => row("/user/w/late"), 3000);
    // select /user/w, crash it from its page, see its restart
    if (!row("/user/w/late")) return { spawn_ms, error: "the spawned actor never showed" };
    row("/user/w").children[0].click();
    await until(() => document.querySelector('#actions button[data-do="crash"]'), 2000);
    document.querySelector('#actions button[data-do="crash"]').click();
    const restart_ms = await until(() => row("/user/w") && row("/user/w").children[3].textContent === "1", 3000);
    // send a literal typed in the page
    await until(() => document.getElementById("message"), 2000);
    const input = document.getElementById("message");
    input.value = '"typed"';
    document.querySelector('#actions button[data-do="send"]').click();
    const typed_ms = await until(() => row("/user/w/typed"), 3000);
    return { spawn_ms, restart_ms, typed_ms, restarts: row("/user/w").children[3].textContent,
      failures: row("/user/w").children[4].textContent, last: row("/user/w").children[6].textContent,
      state: row("/user/w").children[1].textContent, mode: document.getElementById("title").textContent,
      feed: document.body.dataset.feed, kind: row("/user/w").children[7].textContent,
      age: row("/user/w").children[2].textContent, top_kind: row("/user").children[7].textContent,
      error: document.getElementById("error").textContent };
  })()]]
  local r = H.browser(url, js)
  lu.assertEquals(r.errors, {})
  lu.assertEquals(r.error, "")
  lu.assertEquals(r.mode, "tend observer (live)")
  lu.assertEquals(r.feed, "events") -- server-sent events, not the poll
  lu.assertEquals(r.kind, "supervisor one_for_one") -- it has children now
  lu.assertEquals(r.top_kind, "supervisor one_for_one")
  lu.assertStrMatches(r.age, "0%.%d+ s") -- restarted a moment ago
  lu.assertTrue(r.spawn_ms < 1000, "the spawned actor showed after " .. r.spawn_ms .. " ms")
  lu.assertTrue(r.restart_ms < 1000, "the restart showed after " .. r.restart_ms .. " ms")
  lu.assertTrue(r.typed_ms < 1000, "the typed message's child showed after " .. r.typed_ms .. " ms")
  lu.assertEquals({ r.restarts, r.failures, r.state }, { "1", "1", "running" })
  lu.assertStrContains(r.last, "ChaosCrash")
  io.stderr:write(string.format("observe_live_spec: spawn shown after %d ms, restart after %d ms, typed after %d ms\n",
    r.spawn_ms, r.restart_ms, r.typed_ms))
  lu.assertEquals(out(), "w got late\nw got typed\n")
end
