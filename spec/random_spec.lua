-- The seeded generator: tend.random, math.random, tend.seed.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

TestRandom = {}

function TestRandom:tearDown() H.assert_clean() end

local draw = [[
local tend = require "tend"
local t = {}
for i = 1, 5 do t[#t + 1] = string.format("%.17g", tend.random()) end
for i = 1, 5 do t[#t + 1] = tostring(math.random(1, 1000)) end
print(table.concat(t, " "))
print(tend.seed())
]]

function TestRandom:test_same_seed_same_sequence()
  local out1, _, c1 = H.run({ "--seed", "7", "-e", draw })
  local out2, _, c2 = H.run({ "--seed", "7", "-e", draw })
  lu.assertEquals(c1, 0)
  lu.assertEquals(c2, 0)
  lu.assertEquals(out1, out2)
  lu.assertStrContains(out1, "\n7\n")
end

function TestRandom:test_other_seed_other_sequence()
  local out1 = H.run({ "--seed", "7", "-e", draw })
  local out2 = H.run({ "--seed", "8", "-e", draw })
  lu.assertNotEquals(out1:match("^[^\n]*"), out2:match("^[^\n]*"))
end

function TestRandom:test_without_seed_it_comes_from_the_time_and_is_shown()
  local out1 = H.run({ "-e", draw })
  local out2 = H.run({ "-e", draw })
  local seed1 = out1:match("\n(%-?%d+)\n$")
  lu.assertNotNil(seed1)
  lu.assertNotEquals(out1, out2)
  -- replaying the shown seed gives the same sequence
  local again = H.run({ "--seed", seed1, "-e", draw })
  lu.assertEquals(again, out1)
end

function TestRandom:test_ranges_like_math_random()
  for _ = 1, 200 do
    local x = tend.random()
    lu.assertTrue(x >= 0 and x < 1)
    local n = tend.random(6)
    lu.assertTrue(n >= 1 and n <= 6 and math.type(n) == "integer")
    local m = math.random(-3, 3)
    lu.assertTrue(m >= -3 and m <= 3)
  end
  lu.assertErrorMsgContains("interval is empty", tend.random, 5, 1)
end

function TestRandom:test_math_randomseed_reseeds_the_one_generator()
  math.randomseed(99)
  local a = { tend.random(), math.random() }
  math.randomseed(99)
  local b = { math.random(), tend.random() }
  lu.assertEquals(a, b)
  lu.assertEquals(tend.seed(), 99)
end

-- xoshiro256** seeded by splitmix64: a known seed gives a known sequence
-- (the same numbers as the C test and the reference implementation).
function TestRandom:test_seed_42_gives_a_known_sequence()
  local out, _, code = H.run({ "--seed", "42", "-e", [[
local tend = require "tend"
local t = {}
for i = 1, 5 do t[#t + 1] = string.format("%.17g", tend.random()) end
print(table.concat(t, " "))
t = {}
for i = 1, 5 do t[#t + 1] = tostring(tend.random(1, 1000)) end
print(table.concat(t, " "))
]] })
  lu.assertEquals(code, 0)
  lu.assertEquals(out,
    "0.083862971059882163 0.37898025066266861 0.68004341102813937 0.92469294532538759 0.99180391428210279\n"
    .. "569 435 136 127 62\n")
end
