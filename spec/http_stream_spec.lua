-- Streamed bodies (body = a pull function) on the simulated twin of
-- tend.http.serve, under the virtual clock: the simulated client reads
-- chunk by chunk, each crossing the link before the next pull; times
-- exact. The real server: spec/realtime/http_stream_spec.lua.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

if not tend.virtual_time() then return end

TestHttpStreamTwin = {}

function TestHttpStreamTwin:tearDown()
  H.stop_user() -- the servers
  tend.chaos.heal()
  H.settle()
  H.assert_clean()
end

function TestHttpStreamTwin:test_the_client_reads_chunk_by_chunk_and_the_pulls_wait()
  local pulled = {}
  tend.http.serve({ host = "feed", handler = function()
    local i = 0
    return { headers = { ["content-type"] = "text/event-stream" }, body = function()
      i = i + 1
      pulled[#pulled + 1] = tend.now()
      if i > 3 then return nil end
      if i == 2 then return "" end -- skipped
      return "data: " .. i .. "\n\n"
    end }
  end })
  tend.chaos.latency("localhost", "feed", 0.1)
  local t0 = tend.now()
  local r = tend.http.get("http://feed/events")
  lu.assertEquals(r.status, 200)
  lu.assertEquals(r.body, "data: 1\n\ndata: 3\n\n")
  lu.assertEquals(r.headers["content-type"], "text/event-stream")
  lu.assertEquals(r.headers["cache-control"], "no-cache")
  lu.assertEquals(r.headers["transfer-encoding"], "chunked")
  -- the request and the head cross (0.2: the twin's round trip), then a
  -- pull; each chunk crosses (0.1) before the next; an empty one is free
  local at = {}
  for i, t in ipairs(pulled) do at[i] = math.floor((t - t0) * 1000 + 0.5) end
  lu.assertEquals(at, { 200, 300, 300, 400 })
  lu.assertEquals(math.floor((tend.now() - t0) * 1000 + 0.5), 400) -- the end: the last pull
end

function TestHttpStreamTwin:test_a_pull_may_ask_and_sleep()
  local store = tend.spawn(function()
    local n = 0
    return function(_, ctx)
      n = n + 1
      ctx:reply(n <= 2 and ("row" .. n .. ";") or false)
    end
  end)
  tend.http.serve({ host = "rows", handler = function()
    return { status = 206, body = function()
      tend.sleep(1)
      return tend.ask(store, "next") or nil
    end }
  end })
  local t0 = tend.now()
  local r = tend.http.get("http://rows/")
  lu.assertEquals({ r.status, r.body, r.headers.connection }, { 206, "row1;row2;", "close" })
  lu.assertEquals(tend.now() - t0, 3)
  tend.stop(store)
end

function TestHttpStreamTwin:test_a_pull_that_raises_cuts_the_body()
  tend.http.serve({ host = "cut", handler = function()
    local i = 0
    return { body = function()
      i = i + 1
      if i == 2 then error("source broke") end
      return "part"
    end }
  end })
  local ok, err = pcall(tend.http.get, "http://cut/")
  lu.assertFalse(ok)
  lu.assertEquals({ err.kind, err.reason }, { "HttpError", "partial body" })
  ok, err = pcall(tend.http.get, "http://cut/")
  lu.assertEquals(err.reason, "partial body")
end
