-- tend observe TRACE.jsonl in a real browser: the server refuses every
-- request without its token (403), unknown paths (404), other methods
-- (405) and bad parameters (400, naming them); headless Chromium
-- (scripts/browser.mjs) opens the printed URL, the page shows the tree at
-- t = 0, the "failure" button steps to the first failure, the slider and
-- a click on the timeline move to other instants and the tree shows each
-- as it was. Skipped, saying why, without chromium or node.
local lu = require "luaunit"
local tend = require "tend"
local json = require "tend.observe.json"
local H = require "helper"

if tend.virtual_time() or H.skip("observe_browser_spec", H.no_browser()) then return end

TestObserveBrowser = {}

local exe = require("tend.internal").executable()
local dir, pid, url, base, token

function TestObserveBrowser:setUp()
  dir = H.sh("mktemp -d")
  local f = assert(io.open(dir .. "/story.jsonl", "w"))
  for _, e in ipairs(require "timeline_story") do f:write(json.encode(e), "\n") end
  f:close()
  pid = H.sh(string.format("'%s' observe '%s/story.jsonl' --port 0 > '%s/out' 2>&1 & echo $!", exe, dir, dir))
  url, base, token = H.observer_url(dir .. "/out")
  lu.assertNotNil(url, "tend observe printed no URL")
  lu.assertEquals(#token, 32)
end

function TestObserveBrowser:tearDown()
  os.execute("kill " .. pid)
  os.execute("rm -rf '" .. dir .. "'")
end

function TestObserveBrowser:test_nothing_is_served_without_the_token_and_bad_input_is_refused()
  local function get(path) return tend.http.get(base .. path) end
  lu.assertEquals(get("/").status, 403)
  lu.assertEquals(get("/api/state?t=1").status, 403)
  lu.assertEquals(get("/api/state?t=1&token=" .. string.rep("0", 32)).status, 403)
  lu.assertEquals(get("/nowhere").status, 403) -- not even whether a path exists
  local r = get("/nowhere?token=" .. token)
  lu.assertEquals(r.status, 404)
  lu.assertEquals(r.body, '{"error":"no such endpoint: /nowhere"}\n')
  r = get("/api/state?t=later&token=" .. token)
  lu.assertEquals(r.status, 400)
  lu.assertStrContains(r.body, 't: expected a number of seconds, got \\"later\\"')
  r = tend.http.request { method = "POST", url = base .. "/api/state?t=1&token=" .. token, body = "x" }
  lu.assertEquals(r.status, 405)
  r = tend.http.request { method = "POST", url = base .. "/?token=" .. token,
    body = string.rep("x", 100 * 1024) }
  lu.assertEquals(r.status, 413)
  r = get("/?token=" .. token)
  lu.assertEquals(r.status, 200)
  lu.assertStrContains(r.headers["content-type"], "text/html")
  r = get("/api/state?t=5.5&token=" .. token)
  lu.assertEquals(r.status, 200)
  lu.assertStrContains(r.body, '"nodes":[{"name":"a","up":false},{"name":"b","up":true}]')
end

-- Opens the page, runs steps (JavaScript, awaited) there; the flat result.
local function page(steps)
  local js = [[(async () => {
    const wait = (ms) => new Promise((r) => setTimeout(r, ms));
    const until = async (f) => { for (let i = 0; i < 200 && !f(); i++) await wait(20); };
    const badge = (p) => { const tr = document.querySelector(`tr[data-path="${p}"]`);
      return tr ? tr.children[1].textContent : "absent"; };
    const now = () => document.getElementById("now").textContent;
    ]] .. steps .. [[ })()]]
  return H.browser(url, js)
end

function TestObserveBrowser:test_the_slider_the_steps_and_the_timeline_show_the_tree_as_it_was()
  local r = page([[
    const first = { now: now(), w: badge("/user/sup/w"), rows: document.querySelectorAll("#rows tr").length,
      svg: document.querySelectorAll("#nav svg g.lane").length };
    document.querySelector('#steps button[data-what="failure"][data-dir="next"]').click();
    await until(() => now() === "t = 1 s");
    const failure = { now: now(), w: badge("/user/sup/w") };
    const slider = document.getElementById("slider");
    slider.value = 5.5; slider.dispatchEvent(new Event("input"));
    await until(() => now() === "t = 5.5 s");
    const down = { kv: badge("/@a/user/kv"), nodes: document.getElementById("nodelist").textContent };
    const svg = document.querySelector("#nav svg"), box = svg.getBoundingClientRect();
    const x = +svg.dataset.x0 + (+svg.dataset.x1 - +svg.dataset.x0) * 0.35; // 3.5 s of 10
    svg.dispatchEvent(new MouseEvent("click", { clientX: box.left + x, clientY: box.top + 200, bubbles: true }));
    await until(() => now() !== "t = 5.5 s");
    return { first_now: first.now, first_w: first.w, rows: first.rows, lanes: first.svg,
      failure_now: failure.now, failure_w: failure.w, down_kv: down.kv, down_nodes: down.nodes,
      click_t: +now().match(/[\d.]+/)[0], click_w: badge("/user/sup/w") };
  ]])
  lu.assertEquals(r.errors, {})
  lu.assertEquals({ r.first_now, r.first_w, r.rows, r.lanes }, { "t = 0 s", "running", 10, 15 })
  lu.assertEquals({ r.failure_now, r.failure_w }, { "t = 1 s", "backing off" })
  lu.assertEquals(r.down_kv, "stopped")
  lu.assertStrContains(r.down_nodes, "node a down")
  lu.assertAlmostEquals(r.click_t, 3.5, 0.02) -- a click lands on a whole pixel
  lu.assertEquals(r.click_w, "waiting")
  lu.assertTrue(r.ms < 10000)
end
