-- tend.stream's fused push chains (operator fusion without per-element
-- demand bookkeeping). The stages between the last pull stage (a source,
-- an asynchronous boundary, map_async, ...) and the end of a fused part
-- (the sink, or a boundary's outbox) that can run as pushes (map, filter,
-- take, drop, take_while, scan) are compiled into one chain of closures:
-- a driver pulls from the pull stage in batches and pushes each element
-- straight through the stage functions. A push returns nil (go on),
-- "stop" (complete: nothing more is pulled, as after take's last element)
-- or "full" (the receiver is full for now: pause, go on later). Where an
-- element failed is read from the stack when it fails (M.handler), not
-- noted per element.
local R = require "tend.stream_run"

local M = {}

-- The stage record R.materialize makes for parts[i].
local function stage(env, parts, i)
  local p = parts[i]
  return { label = p.name .. "#" .. i, decider = p.decider or env.opts.decider, index = i }
end

-- compile(env, parts, make_last) -> up, push: up, the pull stage of the
-- parts before their fusable tail (made first: boundaries start their
-- producers), then that tail compiled into a chain ending in the push
-- make_last() returns (with its name in a StreamFailed, if it may fail).
-- A scan's first element (its initial value) is pushed by M.start.
function M.compile(env, parts, make_last)
  local n = #parts
  local k = n + 1
  while k > 2 and parts[k - 1].fuse and not parts[k - 1].prefix do k = k - 1 end
  local up = R.materialize(env, parts, k - 1)
  env.pushes = env.pushes or {}
  env.starts = {}
  local last, last_label = make_last()
  local push = last
  if last_label then env.pushes[push] = last_label end
  for i = n, k, -1 do
    local st = stage(env, parts, i)
    local start
    push, start = parts[i].fuse(env, st, push)
    env.pushes[push] = st.label
    if start then env.starts[#env.starts + 1] = start end
  end
  return up, push
end

-- Pushes the initial elements of the chain's scans, the nearest to its end
-- first (as pulls would make them): "stop" when one was the last wanted.
function M.start(env)
  for _, s in ipairs(env.starts) do
    local r = s()
    if r then return r end
  end
end

-- Drives up into push: at most max elements pulled. Returns "done" (up
-- completed), the push's "stop" or "full", "idle" (nowait, and up has
-- nothing ready) or nil (max pulled, or 1 ms of the tend clock passed in a
-- stage that waits). A pull stage without its own driver gives one element
-- a call when nowait is false (it may wait: a tick, a throttle), none when
-- it is true (an element already waits in the receiver).
function M.drive(up, push, max, nowait)
  if up.drive then return up.drive(push, max, nowait) end
  if nowait then return "idle" end
  local ok, v = up.pull()
  if not ok then return "done" end
  return push(v)
end

-- The message handler of the xpcall around a fused part in env: the
-- innermost push of env's chain on the stack names the failing stage, its
-- first local is the element (else what a pull stage noted: env.at_*).
function M.handler(env)
  return function(err)
    if R.is_end(err) then return err end
    if type(err) == "table" and err.kind == "StreamFailed" then return err end
    local labels = env.pushes or {}
    local level = 2
    while true do
      local info = debug.getinfo(level, "f")
      if not info then break end
      local label = labels[info.func]
      if label then
        local _, v = debug.getlocal(level, 1)
        return R.failed(err, v, label)
      end
      level = level + 1
    end
    return R.failed_here(env, err)
  end
end

return M
