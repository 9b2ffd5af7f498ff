-- tend.stream's runner: a running stream is a supervisor actor
-- (/user/stream-N or its name) whose children are its stage tasks: "run",
-- the fused chain (stages as function calls, pulled by the sink), an
-- "async#i" task per asynchronous boundary, a task per map_async call.
-- Demand flows upstream: a stage makes an element only when the one below
-- pulls it; a boundary grants its producer at most its buffer ahead.
-- The supervisor holds the result for the awaiting caller; stopping it
-- cancels everything (tasks, their timers, their processes).
local core = require "tend.core"

local M = {}

local BUFFER = 16 -- a boundary's default buffer
M.BUFFER = BUFFER
local FOREVER = 1e9 -- a wait with no timeout (seconds)
M.FOREVER = FOREVER

-- What a stream's run task raises, from wherever it waits, when told to
-- shut down (handle:shutdown()): the stages unwind and the sink's value so
-- far is the run's; or to abort (handle:abort(err)): M.aborted(err), the
-- run fails with err and the sink is told. A stage that catches errors
-- passes them on (M.pass).
local SHUTDOWN = setmetatable({}, { __name = "tend.stream.shutdown" })
M.SHUTDOWN = SHUTDOWN
local Aborted = { __name = "tend.stream.aborted" }
function M.aborted(err) return setmetatable({ err = err }, Aborted) end
function M.is_abort(v) return getmetatable(v) == Aborted end
function M.is_end(err) return err == SHUTDOWN or getmetatable(err) == Aborted end
function M.pass(err) if err == SHUTDOWN or getmetatable(err) == Aborted then error(err, 0) end end

------------------------------------------------------------------ errors
-- StreamFailed: .cause (the error, its kind intact), .element, .stage.
function M.failed(cause, element, stage)
  if type(cause) == "table" and cause.kind == "StreamFailed" then return cause end
  local what = type(cause) == "table" and cause.kind and (tostring(cause.kind) .. ": " ..
    tostring(cause.message)) or tostring(cause)
  local e = core.error("StreamFailed", (stage and (stage .. ": ") or "") .. what)
  e.cause, e.element, e.stage = cause, element, stage
  return e
end

-- The StreamFailed of err raised in env's task: a stage called without a
-- pcall noted where it was (env.at_label, env.at_elem).
function M.failed_here(env, err)
  if type(err) == "table" and err.kind == "StreamFailed" then return err end
  return M.failed(err, env.at_elem, env.at_label)
end

-- A function's value nil: no element (Pekko fails a stream whose map
-- emits null with a NullPointerException, through the stage's decider).
function M.nil_element(label)
  return core.error("NilElement", label .. ": the function returned nil (an element may not be nil)")
end

function M.event(env, ev, fields)
  core.stream_event(env.path, ev, fields or {})
end

local function kind_of(err)
  if type(err) == "table" and err.kind then return err.kind, err.message end
  return "Error", tostring(err)
end
M.kind_of = kind_of

--------------------------------------------------------------- supervision
local words = { resume = true, restart = true, stop = true }

-- What st's decider says of err: "resume", "restart" or "stop".
local function decide(st, err)
  local d = st.decider
  if d == nil then return "stop" end
  if type(d) == "string" then return d end
  local ok, w = pcall(d, err)
  if ok and words[w] then return w end
  return "stop"
end

-- Calls fn(...) for element elem under st's supervision: returns true and
-- fn's result, or false when the element was dropped (resume, restart:
-- st.reset() first); raises StreamFailed on "stop".
function M.call(env, st, fn, elem, ...)
  local ok, v = pcall(fn, ...)
  if ok then return true, v end
  return M.decided(env, st, v, elem)
end

-- The decider's answer to err raised at elem: false (dropped) or a raise.
function M.decided(env, st, err, elem)
  local w = decide(st, err)
  if w == "stop" then error(M.failed(err, elem, st.label), 0) end
  if w == "restart" and st.reset then st.reset() end
  local kind, msg = kind_of(err)
  M.event(env, "stream_drop", { detail = st.label .. " " .. w, kind = kind, message = msg })
  return false
end

---------------------------------------------------------------- the router
-- A task reads its mailbox with tend.receive; each message of a stage
-- carries its stage id (sid) and goes to that stage's handler.
local Env = {}
Env.__index = Env

function M.env(sup, path, self, opts)
  return setmetatable({ sup = sup, path = path, self = self, handlers = {},
    sids = { n = 0 }, mine = {}, spawned = {}, opts = opts or {}, seq = { n = 0 },
    fibers = { n = 0 }, on_fiber = {} }, Env)
end

