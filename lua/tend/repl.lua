-- tend.repl: the Lua side of the prompt (src/cli/repl.c drives it). A line
-- is compiled as lua.c does: first as `return <line>` (an expression prints
-- its values), then as a statement; a chunk that ends too early (<eof>)
-- waits for more lines. Compiled chunks run in the task /user/repl (the
-- loop below), so tend.ask, tend.sleep, tend.receive and probes work at the
-- prompt; messages sent to it wait in its mailbox (flush() shows them).
local core = require "tend.core"
local tend = require "tend"

local M = {}

local pending     -- the incomplete chunk so far
local host        -- what src/cli/repl.c gave: done, next_line

local HELP = [[
tend REPL: Lua 5.4 with actors running while you type.
  tend.spawn(factory, opts)  ref:send(msg)  tend.ask(ref, msg, timeout)
  tend.sleep(s)  tend.now()  tend.stop(ref)  tend.kill(ref)
  tree()        the supervision tree      ps()     the actors as rows
  stats()       counters                  describe(strategy_or_backoff)
  trace(true)   print events as they happen, trace(false) to stop
  watch(ref)    print when ref dies       kill(ref)
  tend.receive([timeout])  the next message sent to the REPL, and its sender
  flush()       print and drop the messages waiting for the REPL
  Ctrl-C stops the line that runs (or clears the one you type); Ctrl-D or
  tend.shutdown() stops every actor and leaves.]]

local function show(...)
  if select("#", ...) > 0 then print(...) end
end

-- A message in a few words: strings quoted, tables shown two levels deep.
local function inspect(v, depth)
  if type(v) == "string" then return string.format("%q", v) end
  if type(v) ~= "table" or getmetatable(v) ~= nil then return tostring(v) end
  if depth >= 2 then return "{...}" end
  local parts, n = {}, #v
  for i = 1, n do parts[#parts + 1] = inspect(v[i], depth + 1) end
  local keys = {}
  for k in pairs(v) do
    if not (math.type(k) == "integer" and k >= 1 and k <= n) then keys[#keys + 1] = k end
  end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  for _, k in ipairs(keys) do
    local key = type(k) == "string" and k:match("^[%a_][%w_]*$") and k or "[" .. inspect(k, 2) .. "]"
    parts[#parts + 1] = key .. " = " .. inspect(v[k], depth + 1)
  end
  return "{" .. table.concat(parts, ", ") .. "}"
end

-- The helpers, also reachable as tend.*.
local helpers = {
  help = function() print(HELP) end,
  tree = function() io.write("") print((tend.tree():gsub("\n$", ""))) end,
  ps = function()
    for _, r in ipairs(tend.ps()) do
      print(string.format("%-40s %-10s restarts=%d mailbox=%d%s", r.path, r.state, r.restarts, r.mailbox,
        r.busy and string.format(" busy=%.1fs", r.busy) or ""))
    end
  end,
  stats = function()
    local s = tend.stats()
    local keys = {}
    for k in pairs(s) do keys[#keys + 1] = k end
    table.sort(keys)
    for _, k in ipairs(keys) do print(string.format("%-14s %d", k, s[k])) end
  end,
  describe = function(x) print(tend.describe(x)) end,
  kill = function(ref) tend.kill(ref) end,
  -- as the Erlang shell's flush(): print and drop what waits in the mailbox
  flush = function()
    while true do
      local got = table.pack(tend.receive(0))
      if got.n == 0 then return end
      print(string.format("got %s from %s", inspect(got[1], 0),
        got[2] and got[2]:path() or "nobody"))
    end
  end,
  trace = function(on)
    if on then
      core.trace(function(e)
        print(string.format("[trace] t=%.3f %s %s%s%s", e.t, e.path, e.ev,
          e.kind and (" " .. e.kind .. ": " .. tostring(e.message)) or "",
          e.reason and (" " .. e.reason) or ""))
      end)
    else
      core.trace(false)
    end
  end,
  watch = function(ref)
    tend.spawn(function(ctx)
      ctx:watch(ref)
      return function(msg, ctx)
        local reason = msg.reason
        print(string.format("%s died: %s", tostring(ref),
          type(reason) == "table" and (reason.kind .. ": " .. tostring(reason.message)) or tostring(reason)))
        return tend.stopped
      end
    end)
  end,
}

-- The task /user/repl: waits for a line's chunk, runs it, prints what it
-- returned (or its error), gives the prompt back; again.
local function loop()
  while true do
    local chunk = host.next_line()
    if chunk then
      local results = table.pack(xpcall(chunk, function(e)
        if type(e) == "table" and e.kind == "Interrupted" then return "interrupted" end
        local tb = debug.traceback(type(e) == "table" and tostring(e) or e, 2)
        return (tb:gsub("\n\t%[C%]: in function 'xpcall'.*$", "")) -- the REPL's own frames
      end))
      if results[1] then
        show(table.unpack(results, 2, results.n))
      else
        print(results[2])
      end
    end
    host.done()
  end
end

-- fns: the C side of the prompt: done (the prompt comes back), next_line
-- (the task waits for the next chunk). print already writes above the
-- prompt. Returns the task's function (C spawns it as /user/repl).
function M.start(fns)
  host = fns
  _G.tend = tend
  for name, f in pairs(helpers) do
    _G[name] = f
    if tend[name] == nil then tend[name] = f end
  end
  print(string.format("tend %s (%s); help() for help, Ctrl-D to leave", tend.version, _VERSION))
  return loop
end

-- A line typed -> more (the chunk goes on), chunk (compiled: C hands it to
-- /user/repl, which calls done() when it is done; nil when nothing runs).
function M.line(text)
  pending = pending and (pending .. "\n" .. text) or text
  if not pending:match("%S") then pending = nil return false, nil end
  local chunk, err = load("return " .. pending, "=stdin")
  if not chunk then chunk, err = load(pending, "=stdin") end
  if not chunk then
    if err:match("<eof>$") then return true, nil end
    pending = nil
    print(err)
    return false, nil
  end
  pending = nil
  return false, chunk
end

function M.reset() pending = nil end

local function sorted_keys(t, prefix, out, seen)
  for k in pairs(t) do
    if type(k) == "string" and k:match("^[%a_][%w_]*$") and k:sub(1, #prefix) == prefix and not seen[k] then
      seen[k] = true
      out[#out + 1] = k
    end
  end
end

-- Completion of `name`, `a.b.na` or `obj:me`: globals, or the fields of
-- the table (or the methods behind a userdata's __index) the path names.
function M.complete(text)
  local base, sep, partial = text:match("^(.-)([%.:])([%w_]*)$")
  local candidates, seen = {}, {}
  local obj
  if base then
    obj = _G
    for name in base:gmatch("[^%.]+") do
      if type(obj) ~= "table" and type(obj) ~= "userdata" then obj = nil break end
      local ok, v = pcall(function() return obj[name] end)
      obj = ok and v or nil
      if obj == nil then break end
    end
  else
    obj, partial, base, sep = _G, text, "", ""
  end
  if obj == nil then return {} end
  if type(obj) == "table" then sorted_keys(obj, partial, candidates, seen) end
  local mt = getmetatable(obj)
  if type(mt) == "table" and type(mt.__index) == "table" then
    sorted_keys(mt.__index, partial, candidates, seen)
  end
  table.sort(candidates)
  for i, k in ipairs(candidates) do candidates[i] = base .. sep .. k end
  return candidates
end

return M
