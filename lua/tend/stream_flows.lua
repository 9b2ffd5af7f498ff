-- tend.stream's fused flow operators: each build(env, up, st) returns a
-- stage { pull } over the stage up; user functions run under the stage's
-- supervision (R.call: resume, restart or stop). They run as function calls
-- in the task that runs the chain (operator fusion). map, filter, take,
-- drop, take_while and scan also return fuse(env, st, down) -> push
-- [, start]: the same stage as a push into down (stream_fuse.lua).
local core = require "tend.core"
local R = require "tend.stream_run"

local M = {}

local nil_element = R.nil_element

-- Without a decider a failure stops the stream: fn is called directly
-- (no pcall per element), the stage and element noted for the StreamFailed
-- the task that runs the chain makes of the error (R.failed_here).
function M.map(fn)
  return function(env, up, st)
    if not st.decider then
      local label, upull = st.label, up.pull
      return { pull = function()
        local ok, v = upull()
        if not ok then return false end
        env.at_label, env.at_elem = label, v
        local r = fn(v)
        if r == nil then error(nil_element(label), 0) end
        return true, r
      end }
    end
    return { pull = function()
      while true do
        local ok, v = up.pull()
        if not ok then return false end
        local kept, r = R.call(env, st, fn, v, v)
        if kept then
          if r ~= nil then return true, r end
          R.decided(env, st, nil_element(st.label), v)
        end
      end
    end }
  end, function(env, st, down)
    if not st.decider then
      local label = st.label
      return function(v)
        local r = fn(v)
        if r == nil then error(nil_element(label), 0) end
        return down(r)
      end
    end
    local call = R.call
    return function(v)
      local kept, r = call(env, st, fn, v, v)
      if kept then
        if r ~= nil then return down(r) end
        R.decided(env, st, nil_element(st.label), v)
      end
    end
  end
end

function M.filter(fn)
  return function(env, up, st)
    if not st.decider then
      local label, upull = st.label, up.pull
      return { pull = function()
        while true do
          local ok, v = upull()
          if not ok then return false end
          env.at_label, env.at_elem = label, v
          if fn(v) then return true, v end
        end
      end }
    end
    return { pull = function()
      while true do
        local ok, v = up.pull()
        if not ok then return false end
        local kept, r = R.call(env, st, fn, v, v)
        if kept and r then return true, v end
      end
    end }
  end, function(env, st, down)
    if not st.decider then
      return function(v) if fn(v) then return down(v) end end
    end
    local call = R.call
    return function(v)
      local kept, r = call(env, st, fn, v, v)
      if kept and r then return down(v) end
    end
  end
end

function M.take(n)
  return function(_, up)
    local left = n
    return { pull = function()
      if left <= 0 then return false end
      local ok, v = up.pull()
      if not ok then left = 0 return false end
      left = left - 1
      return true, v
    end }
  end, n > 0 and function(_, _, down) -- take(0) pulls nothing: not fused
    local left = n
    return function(v)
      left = left - 1
      local r = down(v)
      if left <= 0 then return "stop" end
      return r
    end
  end or nil
end

function M.take_while(fn)
  return function(env, up, st)
    local over = false
    return { pull = function()
      while not over do
        local ok, v = up.pull()
        if not ok then over = true return false end
        local kept, r = R.call(env, st, fn, v, v)
        if kept then
          if r then return true, v end
          over = true
        end
      end
      return false
    end }
  end, function(env, st, down)
    return function(v)
      local kept, r = R.call(env, st, fn, v, v)
      if kept then
        if r then return down(v) end
        return "stop"
      end
    end
  end
end

function M.drop(n)
  return function(_, up)
    local left = n
    return { pull = function()
      while left > 0 do
        left = left - 1
        if not up.pull() then return false end
      end
      return up.pull()
    end }
  end, function(_, _, down)
    local left = n
    return function(v)
      if left > 0 then left = left - 1 return end
      return down(v)
    end
  end
end

