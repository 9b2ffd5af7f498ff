-- A stream source as an HTTP body (tend.http.serve's pull contract: pull()
-- called in the request's actor, one at a time, a string or nil at the
-- end). The stream starts at the first pull and runs under the request's
-- actor (its owner: a client that leaves stops that actor, which cancels
-- the stream); its sink hands one element at a time to a gate actor that
-- the pulls ask, so a slow client holds the whole stream back. Elements
-- are written with tostring, unless `format` (an SSE event for
-- text/event-stream: "data: <element>\n\n") is given.
local core = require "tend.core"
local R = require "tend.stream_run"

return function(S, Blueprint)
  -- The gate: one element at a time between the stream's sink (asks that
  -- wait for room) and the pulls (asks that wait for an element).
  local function gate(ctx, owner)
    ctx:watch(owner)
    local slot, done, err = nil, false, nil
    return function(m, ctx)
      if type(m) == "table" and m.elem ~= nil then
        if slot ~= nil then ctx:stash() return end
        slot = m.elem
        ctx:reply(true)
        ctx:unstash_all()
      elseif m == "pull" then
        if slot ~= nil then
          ctx:reply({ v = slot })
          slot = nil
          ctx:unstash_all()
        elseif done then
          ctx:reply({ done = true, err = err })
          return core.stopped
        else
          ctx:stash()
        end
      elseif type(m) == "table" and m.ctl_done then
        done = true
        if not m.ok then err = m.v end
        ctx:unstash_all()
      elseif type(m) == "table" and m.tend == "terminated" then -- the owner
        return core.stopped
      end
    end
  end

  local function sse(v) return "data: " .. tostring(v) .. "\n\n" end

  -- The body of a response whose headers are these: server-sent events
  -- for content-type text/event-stream, else each element as a string.
  function Blueprint:as_body_for(headers)
    for k, v in pairs(headers) do
      if type(k) == "string" and k:lower() == "content-type" and tostring(v):match("^text/event%-stream") then
        return self:as_body(sse)
      end
    end
    return self:as_body()
  end

  -- source:as_body([format]) -> pull function for tend.http.serve's body.
  function Blueprint:as_body(format)
    if self.kind ~= "source" then error("tend.stream:as_body: expected a source", 2) end
    if format ~= nil and type(format) ~= "function" then
      error("tend.stream:as_body: format: expected a function (element) -> string, got " .. type(format), 2)
    end
    local source, g, h = self, nil, nil
    return function()
      if not g then
        g = core.spawn(gate, { stash = 64, args = { core.self() } })
        local sink = S.sink.foreach(function(v) core.ask(g, { elem = v }, R.FOREVER) end)
        h = source:run_async(sink, { notify = g })
      end
      local ok, r = pcall(core.ask, g, "pull", R.FOREVER)
      if not ok then
        -- the answer's actor is stopping (its client left, its server
        -- stops): its children, the gate among them, went first; the
        -- body ends there, as a cancel, not as a failure
        if type(r) == "table" and r.kind == "AskFailed" and r.cause == "shutdown" then
          return nil
        end
        error(r, 0)
      end
      if r.done then
        if r.err ~= nil then error(r.err, 0) end
        pcall(h.await, h) -- the finished stream's supervisor goes
        return nil
      end
      if format then return format(r.v) end
      return tostring(r.v)
    end
  end
end
