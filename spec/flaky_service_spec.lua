-- examples/http/flaky_service.lua as a module, on the simulated network
-- (tend.http.serve's twin under the virtual clock): the seed decides each
-- attempt's answer for a uuid, half and half; not a uuid is 404, not GET
-- is 405.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

if not tend.virtual_time() then return end

package.path = "examples/http/?.lua;" .. package.path
local flaky = require "flaky_service"

TestFlakyService = {}

function TestFlakyService:tearDown()
  H.stop_user()
  tend.sleep(30)
  H.settle()
  H.assert_clean()
end

function TestFlakyService:test_the_seed_decides_each_answer_half_and_half()
  flaky.start({ host = "flaky", port = 80, seed = 42 })
  local ok, failed = 0, 0
  for i = 1, 200 do
    local uuid = flaky.uuid(42, i)
    lu.assertStrMatches(uuid, "%x+%-%x+%-4%x+%-[89ab]%x+%-%x+")
    local status, body = flaky.answer(42, uuid)
    local r = tend.http.get("http://flaky/" .. uuid)
    lu.assertEquals(r.status, status)
    if status == 200 then
      ok = ok + 1
      lu.assertEquals(r.body, body)
      lu.assertStrMatches(r.body, '{"value":%d+}')
      lu.assertEquals(r.headers["content-type"], "application/json")
    else
      failed = failed + 1
      lu.assertEquals(status, 500)
    end
    -- again: the second attempt, decided by the seed too
    lu.assertEquals(tend.http.get("http://flaky/" .. uuid).status, (flaky.answer(42, uuid, 2)))
  end
  lu.assertEquals(ok + failed, 200)
  lu.assertTrue(ok >= 80 and ok <= 120, "answered " .. ok .. " of 200")
  -- another seed, other answers for the same uuids
  local differ = 0
  for i = 1, 200 do
    local u = flaky.uuid(42, i)
    if flaky.answer(42, u) ~= flaky.answer(7, u) then differ = differ + 1 end
  end
  lu.assertTrue(differ >= 60, "seeds 42 and 7 differ on " .. differ .. " of 200")
  -- a retry can succeed where the first attempt failed: of the uuids whose
  -- first attempt fails, about half answer at the second
  local retried, second = 0, 0
  for i = 1, 200 do
    local u = flaky.uuid(42, i)
    if flaky.answer(42, u) == 500 then
      retried = retried + 1
      if flaky.answer(42, u, 2) == 200 then second = second + 1 end
    end
  end
  lu.assertTrue(second >= retried // 3 and second <= retried * 2 // 3,
    second .. " of " .. retried .. " failed first attempts answer at the second")
end

function TestFlakyService:test_not_a_uuid_is_404_and_not_get_is_405()
  flaky.start({ host = "flaky2", port = 80, seed = 1 })
  lu.assertEquals(tend.http.get("http://flaky2/not-a-uuid").status, 404)
  lu.assertEquals(tend.http.get("http://flaky2/a/b").status, 404)
  local r = tend.http.request({ method = "POST", url = "http://flaky2/" .. flaky.uuid(1, 1) })
  lu.assertEquals({ r.status, r.headers.allow }, { 405, "GET, HEAD" })
  lu.assertErrorMsgContains("seed: expected an integer", flaky.start, { seed = "x" })
end
