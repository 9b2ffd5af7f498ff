-- tend.stream's restarts with backoff (Akka's RestartSource, RestartFlow,
-- RestartSink .withBackoff / .onFailuresWithBackoff): the inner stream the
-- factory makes is made again after each failure (and completion, unless
-- on_failures_only), after the next delay of tend's backoff formula (the
-- C core's generator, as tend.retry); after max_restarts (within
-- max_restarts_within seconds, when set) the stage completes.
local core = require "tend.core"
local R = require "tend.stream_run"

local M = {}

-- The restart state of one stage: restart(err) -> true (made again after
-- the delay) or false (the limit is reached: complete).
local function restarter(env, st, opts)
  local cfg = {}
  for k, v in pairs(opts) do
    if k ~= "max_restarts" and k ~= "max_restarts_within" and k ~= "on_failures_only" then
      cfg[k] = v
    end
  end
  local delays = core.backoff_delay_generator(cfg, "tend.stream.restart")
  local max, within = opts.max_restarts, opts.max_restarts_within
  local times = {}
  return function(err)
    local now = core.now()
    if within then
      local kept = {}
      for _, t in ipairs(times) do if now - t < within then kept[#kept + 1] = t end end
      times = kept
    end
    if max and #times >= max then
      core.log("info", "%s %s: gave up after %d restarts", env.path, st.label, #times)
      return false
    end
    times[#times + 1] = now
    local d = delays:next()
    local kind, msg
    if err ~= nil then -- the failure's own kind, not its StreamFailed wrapper
      if type(err) == "table" and err.kind == "StreamFailed" and err.cause ~= nil then err = err.cause end
      kind, msg = R.kind_of(err)
    end
    R.event(env, "stream_backoff", { detail = st.label, count = #times, delay = d, kind = kind, message = msg })
    env:sleep(d)
    R.event(env, "stream_restart", { detail = st.label, count = #times })
    return true
  end
end

-- v, a factory's value, when kind_of(v) is `want`; else the stream fails
-- with BadArg at once (a wrong value is no failure to back off from).
-- kind_of(v): "source", "flow", "sink" or a word for what v is.
local function checked(v, want, expected, kind_of, st)
  local k = kind_of(v)
  if k == want then return v end
  if k == "source" or k == "flow" or k == "sink" then k = "a " .. k end
  error(R.failed(core.error("BadArg", ("%s: factory: expected %s, got %s"):format(st.label, expected, k)),
    nil, st.label), 0)
end

function M.source(opts, factory, materialize_source, kind_of)
  return function(env, _, st)
    local restart = restarter(env, st, opts)
    local inner, ienv
    return { pull = function()
      while true do
        if not inner then
          ienv = env:sub()
          local ok, src = pcall(factory)
          if ok then
            checked(src, "source", "a source", kind_of, st)
            ok, inner = pcall(materialize_source, ienv, src, st.label)
          end
          if not ok then
            R.pass(inner)
            inner = nil
            if not restart(src) then return false end
          end
        end
        if inner then
          local ok, has, v = pcall(inner.pull)
          if ok and has then return true, v end
          if not ok then R.pass(has) end
          ienv:cancel()
          inner = nil
          if ok and opts.on_failures_only then return false end
          if not restart(not ok and has or nil) then return false end
        end
      end
    end }
  end
end

-- factory() returns a flow (S.flow()...); it is made again over the same
-- upstream after a failure (the element in it is lost).
function M.flow(opts, factory, kind_of)
  return function(env, up, st)
    local restart = restarter(env, st, opts)
    local inner, ienv
    return { pull = function()
      while true do
        if not inner then
          ienv = env:sub()
          local flow = checked(factory(), "flow", "a flow (tend.stream.flow()...)", kind_of, st)
          inner = R.materialize(ienv, flow.parts, nil, up)
        end
        local ok, has, v = pcall(inner.pull)
        if ok and has then return true, v end
        if not ok then R.pass(has) end
        ienv:cancel()
        inner = nil
        if ok and opts.on_failures_only then return false end
        if ok and not opts.on_failures_only then
          -- the upstream completed: so does the flow
          return false
        end
        if not restart(has) then return false end
      end
    end }
  end
end

-- factory() returns a sink; made again after a failure (its state starts
-- over, the element lost); after the limit the run ends with its value.
function M.sink(opts, factory, kind_of)
  return function(env, st)
    local restart = restarter(env, st, opts)
    local function make()
      return checked(factory(), "sink", "a sink (tend.stream.sink.*)", kind_of, st).make(env, st)
    end
    local inner = make()
    return {
      push = function(v)
        local ok, r = pcall(inner.push, v)
        if ok then return r end
        R.pass(r)
        if not restart(r) then return "stop" end
        inner = make()
      end,
      done = function() return inner.done() end,
      fail = function(err) if inner.fail then inner.fail(err) end end,
    }
  end
end

return M