-- Emits init, then each new state (Akka's scan); "restart" starts again
-- from init and emits it again, as a new scan would (Pekko's FlowScanSpec).
-- fn(acc, v), raising NilElement when it returns nil (an element to be).
local function step_of(fn, label)
  return function(acc, v)
    local r = fn(acc, v)
    if r == nil then error(nil_element(label), 0) end
    return r
  end
end

function M.scan(init, fn)
  return function(env, up, st)
    local fn = step_of(fn, st.label)
    local acc, first = init, true
    st.reset = function() acc, first = init, true end
    return { pull = function()
      if first then first = false return true, acc end
      while true do
        local ok, v = up.pull()
        if not ok then return false end
        local kept, r = R.call(env, st, fn, v, acc, v)
        if kept then acc = r return true, r end
        if first then first = false return true, acc end -- restarted
      end
    end }
  end, function(env, st, down)
    local fn = step_of(fn, st.label)
    local acc, restarted = init, false
    st.reset = function() acc, restarted = init, true end
    return function(v)
      local kept, r = R.call(env, st, fn, v, acc, v)
      if kept then acc = r return down(r) end
      if restarted then restarted = false return down(acc) end
    end, function() return down(acc) end
  end
end

-- One element at completion: the fold of all (Akka's Flow.fold); "restart"
-- starts again from init.
function M.fold(init, fn)
  return function(env, up, st)
    local fn = step_of(fn, st.label)
    local acc, over = init, false
    st.reset = function() acc = init end
    return { pull = function()
      if over then return false end
      while true do
        local ok, v = up.pull()
        if not ok then over = true return true, acc end
        local kept, r = R.call(env, st, fn, v, acc, v)
        if kept then acc = r end
      end
    end }
  end
end

function M.grouped(n)
  return function(_, up)
    local over = false
    return { pull = function()
      if over then return false end
      local g = {}
      while #g < n do
        local ok, v = up.pull()
        if not ok then over = true break end
        g[#g + 1] = v
      end
      if #g == 0 then return false end
      return true, g
    end }
  end
end

-- Token bucket: n elements per `per` seconds, up to `burst` at once (it
-- starts full); an element waits for its token (Akka's throttle, shaping
-- mode). With burst 0 each waits a whole period.
function M.throttle(n, per, burst)
  return function(env, up)
    local rate = n / per
    local tokens, last = burst, core.now()
    return { pull = function()
      local ok, v = up.pull()
      if not ok then return false end
      local now = core.now()
      tokens = math.min(burst, tokens + (now - last) * rate)
      last = now
      if tokens < 1 then
        env:sleep((1 - tokens) / rate)
        tokens, last = 1, core.now()
      end
      tokens = tokens - 1
      return true, v
    end }
  end
end

-- Then the elements of `other` (a source blueprint).
function M.concat(other, materialize_source)
  return function(env, up)
    local second
    return { pull = function()
      if not second then
        local ok, v = up.pull()
        if ok then return true, v end
        second = materialize_source(env, other, "concat")
      end
      return second.pull()
    end }
  end
end

-- fn(element) returns a source; their elements one source after another.
function M.flat_map(fn, materialize_source)
  return function(env, up, st)
    local inner
    return { pull = function()
      while true do
        if inner then
          local ok, v = inner.pull()
          if ok then return true, v end
          inner = nil
        end
        local ok, v = up.pull()
        if not ok then return false end
        local kept, src = R.call(env, st, fn, v, v)
        if kept then inner = materialize_source(env, src, st.label) end
      end
    end }
  end
end

-- On a failure from upstream: fn(err)'s value as the last element, then
-- complete (Akka's recover; fn returning nil: just complete).
function M.recover(fn)
  return function(_, up)
    local over = false
    return { pull = function()
      if over then return false end
      local ok, a, b = pcall(up.pull)
      if ok then return a, b end
      R.pass(a)
      over = true
      local err = a
      if type(err) == "table" and err.kind == "StreamFailed" and err.cause ~= nil then
        err = err.cause
      end
      local v = fn(err)
      if v == nil then return false end
      return true, v
    end }
  end
end

-- A log line per element (debug), completion and failure (info).
function M.log(name)
  return function(_, up)
    return { pull = function()
      local ok, a, b = pcall(up.pull)
      if not ok then
        R.pass(a)
        core.log("info", "[%s] failed: %s", name, R.kind_of(a) .. ": " .. select(2, R.kind_of(a)))
        error(a, 0)
      end
      if a then
        core.log("debug", "[%s] element: %s", name, tostring(b))
      else
        core.log("info", "[%s] completed", name)
      end
      return a, b
    end }
  end
end

return M
