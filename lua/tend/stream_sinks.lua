-- tend.stream's sinks: each make(env, st) returns { push(v) -> "stop"?,
-- done() -> the run's value }. The runner pulls the chain and pushes into
-- the sink; "stop" ends the run early (head: upstream is cancelled).
local core = require "tend.core"
local R = require "tend.stream_run"

local M = {}

local function no_element(st)
  return R.failed(core.error("NoElement", "the stream completed with no element"), nil, st.label)
end

function M.fold(init, fn)
  return function(env, st)
    local acc = init
    st.reset = function() acc = init end
    if not st.decider then -- a failure is placed by stream_fuse's handler
      return {
        push = function(v) acc = fn(acc, v) end,
        done = function() return acc end,
      }
    end
    return {
      push = function(v)
        local kept, r = R.call(env, st, fn, v, acc, v)
        if kept then acc = r end
      end,
      done = function() return acc end,
    }
  end
end

function M.reduce(fn)
  return function(env, st)
    local acc, any = nil, false
    st.reset = function() acc, any = nil, false end
    return {
      push = function(v)
        if not any then acc, any = v, true return end
        local kept, r = R.call(env, st, fn, v, acc, v)
        if kept then acc = r end
      end,
      done = function()
        if not any then error(no_element(st), 0) end
        return acc
      end,
    }
  end
end

function M.seq()
  return function()
    local list = {}
    return { push = function(v) list[#list + 1] = v end, done = function() return list end }
  end
end

function M.head()
  return function(_, st)
    local got, v = false, nil
    return {
      push = function(x) got, v = true, x return "stop" end,
      done = function()
        if not got then error(no_element(st), 0) end
        return v
      end,
    }
  end
end

function M.last()
  return function(_, st)
    local got, v = false, nil
    return {
      push = function(x) got, v = true, x end,
      done = function()
        if not got then error(no_element(st), 0) end
        return v
      end,
    }
  end
end

function M.foreach(fn)
  return function(env, st)
    return { push = function(v) R.call(env, st, fn, v, v) end, done = function() return nil end }
  end
end

function M.ignore()
  return function()
    return { push = function() end, done = function() return nil end }
  end
end

-- Each element sent to ref; with ack, the next only once ref answered the
-- last one (ctx:reply): Akka's Sink.actorRefWithBackpressure. At the end
-- on_complete, or on a failure on_failure (a function of the StreamFailed
-- gives the message: Akka's onFailureMessage).
local IDLE = {} -- what the ack fiber yields when its ask is over

-- ack(v): asks ref with v and waits for the answer. In a stream's run task
-- (env.wakes) the ask runs in a fiber of the task, which reads its mailbox
-- meanwhile: a shutdown or an abort ends the wait (docs/design.md §4.7).
local function acker(env, ref)
  if not env.wakes then return function(v) core.ask(ref, v, R.FOREVER) end end
  local outcome -- { ok, err } of the last ask, once it is over
  local f = coroutine.create(function(v)
    while true do
      outcome = table.pack(pcall(core.ask, ref, v, R.FOREVER))
      v = coroutine.yield(IDLE)
    end
  end)
  local function settle(ok, a)
    if ok and (a == core.fiber_wait or a == IDLE) then return end
    outcome = { false, a } -- the fiber broke
  end
  local tag
  tag = env:fiber(f, function() settle(core.fiber_resume(f, tag)) end)
  return function(v)
    outcome = nil
    settle(core.fiber_resume(f, tag, v))
    env:wait(function() return outcome ~= nil end)
    if not outcome[1] then error(outcome[2], 0) end
  end
end

function M.actor(ref, opts)
  return function(env)
    local ack = opts.ack and acker(env, ref)
    return {
      push = function(v)
        if ack then ack(v) else core.send(ref, v) end
      end,
      done = function()
        if opts.on_complete ~= nil then core.send(ref, opts.on_complete) end
        return nil
      end,
      fail = function(err)
        local m = opts.on_failure
        if type(m) == "function" then m = m(err) end
        if m ~= nil then core.send(ref, m) end
      end,
    }
  end
end

-- Each element written to a tend.tcp connection, framed (tend.tcp.write
-- waits while its write queue is full: the stream is slowed, not
-- buffered); a connection that is gone fails the element (NotConnected).
function M.tcp(conn)
  return function(env, st)
    local write = require("tend.tcp").write
    local function put(v)
      local ok, why = write(conn, v)
      if ok == false then
        error(core.error("NotConnected", ("%s: the connection is %s"):format(st.label, tostring(why))), 0)
      end
    end
    return { push = function(v) R.call(env, st, put, v, v) end, done = function() return nil end }
  end
end

return M
