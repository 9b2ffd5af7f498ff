-- tend.stream's sources of the outside: a process's stdout lines and a
-- TCP connection's frames. Each runs in a producer task of its own (an
-- asynchronous boundary follows it): its mailbox is read only when the
-- stage below asks for an element, so a fast program or peer fills that
-- mailbox, and tend then stops reading its pipe or socket (at 1000
-- messages: docs/guide/processes.md): the program blocks on its pipe.
-- The process or connection ends with the stream (a child of its
-- supervisor, or closed with its task).
local core = require "tend.core"
local R = require "tend.stream_run"

local M = {}

-- One message at a time from the task's mailbox, as pull asks.
local function reader(env, st, on_msg)
  local got, head, tail, over, err = {}, 1, 0, false, nil
  env.on_other = function(m)
    local kind, v = on_msg(m)
    if kind == "elem" then tail = tail + 1 got[tail] = v
    elseif kind == "done" then over = true
    elseif kind == "fail" then err = v end
  end
  return { pull = function()
    env:wait(function() return tail >= head or over or err ~= nil end)
    if tail >= head then
      local v = got[head]
      got[head] = nil
      head = head + 1
      return true, v
    end
    if err ~= nil then error(R.failed(err, nil, st.label), 0) end
    return false
  end }
end

function M.lines(spec)
  return function(env, _, st)
    local process = require "tend.process"
    local s = {}
    for k, v in pairs(spec) do s[k] = v end
    s.to, s.stdout = env.self, "lines"
    local ok, factory = pcall(process, s) -- checked when the blueprint was made
    if not ok then error(R.failed(factory, nil, st.label), 0) end
    local ref = core.start_child(env.sup, factory, { name = env:task_name("process") })
    env.spawned[#env.spawned + 1] = ref
    core.watch(ref)
    return reader(env, st, function(m)
      if type(m) ~= "table" then return end
      if m.tend == "stdout" and m.line then return "elem", m.line end
      if m.tend == "terminated" then
        if m.reason == "normal" then return "done" end
        return "fail", m.reason
      end
    end)
  end
end

function M.tcp(opts)
  return function(env, _, st)
    local tcp = require "tend.tcp"
    local o = {}
    for k, v in pairs(opts) do o[k] = v end
    o.to = env.self
    local conn = tcp.connect(o)
    return reader(env, st, function(m)
      if type(m) ~= "table" then return end
      if m.tend == "data" then return "elem", m.data end
      if m.tend == "closed" then
        if m.reason == "eof" or m.reason == "closed" or m.reason == "normal" then return "done" end
        return "fail", core.error("NotConnected", tostring(m.reason))
      end
    end), conn
  end
end

return M
