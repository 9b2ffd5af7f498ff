-- tend.stream's asynchronous stages. A boundary (:async(), :buffer,
-- :merge, :zip, :grouped_within, :idle_timeout) runs the stages above it
-- in a task of their own (a producer) that sends each element to the task
-- below as a message; the consumer grants it demand, never more than its
-- buffer ahead, so no mailbox grows without bound. map_async runs each call
-- in a fiber of its stage's task (so it may ask, sleep, make HTTP requests).
local core = require "tend.core"
local backoff = require "tend.backoff"
local R = require "tend.stream_run"
local F = require "tend.stream_fuse"

local M = {}

local LINGER = 2e-5 -- on the real clock, the longest a batch waits for more
-- A producer's messages are arrays { sid, n, ... }: n >= 1 a batch of n
-- elements, DONE its end, FAILED its failure ({ sid, FAILED, err }).
local DONE, FAILED = -1, -2

-- An empty batch of stage sid: { sid, n, v1..v16 } sized at once (a table
-- constructor's nils size its array part; R.BUFFER is 16).
local function new_batch(sid)
  return { sid, 0, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil }
end

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
    penv.on_demand = function(n) credit = credit + n end
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
    -- a batch is an array { sid, n, v1, ..., vn } (made with room for
    -- a default buffer's worth, so filling it does not grow it)
    -- limit: the next count at which collect looks (room, or the clock's turn)
    local batch, nb, room, limit, t0 = new_batch(sid), 0, 0, 0, 0
    local function set_room(n) room, limit = n, math.min(n, every + 1) end
    -- waits for credit, then takes it all as the room
    local function await_room()
      wait_credit()
      set_room(shared and shared.granted - shared.used or credit)
    end
    local function flush()
      if nb == 0 then return end
      batch[2] = nb
      core.send(me, batch)
      if shared then shared.used = shared.used + nb else credit = credit - nb end
      set_room(room - nb) -- (a flush before a wait leaves the rest of the credit)
      batch, nb = new_batch(sid), 0
    end
    -- what is collected goes before the task waits (a stage that sleeps or
    -- asks: the elements made before it do not wait for its element)
    core.on_wait(flush)
    -- t0: when the batch was last seen fresh (the drive's start, the last
    -- look at the clock); an element that took clock time to make goes
    -- at once (the next may take as long)
    local function look()
      if nb >= room then return "full" end
      local t = now()
      if t - t0 > linger then return "full" end
      t0 = t
      local l = nb + every + 1
      if l > room then l = room end
      limit = l
    end
    local function collect(v)
      nb = nb + 1
      batch[nb + 2] = v
      if nb >= limit then return look() end
    end
    local ok, err = xpcall(function()
      local up, push = F.compile(penv, parts, function() return collect end)
      await_room()
      t0 = now()
      local r = F.start(penv)
      while r ~= "done" and r ~= "stop" do
        if r == "full" or r == "idle" then
          flush()
          await_room()
        end
        if nb == 0 then t0 = now() end
        r = F.drive(up, push, 64, nb > 0)
      end
      flush()
      core.send(me, { sid, DONE })
    end, F.handler(penv))
    if not ok then
      flush()
      core.send(me, { sid, FAILED, err })
    end
    -- the consumer may still grant demand it sent before it saw the end:
    -- read it until the stream stops this task (no dead letters); the
    -- outcomes of map_async calls still in flight are taken and dropped
    -- (else tend.receive answers core.fiber_ready at once, for ever)
    local fiber_ready, fiber_take = core.fiber_ready, core.fiber_take
    while true do
      if core.receive() == fiber_ready then
        while fiber_take() do end
      end
    end
  end)
end

-- A consumer of the producers of each list of parts in `sources`: take
-- (deadline) -> true, v | false (all complete) | nil (deadline passed).
-- overflow: nil (back-pressure) or "drop_head", "drop_tail", "drop_new",
-- "fail" (the producers then run free, the newest elements kept or not).
function M.consumer(env, sources, buf, overflow, name)
  local q, head, tail = {}, 1, 0
  local arrivals = 0 -- messages handled (a drive's run ends when one came)
  local open, err = #sources, nil
  local refs, outstanding = {}, {}
  local nsources = #sources
  local function qn() return tail - head + 1 end
  local shared = {}
  local function grant(k, n)
    if n > 0 then
      outstanding[k] = outstanding[k] + n
      if shared[k] then shared[k].granted = shared[k].granted + n
      else core.send(refs[k], n) end -- an integer: demand (Env:dispatch)
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
  -- Demand is asked again once half the buffer is free (Akka's request(n)
  -- refill): when an element is taken and the head reaches refill_at, the
  -- first index where some source's outstanding demand and the queue
  -- together are half the buffer (placed again on each arrival and grant).
  local half, refill_at = buf // 2, math.huge
  local function place()
    local at = math.huge
    for k = 1, nsources do
      local a = tail + 1 + outstanding[k] - half
      if a < at then at = a end
    end
    refill_at = at
  end
  local function refill()
    local queued = tail - head + 1
    for k = 1, nsources do
      local ahead = outstanding[k] + queued
      if ahead <= half then grant(k, buf - ahead) end
    end
    place()
  end
  -- The front of q already read is dropped once it is long (a queue read
  -- while batches keep arriving: its indexes only grow).
  local function compact()
    if head > 64 then
      local nq = tail - head + 1
      q = table.move(q, head, tail, 1, {})
      head, tail = 1, nq
    end
  end
  local sids = {}
  for k, parts in ipairs(sources) do
    outstanding[k] = 0
    sids[k] = env:sid(function(m)
      arrivals = arrivals + 1
      local c = m[2] -- { sid, n, v1, ..., vn }, { sid, DONE }, { sid, FAILED, err }
      if c < 0 then
        if c == DONE then open = open - 1 else err = err or m[3] end
        return
      end
      outstanding[k] = outstanding[k] - c
      if not overflow then
        if head > tail then q, head, tail = m, 3, c + 2 -- the batch becomes the queue
        else
          compact()
          table.move(m, 3, c + 2, tail + 1, q)
          tail = tail + c
        end
        place()
        return
      end
      compact()
      local back = 0
      for x = 3, c + 2 do back = back + arrive(m[x]) end
      grant(k, back)
    end)
    if parts[1] and parts[1].mailbox then shared[k] = { granted = 0, used = 0 } end
    refs[k] = producer(env, parts, sids[k], name, shared[k])
    grant(k, buf)
  end
  local function ready() return qn() > 0 or open == 0 or err ~= nil end
  if not overflow then place() end
  local function pop()
    local v = q[head]
    head = head + 1
    if head >= refill_at then refill() end
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
      local i = 0
      while i < max do
        if err ~= nil then error(err, 0) end
        if head > tail then
          if open == 0 then return "done" end
          if nowait or i > 0 then return "idle" end
          env:wait(ready)
          if err ~= nil then error(err, 0) end
          if head > tail then return "done" end
        end
        -- a run of queued elements up to the tail, max, or the one whose
        -- taking makes the refill: no bookkeeping but the head's (written
        -- before each push: a push may read the mailbox, e.g. a flat_map's
        -- inner stream; an arrival then ends the run)
        local h, stop = head, tail
        if stop > h + max - i - 1 then stop = h + max - i - 1 end
        if stop > refill_at - 2 then stop = refill_at - 2 end
        if stop < h then -- the element whose taking makes the refill
          i = i + 1
          local r = push(pop())
          if r then return r end
        else
          local qq, a0, ran = q, arrivals, stop - h + 1
          for x = h, stop do
            head = x + 1
            local r = push(qq[x])
            if r then return r end
            if arrivals ~= a0 then ran = x - h + 1 break end
          end
          i = i + ran
        end
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

-- With "fail", the BufferOverflow the consumer raises names this stage.
function M.buffer(n, overflow)
  return function(env, prefix, st)
    local c = M.consumer(env, { prefix }, n, overflow ~= "backpressure" and overflow or nil, st.label)
    if overflow ~= "fail" then return c end
    local take = c.take
    return { pull = function()
      local ok, a, b = pcall(take, nil)
      if ok then return a, b end
      R.pass(a)
      if type(a) == "table" and a.kind == "BufferOverflow" then a = R.failed(a, nil, st.label) end
      error(a, 0)
    end }
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

-- Up to n calls of fn at once, each in a fiber of the stage's task: a
-- coroutine whose asks, sleeps and HTTP requests wait without holding the
-- others or the task (runtime/core/fiber.h; its other waits hold the
-- task until they end). As Akka's mapAsync, at most n elements are
-- pulled ahead of the next result (in calls, or done and waiting for
-- their turn). Results in input order (ordered) or as they come.
-- opts.retry: each call retried with its own backoff (tend.retry),
-- RetriesExhausted after the last.
local IDLE = {} -- what a fiber yields when its call is over
local fiber_resume, fiber_wait = core.fiber_resume, core.fiber_wait
local yield = coroutine.yield

function M.map_async(n, fn, opts, ordered)
  local work = fn
  if opts and opts.retry then
    local r = opts.retry
    work = function(v) return backoff.retry(function() return fn(v) end, r) end
  end
  return function(env, up, st)
    -- each element in flight or waiting for its turn has a slot of these
    -- rings (never nil, so the tables keep to their array part): elems,
    -- and once its call is over oks (true, false; 0 before) and vals.
    -- Ordered, element i has slot (i - 1) % n + 1; unordered, a free slot,
    -- and `arrived` holds the slots in the order their calls ended.
    local oks, vals, elems, arrived, free = {}, {}, {}, {}, {}
    for k = 1, n do
      oks[k], vals[k], elems[k], arrived[k], free[k] = 0, false, false, 0, k
    end
    local ahead, atail, nfree = 1, 0, n
    local pulled, head, updone = 0, 1, false
    local idle, nidle = {}, 0 -- idle fibers' start functions
    -- a new fiber, one call per start(slot)
    local function new_fiber()
      local f, tag, cur, start
      f = coroutine.create(function(slot)
        while true do
          local ok, r = pcall(work, elems[slot])
          if ok and r == nil then ok, r = false, R.nil_element(st.label) end
          oks[slot], vals[slot] = ok, r
          if not ordered then
            atail = atail + 1
            arrived[(atail - 1) % n + 1] = slot
          end
          slot = yield(IDLE)
        end
      end)
      -- its resume gave ok, a: it waits (continued when that wait ends),
      -- is idle, or its element fails (a coroutine.yield of fn's own, or
      -- the fiber broke: it is dropped)
      local function settle(ok, a)
        if ok and a == fiber_wait then return end
        if ok and a == IDLE then
          nidle = nidle + 1
          idle[nidle] = start
          return
        end
        oks[cur], vals[cur] = false, ok and core.error("BadYield", st.label ..
          ": its function yielded (coroutine.yield) outside a coroutine it made") or a
        if not ordered then
          atail = atail + 1
          arrived[(atail - 1) % n + 1] = cur
        end
      end
      tag = env:fiber(f, function() settle(fiber_resume(f, tag)) end)
      start = function(slot)
        cur = slot
        settle(fiber_resume(f, tag, slot))
      end
      return start
    end
    -- pulls while the rings have room, each element's call started at
    -- once (at most n in the rings: a fiber is idle, or one more is made)
    local function fill()
      while not updone and pulled - head + 1 < n do
        local ok, v = up.pull()
        if not ok then updone = true return end
        pulled = pulled + 1
        local slot
        if ordered then
          slot = (pulled - 1) % n + 1
        else
          slot = free[nfree]
          nfree = nfree - 1
        end
        elems[slot] = v
        local start
        if nidle > 0 then
          start = idle[nidle]
          idle[nidle] = false
          nidle = nidle - 1
        else
          start = new_fiber()
        end
        start(slot)
      end
    end
    -- the next result: true, v | false (none left); waits unless nowait
    -- (then nil when none is ready)
    local function next_result(nowait)
      fill()
      if head > pulled then return false end
      local slot
      if ordered then
        slot = (head - 1) % n + 1
        if oks[slot] == 0 then
          if nowait then return nil end
          repeat env:dispatch() until oks[slot] ~= 0
        end
      else
        if ahead > atail then
          if nowait then return nil end
          repeat env:dispatch() until ahead <= atail
        end
        slot = arrived[(ahead - 1) % n + 1]
        ahead = ahead + 1
        nfree = nfree + 1
        free[nfree] = slot
      end
      local ok, v, e = oks[slot], vals[slot], elems[slot]
      oks[slot], vals[slot], elems[slot] = 0, false, false
      head = head + 1
      if ok then return true, v end
      R.decided(env, st, v, e)
      return true, nil, true -- dropped
    end
    local stage = {}
    function stage.pull()
      while true do
        local has, v, dropped = next_result(false)
        if not has then return false end
        if not dropped then return true, v end
      end
    end
    -- stream_fuse's driver: up to max results pushed in one loop; it
    -- waits for the first only (not at all when nowait)
    function stage.drive(push, max, nowait)
      for k = 1, max do
        local has, v, dropped = next_result(nowait or k > 1)
        if has == false then return "done" end
        if has == nil then return "idle" end
        if not dropped then
          local r = push(v)
          if r then return r end
        end
      end
    end
    return stage
  end
end

return M
