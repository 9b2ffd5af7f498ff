-- tend.stream's asynchronous stages. A boundary (:async(), :buffer,
-- :merge, :zip, :grouped_within, :idle_timeout) runs the stages above it
-- in a task of their own (a producer) that sends each element to the task
-- below as a message; the consumer grants it demand, never more than its
-- buffer ahead, so no mailbox grows without bound. map_async runs each call
-- in a task of its own (so it may ask, sleep, make HTTP requests).
local core = require "tend.core"
local backoff = require "tend.backoff"
local R = require "tend.stream_run"
local F = require "tend.stream_fuse"

local M = {}

local LINGER = 2e-5 -- on the real clock, the longest a batch waits for more

-- Starts a producer of `parts` for the consumer stage `sid` of env. It
-- sends its elements in batches (one message carries up to the credit the
-- consumer granted): a batch goes when the credit is used, when the stage
-- feeding it has nothing ready (an asynchronous boundary's queue is empty;
-- a stage that may wait, such as tick or throttle, gives one element a
-- batch) or when the element just made took tend-clock time (a fused
-- stage that sleeps or asks: its elements go one by one, as they come;
-- on the real clock, once 4 elements took more than LINGER).
-- A producer whose source reads its own mailbox (a process's lines, a
-- connection's frames: parts[1].mailbox) must leave that mailbox alone
-- while it has no demand (so the program or peer is paused): its credit is
-- then `shared.granted - shared.used`, each counter written by one task
-- only (the consumer grants, the producer uses: the watchdog may preempt
-- a task between the read and the write of a shared counter, which would
-- lose an update made meanwhile), and it looks at it every few
-- milliseconds of the tend clock while it is 0.
local function producer(env, parts, sid, prefix_name, shared)
  local me = env.self
  return env:spawn(prefix_name, function()
    local penv = R.env(env.sup, env.path, core.self(), env.opts)
    penv.seq, penv.queue = env.seq, env.queue
    local credit = 0
    penv.on_ctl = function(m) if m.ctl == "demand" then credit = credit + m.n end end
    local function has_credit() return credit > 0 end
    local function wait_credit()
      if not shared then return penv:wait(has_credit) end
      local d = 0.001
      while shared.granted - shared.used <= 0 do
        core.sleep(d)
        d = math.min(2 * d, 0.016)
      end
    end
    -- the clock read every element (virtual), every 4th (real)
    local linger, every = 0, 0
    if not core.virtual_time() then linger, every = LINGER, 3 end
    local now = core.now
    local batch, nb, room, t0 = {}, 0, 0, 0
    local function flush()
      if nb == 0 then return end
      core.send(me, { sid = sid, vs = batch, n = nb })
      if shared then shared.used = shared.used + nb else credit = credit - nb end
      batch, nb = {}, 0
    end
    -- t0: when the batch was last seen fresh (the drive's start, the last
    -- look at the clock); an element that took clock time to make goes
    -- at once (the next may take as long)
    local function collect(v)
      nb = nb + 1
      batch[nb] = v
      if nb >= room then return "full" end
      if nb & every == 0 then
        local t = now()
        if t - t0 > linger then return "full" end
        t0 = t
      end
    end
    local ok, err = xpcall(function()
      local up, push = F.compile(penv, parts, function() return collect end)
      wait_credit()
      room = shared and shared.granted - shared.used or credit
      t0 = now()
      local r = F.start(penv)
      while r ~= "done" and r ~= "stop" do
        if r == "full" or r == "idle" then
          flush()
          wait_credit()
          room = shared and shared.granted - shared.used or credit
        end
        if nb == 0 then t0 = now() end
        r = F.drive(up, push, 64, nb > 0)
      end
      flush()
      core.send(me, { sid = sid, done = true })
    end, F.handler(penv))
    if not ok then
      flush()
      core.send(me, { sid = sid, err = err })
    end
    -- the consumer may still grant demand it sent before it saw the end:
    -- read it until the stream stops this task (no dead letters)
    while true do core.receive() end
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
  local nsources = #sources
  local function qn() return tail - head + 1 end
  local shared = {}
  local function grant(k, n)
    if n > 0 then
      outstanding[k] = outstanding[k] + n
      if shared[k] then shared[k].granted = shared[k].granted + n
      else core.send(refs[k], { ctl = "demand", n = n }) end
    end
  end
  -- One element v from a producer meets the overflow rule: returns the
  -- credit to give back for it (the producers run free).
  local function arrive(v)
    if qn() >= buf then
      local kept = overflow ~= "drop_new"
      if overflow == "fail" then
        err = err or core.error("BufferOverflow", name .. ": more than " .. buf .. " elements")
        return 0
      elseif overflow == "drop_head" then head = head + 1
      elseif overflow == "drop_tail" then q[tail] = nil tail = tail - 1 end
      R.event(env, "stream_drop", { detail = name .. " " .. overflow })
      if not kept then return 1 end
    end
    tail = tail + 1
    q[tail] = v
    return 1
  end
  local sids = {}
  for k, parts in ipairs(sources) do
    outstanding[k] = 0
    sids[k] = env:sid(function(m)
      if m.done then open = open - 1 return end
      if m.err ~= nil then err = err or m.err return end
      local vs, c = m.vs, m.n
      outstanding[k] = outstanding[k] - c
      if not overflow then
        if head > tail then q, head, tail = vs, 1, c -- the batch becomes the queue
        else
          table.move(vs, 1, c, tail + 1, q)
          tail = tail + c
        end
        return
      end
      local back = 0
      for x = 1, c do back = back + arrive(vs[x]) end
      grant(k, back)
    end)
    if parts[1] and parts[1].mailbox then shared[k] = { granted = 0, used = 0 } end
    refs[k] = producer(env, parts, sids[k], name, shared[k])
    grant(k, buf)
  end
  local function ready() return qn() > 0 or open == 0 or err ~= nil end
  -- The head of the queue; demand is asked again once half the buffer is
  -- free (Akka's request(n) refill).
  local half = buf // 2
  local function pop()
    local v = q[head]
    q[head] = nil
    head = head + 1
    if not overflow then
      local queued = tail - head + 1
      for k = 1, nsources do
        local ahead = outstanding[k] + queued
        if ahead <= half then grant(k, buf - ahead) end
      end
    end
    return v
  end
  local c = {}
  function c.take(deadline)
    if overflow then env:poll() end -- arrivals meet the overflow rule now
    if not env:wait(ready, deadline) then return nil end
    if err ~= nil then error(err, 0) end
    if qn() == 0 then return false end
    return true, pop()
  end
  function c.pull() return c.take(nil) end
  -- stream_fuse's driver: the queued elements pushed in one loop; it waits
  -- for the first only (not at all when nowait).
  if not overflow then
    function c.drive(push, max, nowait)
      for i = 1, max do
        if err ~= nil then error(err, 0) end
        if head > tail then
          if open == 0 then return "done" end
          if nowait or i > 1 then return "idle" end
          env:wait(ready)
          if err ~= nil then error(err, 0) end
          if qn() == 0 then return "done" end
        end
        local r = push(pop())
        if r then return r end
      end
    end
  end
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
    -- by element index i, in rings of n slots (at most n in flight: the
    -- tables keep to their array part)
    local results, elems = {}, {}
    local arrived, ahead, atail = {}, 1, 0 -- unordered: indices as they come
    local launched, head, inflight, updone = 0, 1, 0, false
    local idle, refs, busy, nworkers = {}, {}, {}, 0
    local me = env.self
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
      results[(m.i - 1) % n + 1] = m
      if not ordered then
        atail = atail + 1
        arrived[(atail - 1) % n + 1] = m.i
      end
    end)
    local function worker()
      local k = table.remove(idle)
      if k then return k end
      nworkers = nworkers + 1
      k = nworkers
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
      elems[(i - 1) % n + 1] = v
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
          while results[(head - 1) % n + 1] == nil do env:dispatch() end
          i, head = head, head + 1
        else
          while ahead > atail do env:dispatch() end
          local a = (ahead - 1) % n + 1
          i = arrived[a]
          arrived[a] = nil
          ahead = ahead + 1
        end
        local slot = (i - 1) % n + 1
        local r, e = results[slot], elems[slot]
        results[slot], elems[slot] = nil, nil
        inflight = inflight - 1
        if r.ok then return true, r.v end
        R.decided(env, st, r.v, e)
      end
    end }
  end
end

return M
