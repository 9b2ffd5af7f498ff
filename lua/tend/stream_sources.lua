-- tend.stream's sources as stages: each build(env) returns { pull }, pull()
-- -> true, element | false (complete), or raises (fail). A source makes an
-- element only when pulled: that is how demand reaches it. Those that never
-- wait also have drive(push, max): up to max elements pushed in one loop
-- (stream_fuse.lua), "done" at their end or the push's "stop"/"full".
local core = require "tend.core"
local R = require "tend.stream_run"

local M = {}

local function done() return false end

function M.from(list)
  return function()
    local i, n = 0, #list
    return { pull = function()
      i = i + 1
      if i > n then return false end
      return true, list[i]
    end, drive = function(push, max)
      for _ = 1, max do
        i = i + 1
        if i > n then return "done" end
        local r = push(list[i])
        if r then return r end
      end
    end }
  end
end

function M.range(a, b, step)
  return function()
    local i = a - step
    return { pull = function()
      local n = i + step
      if (step > 0 and n > b) or (step < 0 and n < b) then return false end
      i = n
      return true, n
    end, drive = function(push, max)
      -- a numeric for adds step as pull does; its limit is b or max steps
      local lim = i + step * max
      if (step > 0 and lim > b) or (step < 0 and lim < b) then lim = b end
      for n = i + step, lim, step do
        i = n
        local r = push(n)
        if r then return r end
      end
      local n = i + step
      if (step > 0 and n > b) or (step < 0 and n < b) then return "done" end
    end }
  end
end

function M.unfold(state, fn)
  return function(env, _, st)
    local s, finished = state, false
    return { pull = function()
      if finished then return false end
      local ok, nxt, elem = pcall(fn, s)
      if not ok then error(R.failed(nxt, s, st.label), 0) end
      if nxt == nil then finished = true return false end
      if elem == nil then
        error(R.failed(core.error("NilElement", st.label .. ": fn returned a state and no element"), s, st.label), 0)
      end
      s = nxt
      return true, elem
    end }
  end
end

function M.single(v)
  return M.from({ v })
end

function M.empty()
  return function() return { pull = done } end
end

function M.failed(err)
  return function(_, _, st)
    return { pull = function() error(R.failed(err, nil, st.label), 0) end }
  end
end

-- The tend clock's ticks: the first `interval` after the start, then every
-- interval, only on that schedule: a consumer that asks after a tick's
-- time (it was busy) gets the next one when it comes, the missed ones
-- skipped (Akka's Source.tick: a tick with no demand is not received).
function M.tick(interval, value)
  return function(env)
    local start, k = core.now(), 1 -- the k-th tick is due at start + k * interval
    return { pull = function()
      local now = core.now()
      if now - (start + k * interval) > 1e-6 then -- late: the next on schedule
        k = math.ceil((now - start) / interval - 1e-6)
      end
      local left = start + k * interval - now
      if left > 1e-9 then env:sleep(left) end
      k = k + 1
      return true, value
    end }
  end
end

-- factory() makes the source at the first pull (Akka's Source.lazySource).
function M.lazy(factory, materialize_source)
  return function(env, _, st)
    local inner
    return { pull = function()
      if not inner then
        local ok, src = pcall(factory)
        if not ok then error(R.failed(src, nil, st.label), 0) end
        inner = materialize_source(env, src, "tend.stream.lazy")
      end
      return inner.pull()
    end }
  end
end

-- S.queue's source: takes from the queue actor the run made (env.queue);
-- its answer comes as a stage message, so the task reads its mailbox (a
-- shutdown) while it waits.
function M.queue()
  return function(env)
    local r
    local sid = env:sid(function(m) r = m[2] end)
    local ask = { take = true, to = env.self, sid = sid }
    return { pull = function()
      r = nil
      core.send(env.queue, ask)
      env:wait(function() return r ~= nil end)
      if r.done then return false end
      if r.err ~= nil then error(r.err, 0) end
      return true, r.v
    end }
  end
end

return M
