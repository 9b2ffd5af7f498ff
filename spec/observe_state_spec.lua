-- Time travel (tend observe): the state of a traced run at any instant is
-- a pure function of its events (tend.observe.state.at), stepping finds
-- the next or previous failure, restart or chaos event, and the replay's
-- endpoints answer bad input with a clear error (tend.observe.replay's
-- routes, called without a server; the server and the page are in
-- spec/realtime/observe_browser_spec.lua). The JSON they send is
-- tend.observe.json's.
local lu = require "luaunit"
local H = require "helper"
local st = require "tend.observe.state"
local json = require "tend.observe.json"
local replay = require "tend.observe.replay"
local story = require "timeline_story"

TestObserveState = {}

function TestObserveState:tearDown() H.assert_clean() end

local function actor(s, path)
  for _, a in ipairs(s.actors) do if a.path == path then return a end end
end

function TestObserveState:test_the_state_at_an_instant_is_as_it_was_then()
  local s = st.at(story, 1.2)
  lu.assertEquals(s.events, 13)
  lu.assertEquals(actor(s, "/user/sup/w").state, "backoff")
  lu.assertEquals(actor(s, "/user/sup/w").since, 1)
  lu.assertEquals(actor(s, "/user/sup/w").failures, 1)
  lu.assertEquals(actor(s, "/user/sup/w").last_failure, { t = 1, kind = "Error", message = "boom" })
  lu.assertEquals(actor(s, "/user/feed").state, "running")
  lu.assertFalse(actor(s, "/user").state) -- a guardian's lane has no life of its own
  lu.assertEquals(s.counters.failures, 1)
  lu.assertEquals(s.rates.failures, 1) -- within the last second
  lu.assertEquals(s.nodes, { { name = "a", up = true }, { name = "b", up = true } })
  lu.assertEquals(s.outages, {})
  -- at 3.5: frozen (waiting), restarted once, a and b partitioned
  s = st.at(story, 3.5)
  lu.assertEquals({ actor(s, "/user/sup/w").state, actor(s, "/user/sup/w").restarts }, { "waiting", 1 })
  lu.assertEquals({ s.counters.restarts, s.rates.restarts, s.counters.chaos }, { 2, 1, 2 })
  lu.assertEquals(#s.outages, 1)
  lu.assertEquals(s.outages[1].label, "partition a | b")
  -- at 5.5: node a down, its actor stopped with it; the partition repaired
  s = st.at(story, 5.5)
  lu.assertEquals(s.nodes, { { name = "a", up = false }, { name = "b", up = true } })
  lu.assertEquals(actor(s, "/@a/user/kv").state, "stopped")
  lu.assertEquals(actor(s, "/@b/user/kv").state, "running")
  lu.assertEquals(#s.outages, 1)
  lu.assertEquals(s.outages[1].label, "node a down")
  -- at the very instant of a crash, the crash has happened
  lu.assertEquals(actor(st.at(story, 5), "/@a/user/kv").state, "stopped")
  lu.assertEquals(actor(st.at(story, 4.999), "/@a/user/kv").state, "running")
  -- at 7 a is back; at the end the stream completed
  s = st.at(story, 10)
  lu.assertEquals(actor(s, "/@a/user/kv").state, "running")
  lu.assertEquals(actor(s, "/user/feed").state, "stopped")
  lu.assertEquals(s.events, #story)
  lu.assertEquals(s.last.ev, "terminated")
  -- before anything: nothing
  s = st.at(story, -1)
  lu.assertEquals({ s.events, #s.actors }, { 0, 0 })
end

function TestObserveState:test_stepping_finds_the_next_and_previous_event_of_a_kind()
  lu.assertEquals(st.step(story, 0, "failure", "next"), 1)
  lu.assertEquals(st.step(story, 1, "failure", "next"), 2.5)
  lu.assertEquals(st.step(story, 2.5, "failure", "next"), nil)
  lu.assertEquals(st.step(story, 2.5, "failure", "prev"), 1)
  lu.assertEquals(st.step(story, 0, "restart", "next"), 1.5)
  lu.assertEquals(st.step(story, 1.5, "restart", "next"), 3)
  lu.assertEquals(st.step(story, 4, "chaos", "prev"), 3)
  lu.assertEquals(st.step(story, 4, "chaos", "next"), 5)
  lu.assertEquals(st.step(story, 9, "any", "next"), 10)
  local ok, err = pcall(st.step, story, 0, "oops")
  lu.assertFalse(ok)
  lu.assertStrContains(err, "what: expected failure, restart, chaos or any, got oops")
end

function TestObserveState:test_the_endpoints_answer_values_and_refuse_bad_input()
  local routes = replay.routes(story, "story.jsonl")
  local info = routes["/api/info"]({})
  lu.assertEquals({ info.mode, info.events, info.t_max }, { "replay", #story, 10 })
  lu.assertStrContains(routes["/api/timeline.svg"]({}), 'data-t-max="10.000000"')
  lu.assertEquals(routes["/api/step"]({ t = "0", what = "chaos" }).t, 2)
  lu.assertIs(routes["/api/step"]({ t = "9", what = "failure" }).t, json.null)
  lu.assertEquals(#routes["/api/events"]({ from = "0.9", to = "1.5" }), 5)
  lu.assertEquals(actor(routes["/api/state"]({ t = "5.5" }), "/@a/user/kv").state, "stopped")
  local function refused(route, q)
    local v, status, why = routes[route](q)
    lu.assertNil(v)
    return status .. " " .. why
  end
  lu.assertEquals(refused("/api/state", {}), "400 t: expected a number of seconds, got nothing")
  lu.assertEquals(refused("/api/state", { t = "soon" }), '400 t: expected a number of seconds, got "soon"')
  lu.assertEquals(refused("/api/state", { t = "1e400" }), '400 t: expected a number of seconds, got "1e400"')
  lu.assertEquals(refused("/api/step", { t = "1", what = "x" }), '400 what: expected failure, restart, chaos or any, got "x"')
  lu.assertEquals(refused("/api/step", { t = "1", dir = "up" }), '400 dir: expected next or prev, got "up"')
  lu.assertEquals(refused("/api/events", { from = "a" }), '400 from: expected a number of seconds, got "a"')
end

function TestObserveState:test_json_is_sorted_escaped_and_total()
  lu.assertEquals(json.encode({ b = 1, a = { 1, 2.5, "x\n\"" }, c = json.array({}), d = json.null, e = false }),
    '{"a":[1,2.5,"x\\n\\""],"b":1,"c":[],"d":null,"e":false}')
  lu.assertEquals(json.encode({ x = 0 / 0, y = math.huge, z = "\1" }), '{"x":null,"y":null,"z":"\\u0001"}')
  local loop = {}
  loop.self = loop
  lu.assertErrorMsgContains("a table that holds itself", json.encode, loop)
end

function TestObserveState:test_a_stream_shows_its_state_and_the_stages_its_events_named()
  local events = {
    { t = 1, ev = "spawn", path = "/user/s" },
    { t = 1, ev = "stream_start", path = "/user/s" },
    { t = 2, ev = "stream_drop", path = "/user/s", detail = "buffer drop_head" },
    { t = 3, ev = "stream_restart", path = "/user/s", detail = "parse", count = 1 },
    { t = 4, ev = "stream_drop", path = "/user/s", detail = "buffer drop_head" },
    { t = 5, ev = "stream_fail", path = "/user/s", detail = "run", kind = "Error", message = "x" },
  }
  local function at(t) return actor(st.at(events, t), "/user/s").stream end
  lu.assertNil(actor(st.at({ events[1] }, 1), "/user/s").stream) -- an actor, no stream yet
  lu.assertEquals(at(1), { state = "running", stages = {} })
  lu.assertEquals(at(4), { state = "running", stages = { "buffer", "parse" } }) -- each named once
  lu.assertEquals(at(5), { state = "failed", stages = { "buffer", "parse" } }) -- "run" is no stage
  lu.assertEquals(actor(st.at(events, 5), "/user/s").failures, 1)
end
