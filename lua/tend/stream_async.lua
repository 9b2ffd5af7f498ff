-- tend.stream's asynchronous stages. A boundary (:async(), :buffer,
-- :merge, :zip, :grouped_within, :idle_timeout) runs the stages above it
-- in a task of their own (a producer) that sends each element to the task
-- below as a message; the consumer grants it demand, never more than its
-- buffer ahead, so no mailbox grows without bound. map_async runs each call
-- in a task of its own (so it may ask, sleep, make HTTP requests).
local core = require "tend.core"
local backoff = require "tend.backoff"
local R = require "tend.stream_run"

local M = {}

-- Starts a producer of `parts` for the consumer stage `sid` of env. A
-- producer whose source reads its own mailbox (a process's lines, a
-- connection's frames: parts[1].mailbox) must leave that mailbox alone
-- while it has no demand (so the program or peer is paused): its credit is
-- then `shared.credit`, raised by the consumer in place, and it looks at it
-- every few milliseconds of the tend clock while it is 0.
local function producer(env, parts, sid, prefix_name, shared)
  local me = env.self
  return env:spawn(prefix_name, function()
    local penv = R.env(env.sup, env.path, core.self(), env.opts)
    penv.seq, penv.queue = env.seq, env.queue
    local credit = 0
    penv.on_ctl = function(m) if m.ctl == "demand" then credit = credit + m.n end end
    local function wait_credit()
      if not shared then return penv:wait(function() return credit > 0 end) end
      local d = 0.001
      while shared.credit <= 0 do
        core.sleep(d)
        d = math.min(2 * d, 0.016)
      end
    end
    local ok, err = pcall(function()
      local stage = R.materialize(penv, parts)
      local sent = 0
      while true do
        wait_credit()
        local has, v = stage.pull()
        if not has then core.send(me, { sid = sid, done = true }) return end
        if shared then shared.credit = shared.credit - 1 else credit = credit - 1 end
        core.send(me, { sid = sid, v = v })
        sent = sent + 1
        if sent % 64 == 0 and not shared then penv:poll() end
      end
    end)
    if not ok then core.send(me, { sid = sid, err = R.failed_here(penv, err) }) end
  end)
end

-- A consumer of the producers of each list of parts in `sources`: take
-- (deadline) -> true, v | false (all complete) | nil (deadline passed).
-- overflow: nil (back-pressure) or "drop_head", "drop_tail", "drop_new",
-- "fail" (the producers then run free, the newest elements kept or not).
function M.consumer(env, sources, buf, overflow, name)
  local q, head, tail = {}, 1, 0
  local open, err = #sources, nil
  local refs, outstanding = {}, {}
  local function qn() return tail - head + 1 end
  local shared = {}
  local function grant(k, n)
    if n > 0 then
      outstanding[k] = outstanding[k] + n
      if shared[k] then shared[k].credit = shared[k].credit + n
      else core.send(refs[k], { ctl = "demand", n = n }) end
    end
  end
  local sids = {}
  for k, parts in ipairs(sources) do
    outstanding[k] = 0
    sids[k] = env:sid(function(m)
      if m.done then open = open - 1 return end
      if m.err ~= nil then err = err or m.err return end
      outstanding[k] = outstanding[k] - 1
      if overflow and qn() >= buf then
        local kept = overflow ~= "drop_new"
        if overflow == "fail" then
          err = err or core.error("BufferOverflow", name .. ": more than " .. buf .. " elements")
          return
        elseif overflow == "drop_head" then head = head + 1
        elseif overflow == "drop_tail" then q[tail] = nil tail = tail - 1 end
        R.event(env, "stream_drop", { detail = name .. " " .. overflow })
        if not kept then grant(k, 1) return end
      end
      tail = tail + 1
      q[tail] = m.v
      if overflow then grant(k, 1) end
    end)
    if parts[1] and parts[1].mailbox then shared[k] = { credit = 0 } end
    refs[k] = producer(env, parts, sids[k], name, shared[k])
    grant(k, buf)
  end
  local c = {}
  function c.take(deadline)
    if overflow then env:poll() end -- arrivals meet the overflow rule now
    local ready = env:wait(function() return qn() > 0 or open == 0 or err ~= nil end, deadline)
    if not ready then return nil end
    if err ~= nil then error(err, 0) end
    if qn() == 0 then return false end
    local v = q[head]
    q[head] = nil
    head = head + 1
    if not overflow then -- ask again once half the buffer is free
      for k in ipairs(sources) do
        local ahead = outstanding[k] + qn()
        if ahead <= buf // 2 then grant(k, buf - ahead) end
      end
    end
    return true, v
  end
  function c.pull() return c.take(nil) end
  return c
end

function M.async(buf)
  return function(env, prefix, st)
    return M.consumer(env, { prefix }, buf or R.BUFFER, nil, st.label)
  end
end

function M.buffer(n, overflow)
  return function(env, prefix, st)
    return M.consumer(env, { prefix }, n, overflow ~= "backpressure" and overflow or nil, st.label)
  end
end

function M.merge(other)
  return function(env, prefix, st)
    return M.consumer(env, { prefix, other.parts }, R.BUFFER, nil, st.label)
  end
end

function M.zip(other)
  return function(env, prefix, st)
    local a = M.consumer(env, { prefix }, R.BUFFER, nil, st.label)
    local b = M.consumer(env, { other.parts }, R.BUFFER, nil, st.label)
    return { pull = function()
      local ok, x = a.pull()
      if not ok then return false end
      local ok2, y = b.pull()
      if not ok2 then return false end
      return true, { x, y }
    end }
  end
end

-- Groups of at most n, each emitted when full or `seconds` after its first
-- element arrived (Akka's groupedWithin emits no empty group either).
function M.grouped_within(n, seconds)
  return function(env, prefix, st)
    local c = M.consumer(env, { prefix }, math.max(n, R.BUFFER), nil, st.label)
    local over = false
    return { pull = function()
      if over then return false end
      local g, deadline = {}, nil
      while #g < n do
        local r, v = c.take(deadline)
        if r == nil then break end
        if r == false then over = true break end
        g[#g + 1] = v
        deadline = deadline or core.now() + seconds
      end
      if #g == 0 then return false end
      return true, g
    end }
  end
end

-- Fails with StreamIdleTimeout when no element comes for `seconds`.
function M.idle_timeout(seconds)
  return function(env, prefix, st)
    local c = M.consumer(env, { prefix }, R.BUFFER, nil, st.label)
    return { pull = function()
      local r, v = c.take(core.now() + seconds)
      if r == nil then
        error(R.failed(core.error("StreamIdleTimeout",
          ("no element for %g s"):format(seconds)), nil, st.label), 0)
      end
      return r, v
    end }
  end
end

-- Up to n calls of fn at once, each in a task of its own (up to n worker
-- tasks, made as needed and kept for the next elements); results in input
-- order (ordered) or as they come. opts.retry: each call retried with its
-- own backoff (tend.retry), RetriesExhausted after the last. A worker that
-- dies (a chaos crash) fails its element with StageFailed.
function M.map_async(n, fn, opts, ordered)
  local work = fn
  if opts and opts.retry then
    local r = opts.retry
    work = function(v) return backoff.retry(function() return fn(v) end, r) end
  end
  return function(env, up, st)
    local results, arrived, elems = {}, {}, {}
    local launched, head, inflight, updone = 0, 1, 0, false
    local idle, refs, busy, nworkers = {}, {}, {}, 0
    local sid = env:sid(function(m)
      local k = m.k
      local i = busy[k]
      busy[k] = nil
      if m.dead then
        refs[k] = nil
        if i == nil then return end
        m = { i = i, ok = false, v = core.error("StageFailed", st.label .. ": its task ended before answering") }
      else
        idle[#idle + 1] = k
      end
      results[m.i] = m
      arrived[#arrived + 1] = m.i
    end)
    local function worker()
      local k = table.remove(idle)
      if k then return k end
      nworkers = nworkers + 1
      k = nworkers
      local me = env.self
      refs[k] = env:spawn(st.label, function()
        while true do
          local job = core.receive()
          local ok, r = pcall(work, job.v)
          core.send(me, { sid = sid, k = k, i = job.i, ok = ok, v = r })
        end
      end)
      core.watch(refs[k], { sid = sid, k = k, dead = true })
      return k
    end
    local function launch(v)
      launched = launched + 1
      local i = launched
      elems[i] = v
      inflight = inflight + 1
      local k = worker()
      busy[k] = i
      core.send(refs[k], { i = i, v = v })
    end
    return { pull = function()
      while true do
        while inflight < n and not updone do
          local ok, v = up.pull()
          if ok then launch(v) else updone = true end
        end
        if inflight == 0 then return false end
        local i
        if ordered then
          env:wait(function() return results[head] ~= nil end)
          i, head = head, head + 1
          for x = #arrived, 1, -1 do if arrived[x] == i then table.remove(arrived, x) break end end
        else
          env:wait(function() return #arrived > 0 end)
          i = table.remove(arrived, 1)
        end
        local r, e = results[i], elems[i]
        results[i], elems[i] = nil, nil
        inflight = inflight - 1
        if r.ok then return true, r.v end
        R.decided(env, st, r.v, e)
      end
    end }
  end
end

return M
