-- bank: eight accounts are actors under /user/bank; four clients under
-- /user/clients move money between them, by ask with a 0.3 s timeout and
-- a retry. The balances are kept in a store (a table the accounts write:
-- a restarted account keeps its money), and the money between a withdraw
-- and its deposit in `flight`. Invariant: the total is constant.
-- The bug: the retry is not idempotent. A request that was only slow (a
-- frozen account, a reply dropped) is applied twice when it arrives.
-- examples/explore/fixed_bank.lua runs the same bank with the fix: each
-- step carries an id, and an account applies an id once.
-- Run: tend scenario examples/explore/bank.lua --seed 1
--      tend explore examples/explore/bank.lua --seeds 1..100 --shrink
local tend = require "tend"

local fixed = ... == "fixed"
local ACCOUNTS, CLIENTS, START = 8, 4, 100
-- The store: balances, money in flight (transfer id -> amount), the ids
-- applied, each client's transfers so far (its ids stay new after a
-- restart).
local balance, flight, applied, sent = {}, {}, {}, {}

local function account(ctx, name)
  balance[name] = balance[name] or START
  return function(m, c)
    if fixed then
      if applied[m.id] then return c:reply("ok") end -- done before
      applied[m.id] = true
    end
    if m.op == "withdraw" then
      balance[name] = balance[name] - m.amount
      flight[m.transfer] = m.amount
    else
      balance[name] = balance[name] + m.amount
      flight[m.transfer] = nil
    end
    c:reply("ok")
  end
end

local bank = tend.spawn(function(ctx)
  for i = 1, ACCOUNTS do ctx:spawn(account, { name = "a" .. i, args = { "a" .. i } }) end
  return function() end
end, { name = "bank" })
tend.sleep(0)
local accounts = {}
for i, row in ipairs(tend.children(bank)) do accounts[i] = row.ref or row end

-- Asks until it is answered: a Timeout (or a restarting account) retries.
local function call(ref, msg)
  while true do
    local ok = pcall(tend.ask, ref, msg, 0.3)
    if ok then return end
    tend.sleep(0.1)
  end
end

local function client(ctx, name)
  return function()
    while true do
      tend.sleep(0.2 + tend.random() * 0.8)
      local from, to = tend.random(ACCOUNTS), tend.random(ACCOUNTS - 1)
      if to >= from then to = to + 1 end
      sent[name] = (sent[name] or 0) + 1
      local id = name .. "." .. sent[name]
      local amount = tend.random(10)
      call(accounts[from], { op = "withdraw", amount = amount, transfer = id, id = id .. "w" })
      call(accounts[to], { op = "deposit", amount = amount, transfer = id, id = id .. "d" })
    end
  end
end

tend.spawn(function(ctx)
  for i = 1, CLIENTS do ctx:spawn(client, { name = "c" .. i, args = { "c" .. i } }):send("go") end
  return function() end
end, { name = "clients" })

tend.invariant("the total is constant", function()
  local total = 0
  for _, v in pairs(balance) do total = total + v end
  for _, v in pairs(flight) do total = total + v end
  return total == ACCOUNTS * START
end)

tend.chaos.nemesis {
  faults = { "freeze", "drop", "crash" }, targets = { "/user/bank/*", "/user/clients/*" },
  every = { 1, 4 }, heal_after = { 0.2, 1.5 }, p = { 0.5, 1 },
}
tend.sleep(60)