-- A child environment (a restart's inner stream): its own tasks.
function Env:sub()
  local e = setmetatable({}, { __index = self })
  e.spawned, e.mine, e.tags = {}, {}, {}
  return e
end

-- A new stage id (unique in the task) routed to handler.
function Env:sid(handler)
  self.sids.n = self.sids.n + 1
  local id = self.sids.n
  self.handlers[id] = handler
  self.mine[#self.mine + 1] = id
  return id
end

-- A name for a new stage task: prefix-N, unique in the stream.
function Env:task_name(prefix)
  self.seq.n = self.seq.n + 1
  return prefix .. "-" .. self.seq.n
end

-- Starts fn as a stage task of the stream (a child of its supervisor).
function Env:spawn(prefix, fn)
  local ref = core.stream_task(self.sup, self:task_name(prefix), fn)
  self.spawned[#self.spawned + 1] = ref
  return ref
end

-- Stops the tasks this environment started (a restart's old stream).
function Env:cancel()
  for _, r in ipairs(self.spawned) do if core.alive(r) then core.stop(r) end end
  for _, id in ipairs(self.mine) do self.handlers[id] = nil end -- late messages are dropped
  for _, tag in ipairs(self.tags or {}) do -- and late outcomes (the
    self.fibers[tag], self.on_fiber[tag] = nil, nil -- waits end now)
    core.fiber_drop(tag)
  end
  self.spawned, self.mine = {}, {}
  if self.tags then self.tags = {} end
end

local function got(...) return select("#", ...) > 0, ... end

-- A fiber of this task (map_async's calls, resumed with
-- core.fiber_resume(fiber, tag, ...)): its tag (unique in the task);
-- on(fiber) runs each time one of its waits ends (Env:dispatch).
function Env:fiber(fiber, on)
  local fibers = self.fibers
  fibers.n = fibers.n + 1
  local tag = fibers.n
  fibers[tag], self.on_fiber[tag] = fiber, on
  if self.tags then self.tags[#self.tags + 1] = tag end
  return tag
end

-- Continues the fibers whose waits are over, in the order they ended (a
-- fiber of a stage that was cancelled is dropped).
local fiber_take, fiber_ready = core.fiber_take, core.fiber_ready
local math_type = math.type
function Env:fibers_run()
  local fibers, on_fiber = self.fibers, self.on_fiber
  local tag = fiber_take()
  while tag do
    local fiber = fibers[tag]
    if fiber then on_fiber[tag](fiber) end
    tag = fiber_take()
  end
end

-- Routes one message (waiting at most `timeout`, nil: as long as it
-- takes, with no timer); false on a timeout.
function Env:dispatch(timeout)
  local any, msg
  if timeout then any, msg = got(core.receive(timeout)) else any, msg = true, core.receive() end
  if not any then return false end
  if msg == fiber_ready then self:fibers_run() return true end
  local t = type(msg)
  if t == "table" and msg[1] ~= nil then -- a stage's message: { sid, ... }
    local h = self.handlers[msg[1]]      -- (stream_async)
    if h then h(msg) end
  elseif self.on_demand and math_type(msg) == "integer" then -- a producer's
    self.on_demand(msg)                                       -- demand
  elseif t == "table" and msg.ctl then
    if self.on_ctl then self.on_ctl(msg) end
  elseif self.on_other then -- a process's lines, a connection's frames
    self.on_other(msg)
  end
  return true
end

-- Routes messages until pred() holds; false when `deadline` (a tend.now()
-- time) passes first.
function Env:wait(pred, deadline)
  while not pred() do
    local left = deadline and (deadline - core.now())
    if left and left <= 0 then return false end
    if not self:dispatch(left) and deadline then
      if pred() then return true end
      return false
    end
  end
  return true
end

local function never() return false end

-- Waits d seconds of the tend clock. In a stream's run task (env.wakes) it
-- reads its mailbox meanwhile, so a shutdown ends the wait (SHUTDOWN).
function Env:sleep(d)
  if self.wakes then self:wait(never, core.now() + d) else core.sleep(d) end
end

-- Lets the rest of the system run and reads what arrived, without
-- waiting (a long fused loop calls it now and then).
function Env:poll()
  while self:dispatch(0) do end
end

------------------------------------------------------------ materializing
-- parts: the blueprint's stages in order, each { name, build, prefix?,
-- decider? }. A stage with `prefix` (an asynchronous boundary, merge, zip,
-- grouped_within, ...) takes the parts before it (it runs them elsewhere);
-- the others take the stage below them. up0: the stage feeding a flow.
function M.materialize(env, parts, n, up0, base)
  n = n or #parts
  base = base or 0
  local j
  for i = n, 1, -1 do if parts[i].prefix then j = i break end end
  local up, from = up0, 1
  local function st(i)
    local p = parts[i]
    return { label = p.name .. "#" .. (i + base), decider = p.decider or env.opts.decider, index = i }
  end
  if j then
    if up0 then error("tend.stream: " .. parts[j].name .. " inside a flow that restarts is not supported", 0) end
    local prefix = table.move(parts, 1, j - 1, 1, {})
    up = parts[j].build(env, prefix, st(j))
    from = j + 1
  end
  for i = from, n do up = parts[i].build(env, up, st(i)) end
  return up
end

return M
