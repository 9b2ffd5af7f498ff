-- tend.testkit: probes, actors whose messages a test awaits (design §3.6).
-- A probe queues what it receives; expect_* take from that queue, waiting
-- on the host clock (so under --virtual-time a 30 s timeout costs nothing).
local tend = require "tend"
local K = require "tend.kinds" -- the error kinds (src/runtime/core/errkind.h)

local M = {}

local WAIT, WATCH, UNWATCH = {}, {}, {} -- control messages, compared by identity
local DEFAULT_TIMEOUT = 3 -- seconds, as Akka's TestKit

local Probe = {}
Probe.__index = Probe

local function show(v)
  if type(v) == "table" and getmetatable(v) == nil then
    local parts = {}
    for k, x in pairs(v) do parts[#parts + 1] = tostring(k) .. "=" .. tostring(x) end
    table.sort(parts)
    return "{" .. table.concat(parts, ", ") .. "}"
  end
  return type(v) == "string" and string.format("%q", v) or tostring(v)
end

local function same(a, b)
  if a == b then return true end
  if type(a) ~= "table" or type(b) ~= "table" or getmetatable(a) or getmetatable(b) then
    return false
  end
  for k, v in pairs(a) do if not same(v, b[k]) then return false end end
  for k in pairs(b) do if a[k] == nil then return false end end
  return true
end

-- probe([name]) -> a probe with .ref, :send_to, :expect_msg, :expect_terminated,
-- :expect_no_msg, :watch, :unwatch, :receive, :stop, .last_sender
function M.probe(name)
  local queue = { first = 1, last = 0 }
  local self = setmetatable({ queue = queue }, Probe)
  local waiter -- the pending ask of a test waiting for a message
  local function put(entry)
    if waiter and tend.alive(waiter) then
      local w = waiter
      waiter = nil
      w:send(entry)
    else
      waiter = nil
      queue.last = queue.last + 1
      queue[queue.last] = entry
    end
  end
  self.ref = tend.spawn(function()
    return function(msg, ctx)
      if msg == WAIT then
        if queue.first <= queue.last then
          local e = queue[queue.first]
          queue[queue.first] = nil
          queue.first = queue.first + 1
          ctx:reply(e)
        else
          waiter = ctx.sender
        end
      elseif type(msg) == "table" and (msg[1] == WATCH or msg[1] == UNWATCH) then
        if msg[1] == WATCH then ctx:watch(msg[2]) else ctx:unwatch(msg[2]) end
        ctx:reply(true)
      else
        put({ msg = msg, sender = ctx.sender })
      end
    end
  end, { name = name })
  return self
end

-- Waits up to timeout for the next message; returns {msg, sender} or nil.
function Probe:receive(timeout)
  local ok, entry = pcall(tend.ask, self.ref, WAIT, timeout or DEFAULT_TIMEOUT)
  if ok then
    self.last_sender = entry.sender
    return entry
  end
  if type(entry) == "table" and entry.kind == K.Timeout then return nil end
  error(entry, 0)
end

function Probe:send_to(ref, msg)
  ref:tell(msg, self.ref)
end

-- expect_msg(value_or_predicate [, timeout]) -> the message
function Probe:expect_msg(expected, timeout)
  timeout = timeout or DEFAULT_TIMEOUT
  local e = self:receive(timeout)
  if e == nil then
    error(string.format("expect_msg: no message within %s s (expected %s)", timeout,
      type(expected) == "function" and "one matching the predicate" or show(expected)), 2)
  end
  local ok
  if type(expected) == "function" then ok = expected(e.msg) else ok = same(expected, e.msg) end
  if not ok then
    error(string.format("expect_msg: got %s, expected %s", show(e.msg),
      type(expected) == "function" and "one matching the predicate" or show(expected)), 2)
  end
  return e.msg
end

-- expect_terminated(ref [, timeout]) -> the terminated message
function Probe:expect_terminated(ref, timeout)
  timeout = timeout or DEFAULT_TIMEOUT
  local e = self:receive(timeout)
  if e == nil then
    error(string.format("expect_terminated: %s did not terminate within %s s", tostring(ref),
      timeout), 2)
  end
  local m = e.msg
  if type(m) ~= "table" or m.tend ~= "terminated" or m.ref ~= ref then
    error(string.format("expect_terminated: got %s, expected terminated of %s", show(m),
      tostring(ref)), 2)
  end
  return m
end

-- expect_no_msg(seconds): nothing arrives for that long
function Probe:expect_no_msg(seconds)
  local e = self:receive(seconds)
  if e ~= nil then
    error(string.format("expect_no_msg: got %s within %s s", show(e.msg), seconds), 2)
  end
end

-- watch(ref): the probe gets ref's terminated message
function Probe:watch(ref)
  tend.ask(self.ref, { WATCH, ref }, DEFAULT_TIMEOUT)
  return ref
end

function Probe:unwatch(ref)
  tend.ask(self.ref, { UNWATCH, ref }, DEFAULT_TIMEOUT)
  return ref
end

-- receive_while(pred [, timeout]) -> the messages received, in order, while
-- pred(msg) held; the first that fails pred stays for the next expect_*.
function Probe:receive_while(pred, timeout)
  timeout = timeout or DEFAULT_TIMEOUT
  local got = {}
  local deadline = tend.now() + timeout
  while true do
    local left = deadline - tend.now()
    if left <= 0 then return got end
    local e = self:receive(left)
    if e == nil then return got end
    if not pred(e.msg) then
      self.queue.first = self.queue.first - 1 -- put it back, first in line
      self.queue[self.queue.first] = e
      return got
    end
    got[#got + 1] = e.msg
  end
end

-- fish_for(pred [, timeout]) -> the first message for which pred holds;
-- the others are dropped. Fails when none comes in time.
function Probe:fish_for(pred, timeout)
  timeout = timeout or DEFAULT_TIMEOUT
  local deadline = tend.now() + timeout
  while true do
    local left = deadline - tend.now()
    local e = left > 0 and self:receive(left) or nil
    if e == nil then
      error(string.format("fish_for: no matching message within %s s", timeout), 2)
    end
    if pred(e.msg) then return e.msg end
  end
end

function Probe:stop()
  tend.stop(self.ref)
end

-- within(min, max, fn) -> fn's results; fails unless fn took between min and
-- max seconds of host time (exact under the virtual clock).
function M.within(min, max, fn)
  local t0 = tend.now()
  local results = table.pack(fn())
  local took = tend.now() - t0
  if took < min - 1e-9 or took > max + 1e-9 then
    error(string.format("within: took %.6f s, expected between %s and %s s", took, min, max), 2)
  end
  return table.unpack(results, 1, results.n)
end

return M
