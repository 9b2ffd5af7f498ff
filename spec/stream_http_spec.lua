-- A tend.stream source as an HTTP body (tend.http.serve's pull bodies),
-- on the simulated network: server-sent events for text/event-stream,
-- each element as a string otherwise; the stream runs only as the client
-- reads, and nothing is left once the body ends.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"
local S = tend.stream

TestStreamHttp = {}

function TestStreamHttp:tearDown()
  H.stop_user() -- the servers
  H.settle()
  H.assert_clean()
end

function TestStreamHttp:test_a_source_as_server_sent_events()
  local pulled = 0
  tend.http.serve({ host = "api", port = 80, handler = function()
    return { headers = { ["content-type"] = "text/event-stream" },
      body = S.tick(0.5, 1):scan(0, function(a, b) return a + b end):drop(1):take(3)
        :map(function(x) pulled = pulled + 1 return x end) }
  end })
  local t0 = tend.now()
  local r = tend.http.get("http://api/events", { timeout = 10 })
  lu.assertEquals(r.status, 200)
  lu.assertEquals(r.headers["content-type"], "text/event-stream")
  lu.assertEquals(r.body, "data: 1\n\ndata: 2\n\ndata: 3\n\n")
  lu.assertEquals(pulled, 3)
  lu.assertTrue(tend.now() - t0 >= 1.5)
end

function TestStreamHttp:test_a_source_as_a_plain_body()
  tend.http.serve({ host = "api", port = 80, handler = function()
    return { status = 200, body = S.range(1, 5):map(function(x) return x .. "," end) }
  end })
  local r = tend.http.get("http://api/list", { timeout = 10 })
  lu.assertEquals(r.body, "1,2,3,4,5,")
end
