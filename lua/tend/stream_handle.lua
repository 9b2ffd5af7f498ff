-- tend.stream's running: :run_with / :run_async and their handle. A run
-- makes the supervisor /user/stream-N (or opts.name); its "run" task pulls
-- the chain into the sink and hands the value to the supervisor, which
-- answers the waiting caller. The caller (owner) dying or restarting
-- cancels the stream.
local core = require "tend.core"
local F = require "tend.stream_fuse"

return function(S, Blueprint, Sink, R)
  local count = 0
  -- A stage task that fails is stopped, not restarted: the stage that
  -- watches it fails its element (the stream's supervision decides).
  local STOP = core.one_for_one({ decider = function() return "stop" end })

  -- S.queue's actor: a bounded buffer between offering actors and the
  -- stream's source stage, which takes from it.
  local function queue_actor(size, overflow)
    return function()
      local buf, head, tail = {}, 1, 0
      local closed, failure = false, nil
      local function n() return tail - head + 1 end
      return function(m, ctx)
        if m.offer ~= nil then
          if closed then ctx:reply("closed") return end
          if n() >= size then
            if overflow == "backpressure" then ctx:stash() return end
            if overflow == "drop_new" then ctx:reply("dropped") return end
            if overflow == "fail" then
              failure, closed = core.error("BufferOverflow", "tend.stream.queue: more than " .. size), true
              ctx:unstash_all()
              ctx:reply("dropped")
              return
            end
            if overflow == "drop_head" then buf[head] = nil head = head + 1
            else buf[tail] = nil tail = tail - 1 end
          end
          tail = tail + 1
          buf[tail] = m.offer
          ctx:unstash_all()
          ctx:reply("enqueued")
        elseif m.take then
          -- a failure ends the stream at once, dropping what is queued;
          -- completion delivers it first (Pekko's Source.queue)
          -- (answered as a stage message: { sid, answer })
          if failure ~= nil then core.send(m.to, { m.sid, { err = failure } })
          elseif n() > 0 then
            local v = buf[head]
            buf[head] = nil
            head = head + 1
            ctx:unstash_all()
            core.send(m.to, { m.sid, { v = v } })
          elseif closed then core.send(m.to, { m.sid, { done = true } })
          else ctx:stash() end
        elseif m.complete then closed = true ctx:unstash_all()
        elseif m.fail ~= nil then failure, closed = m.fail, true ctx:unstash_all() end
      end
    end
  end

  -- The "run" task: pulls the chain into the sink.
  local function runner(sup, path, parts, sink, opts, queue)
    return function()
      local env = R.env(sup, path, core.self(), { decider = opts.decider })
      env.queue = queue
      -- a shutdown or an abort ends the run where it waits, at once
      local shutdown = false
      env.wakes = true
      env.on_ctl = function(m)
        if shutdown then return end
        if m.ctl == "shutdown" then shutdown = true error(R.SHUTDOWN, 0) end
        if m.ctl == "abort" then shutdown = true error(R.aborted(m.err), 0) end
      end
      local s
      local ok, v = xpcall(function()
        local st = { label = sink.name .. "#" .. (#parts + 1), decider = opts.decider }
        local up, push = F.compile(env, parts, function()
          s = sink.make(env, st)
          return s.push, st.label
        end)
        local r = F.start(env)
        local n, t, now, drive, pull = 0, core.now(), core.now, up.drive, up.pull
        -- a look at the mailbox (shutdown) every 64 elements, and once a
        -- millisecond of the tend clock passed (a driven loop: after each
        -- element while its elements take clock time, then after 2, 4, ...
        -- up to 64 while they do not)
        local budget = 1
        while not r and not shutdown do
          if drive then
            r = drive(push, budget)
            local t2 = now()
            if t2 - t > 0.001 then budget = 1 elseif budget < 64 then budget = 2 * budget end
            t = t2
            -- "idle": its queue ran dry; it reads the mailbox (a shutdown
            -- too) when it waits for the next batch
            if r == "idle" then r = nil else env:poll() end
          else
            local has, x = pull()
            if has then r = push(x) else r = "done" end
            n = n + 1
            if n & 63 == 0 or now() - t > 0.001 then
              env:poll()
              t = now()
            end
          end
        end
        return s.done()
      end, F.handler(env))
      env.on_ctl = nil
      if not ok and v == R.SHUTDOWN then ok, v = xpcall(s.done, F.handler(env)) end
      local aborted = not ok and R.is_abort(v)
      if aborted then v = R.failed(v.err) end
      -- a sink that tells of a failure (S.sink.actor's on_failure)
      if not ok and s and s.fail then pcall(s.fail, v) end
      env:poll()
      core.send(sup, { ctl = "result", ok = ok, v = v, aborted = aborted })
    end
  end

  local function supervisor(parts, sink, opts, owner, qspec)
    return function(ctx)
      local path = ctx.self:path()
      -- leaving: the handle took the result (or the owner ended); the supervisor
      -- stops once its run task's end came too (no dead letter of it)
      local result, queue, run_gone, leaving
      if qspec then
        queue = ctx:spawn(queue_actor(qspec.size, qspec.overflow), { name = "queue", stash = 1000000 })
      end
      local run = core.stream_task(ctx.self, "run", runner(ctx.self, path, parts, sink, opts, queue))
      ctx:watch(run, { ctl = "run_down" })
      if owner then -- its death or its next restart (the incarnation ended)
        ctx:watch(owner, { ctl = "owner_down" })
        core.watch_restarts(owner)
      end
      R.event({ path = path }, "stream_start", {})
      local function finish(ok, v, ev, fields)
        if result then return end
        result = { ok = ok, v = v }
        R.event({ path = path }, ev, fields or {})
        if opts.notify then core.send(opts.notify, { ctl_done = true, ok = ok, v = v }) end
        for _, c in ipairs(ctx:children()) do ctx:stop(c) end
        ctx:unstash_all()
      end
      return function(m, ctx)
        if m == "await" then
          if not result then ctx:stash() return end
          ctx:reply(result) -- (an await that timed out gets it too, late)
        elseif m == "release" then -- the handle has the result
          if run_gone then return core.stopped end
          leaving = true
        elseif m == "done?" then ctx:reply(result ~= nil)
        elseif m == "queue" then ctx:reply(queue or false)
        elseif type(m) ~= "table" then return core.unhandled
        elseif m.ctl == "result" then
          if m.ok then finish(true, m.v, "stream_complete")
          else
            local kind, msg = R.kind_of(m.v.cause or m.v)
            finish(false, m.v, "stream_fail", { kind = kind, message = msg, detail = m.aborted and "abort" or m.v.stage })
          end
        elseif m.ctl == "run_down" then
          run_gone = true
          if leaving then return core.stopped end
          finish(false, R.failed(core.error("StageFailed", "the stream's run task ended")),
            "stream_fail", { detail = "run" })
        elseif m.ctl == "cancel" or m.ctl == "owner_down" then
          local over = result ~= nil
          finish(false, R.failed(core.error("Cancelled", m.ctl == "cancel" and "cancelled" or "its owner ended")),
            "stream_cancel", { detail = m.ctl == "cancel" and "cancel" or "owner" })
          -- a stream its handle cancelled is not kept for an await (the
          -- handle knows); one that was over keeps its value
          if m.ctl == "owner_down" or not over then
            if run_gone then return core.stopped end
            leaving = true
          end
        elseif m.ctl == "abort" then -- through the run task: its sink is told
          if not result then core.send(run, m) end
        elseif m.ctl == "shutdown" then
          if not result then core.send(run, { ctl = "shutdown" }) end
        end
      end
    end
  end

  local Handle = {}
  Handle.__index = Handle
  Handle.__name = "tend.stream.handle"

  -- A timeout raises Timeout and leaves the stream running (a run's own
  -- timeout cancels it: cancel_on_timeout).
  function Handle:await(timeout, cancel_on_timeout)
    if timeout ~= nil and not (type(timeout) == "number" and timeout > 0) then
      error(("handle:await: timeout: expected a number of seconds > 0, got %s"):format(
        type(timeout) == "string" and ("%q"):format(timeout) or tostring(timeout)), 2)
    end
    if self.result == nil then
      local ok, r = pcall(core.ask, self.sup, "await", timeout or R.FOREVER)
      if not ok and self.cancelled and type(r) == "table" and (r.kind == "NoActor" or r.kind == "AskFailed") then
        ok, r = true, { ok = false, v = R.failed(core.error("Cancelled", "cancelled")) } -- it went
      end
      if not ok then
        if cancel_on_timeout and type(r) == "table" and r.kind == "Timeout" then
          core.send(self.sup, { ctl = "cancel" })
          core.send(self.sup, "release") -- no one awaits it now
        end
        error(r, 2)
      end
      self.result = r
      core.send(self.sup, "release")
    end
    if self.result.ok then return self.result.v end
    error(self.result.v, 2)
  end
  function Handle:cancel()
    self.cancelled = true
    core.send(self.sup, { ctl = "cancel" })
  end
  function Handle:shutdown() core.send(self.sup, { ctl = "shutdown" }) end
  function Handle:abort(err)
    if err == nil then error("handle:abort: err: expected an error (not nil), got nil", 2) end
    core.send(self.sup, { ctl = "abort", err = err })
  end
  function Handle:done()
    if self.result ~= nil or not core.alive(self.sup) then return true end
    return core.ask(self.sup, "done?")
  end
  function Handle:ref() return self.sup end
  local function no_queue(h, fn)
    if not h.queue then error("handle:" .. fn .. ": the stream's source is no tend.stream.queue", 3) end
  end
  function Handle:offer(v)
    no_queue(self, "offer")
    if v == nil then error("handle:offer: v: expected a value (nil is no element), got nil", 2) end
    local ok, r = pcall(core.ask, self.queue, { offer = v }, R.FOREVER)
    if ok then return r end
    return "closed"
  end
  function Handle:complete()
    no_queue(self, "complete")
    if core.alive(self.queue) then core.send(self.queue, { complete = true }) end
  end
  function Handle:fail(err)
    no_queue(self, "fail")
    if err == nil then error("handle:fail: err: expected an error (not nil), got nil", 2) end
    if core.alive(self.queue) then core.send(self.queue, { fail = err }) end
  end

  local run_keys = { name = true, timeout = true, decider = true, notify = true }

  local function check_opts(fn, opts)
    if opts == nil then return {} end
    if type(opts) ~= "table" then
      error(("tend.stream:%s: options: expected a table {name, timeout}, got %s"):format(fn, type(opts)), 4)
    end
    for k in pairs(opts) do
      if not run_keys[k] then error(("tend.stream:%s: unknown option '%s' (expected name, timeout or decider)"):format(fn, tostring(k)), 4) end
    end
    local d = opts.decider
    if d ~= nil and type(d) ~= "function" and d ~= "resume" and d ~= "restart" and d ~= "stop" then
      error(("tend.stream:%s: option 'decider': expected a function (err) -> \"resume\" | \"restart\" | \"stop\", or one of those words, got %s"):format(
        fn, type(d) == "string" and ("%q"):format(d) or tostring(d)), 4)
    end
    if opts.timeout ~= nil and not (type(opts.timeout) == "number" and opts.timeout > 0) then
      error(("tend.stream:%s: option 'timeout': expected a number of seconds > 0, got %s"):format(fn, tostring(opts.timeout)), 4)
    end
    if opts.name ~= nil and type(opts.name) ~= "string" then
      error(("tend.stream:%s: option 'name': expected a string, got %s"):format(fn, type(opts.name)), 4)
    end
    return opts
  end

  local function start(self, sink, opts, fn)
    if getmetatable(self) ~= Blueprint or self.kind ~= "source" then
      error(("tend.stream:%s: expected a source blueprint (a flow needs :via first)"):format(fn), 3)
    end
    if getmetatable(sink) ~= Sink then
      error(("tend.stream:%s: sink: expected a sink (tend.stream.sink.*), got %s"):format(fn, type(sink)), 3)
    end
    opts = check_opts(fn, opts)
    local parts = table.move(self.parts, 1, #self.parts, 1, {})
    table.move(sink.parts, 1, #sink.parts, #parts + 1, parts)
    local name = opts.name
    if not name then
      repeat count = count + 1 name = "stream-" .. count until not core.whereis("/user/" .. name)
    end
    local owner = core.self()
    local ok, sup = pcall(core.spawn, supervisor(parts, sink, opts, owner, self.queue),
      { name = name, stash = 1000000, children = STOP })
    if not ok then error((tostring(sup):gsub("^tend%.spawn:", "tend.stream:" .. fn .. ":")), 3) end
    local h = setmetatable({ sup = sup }, Handle)
    if self.queue then h.queue = core.ask(sup, "queue") end
    return h, opts
  end

  function Blueprint:run_async(sink, opts)
    return (start(self, sink, opts, "run_async"))
  end

  function Blueprint:run_with(sink, opts)
    local h, o = start(self, sink, opts, "run_with")
    return h:await(o.timeout, true)
  end

  function Blueprint:run_fold(init, fn, opts) return self:run_with(S.sink.fold(init, fn), opts) end
  function Blueprint:run_seq(opts) return self:run_with(S.sink.seq(), opts) end
  function Blueprint:run_foreach(fn, opts) return self:run_with(S.sink.foreach(fn), opts) end
  function Blueprint:run_head(opts) return self:run_with(S.sink.head(), opts) end
  function Blueprint:run_last(opts) return self:run_with(S.sink.last(), opts) end
  function Blueprint:run_ignore(opts) return self:run_with(S.sink.ignore(), opts) end

  require("tend.stream_http")(S, Blueprint)
  return true
end
