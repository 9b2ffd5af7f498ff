-- tend.repl: the Lua side of the prompt (src/cli/repl.c drives it). A line
-- is compiled as lua.c does: first as `return <line>` (an expression prints
-- its values), then as a statement; a chunk that ends too early (<eof>)
-- waits for more lines. Compiled chunks run in the task /user/repl (the
-- loop below), so tend.ask, tend.sleep, tend.receive and probes work at the
-- prompt; messages sent to it wait in its mailbox (flush() shows them).
local core = require "tend.core"
local K = require "tend.kinds" -- the error kinds (src/runtime/core/errkind.h)
local internal = require "tend.internal"
local tend = require "tend"
local pretty = require "tend.pretty"
local helpdoc = require "tend.help"

local M = {}

local pending     -- the incomplete chunk so far
local host        -- what src/cli/repl.c gave: done, next_line

local HELP = [[
tend REPL: Lua 5.4 with actors running while you type.
  tend.spawn(factory, opts)  ref:send(msg)  tend.ask(ref, msg, timeout)
  tend.sleep(s)  tend.now()  tend.stop(ref)  tend.kill(ref)
  tree()        the supervision tree      ps()     the actors as rows
  nodes()       the nodes up (--node)     tree("b") node b's tree
  stats()       counters                  describe(strategy_or_backoff)
  help(fn)      help on one function, as help(tend.spawn); help("ctx:reply"),
                help("tend.SpawnOpts"); all of them: docs/reference.md
  reload("mod") load mod again; its actors move to the new code
  inspect(ref)  an actor's state (its behavior's upvalues or fields,
                mailbox, current message, restarts, timers, watchers)
  trace(true)   print events as they happen, trace(false) to stop
                (trace{ internal = true }: tend's own tasks too)
  watch(ref)    print when ref dies       kill(ref)
  tend.receive([timeout])  the next message sent to the REPL, and its sender
  flush()       print and drop the messages waiting for the REPL
  Ctrl-C stops the line that runs (or clears the one you type); Ctrl-D or
  tend.shutdown() stops every actor and leaves.]]

-- A value that a helper printed already (tree(), ps(), stats() print and
-- return it): the line that returns it prints it no second time.
local printed

local function show(...)
  local n = select("#", ...)
  if n == 0 then return end
  if n == 1 and printed ~= nil and rawequal((...), printed) then return end
  print(pretty.format_all(...))
end

-- Prints v and returns it (for the helpers that show what they return).
local function shown(text, v)
  print(text)
  printed = v
  return v
end

-- The helpers, also reachable as tend.*.
local helpers = {
  help = function(...)
    if select("#", ...) == 0 then print(HELP) else print(helpdoc.text((...), M.helpers)) end
  end,
  tree = function(node)
    local text = node and tend.node.tree(node) or tend.tree()
    return shown((text:gsub("\n$", "")), text)
  end,
  nodes = function()
    local list = tend.node.list()
    local me = tend.node.name()
    return shown(me and string.format("this node: %s; up: %s", me,
      #list > 0 and table.concat(list, ", ") or "none") or "this process is no node", list)
  end,
  ps = function()
    local rows, lines = tend.ps(), {}
    for i, r in ipairs(rows) do
      lines[i] = string.format("%-40s %-10s restarts=%d mailbox=%d%s%s", r.path, r.state, r.restarts, r.mailbox,
        r.busy and string.format(" busy=%.1fs", r.busy) or "", r.scheduler and (" sched=" .. r.scheduler) or "")
    end
    return shown(table.concat(lines, "\n"), rows)
  end,
  stats = function()
    local s, lines = tend.stats(), {}
    local keys = {}
    for k in pairs(s) do keys[#keys + 1] = k end
    table.sort(keys)
    for i, k in ipairs(keys) do lines[i] = string.format("%-14s %d", k, s[k]) end
    return shown(table.concat(lines, "\n"), s)
  end,
  describe = function(x) print(tend.describe(x)) end,
  -- the browser observer (tend.observe): prints its URL, with the token
  observe = function(opts)
    local h = tend.observe(opts)
    print("observer at " .. h.url)
    return h
  end,
  -- Erlang's l(Mod): says which actors move (at their next message) and
  -- which cannot; each move says how it went when it happens
  reload = function(mod)
    local code = require "tend.code"
    code.on_move = function(m)
      print(m.how == "code_change" and ("reload: " .. m.path .. " moved to the new code (code_change)")
        or ("reload: " .. m.path .. " restarts with the new code (CodeChange: " .. m.reason .. ")"))
    end
    local ok, r = pcall(tend.reload, mod)
    if not ok then -- the error at the prompt's line, not at this file's
      error((tostring(r):gsub("^%[tend%][^:]*:%d+: ", "")), 2)
    end
    local lines = { string.format("reload: %s from %s: %d actor(s) move at their next message%s",
      r.module, r.file, #r.moving, #r.moving > 0 and (": " .. table.concat(r.moving, " ")) or "") }
    for _, f in ipairs(r.failed) do lines[#lines + 1] = "reload: not moved: " .. f.path .. ": " .. f.reason end
    return shown(table.concat(lines, "\n"), r)
  end,
  -- OTP's sys:get_state; the prompt prints the value it returns
  inspect = function(ref) return tend.inspect(ref) end,
  kill = function(ref) tend.kill(ref) end,
  -- as the Erlang shell's flush(): print and drop what waits in the mailbox
  flush = function()
    while true do
      local got = table.pack(tend.receive(0))
      if got.n == 0 then return end
      print(string.format("got %s from %s", pretty.format(got[1]),
        got[2] and got[2]:path() or "nobody"))
    end
  end,
  -- as the scenario timeline: the directive with its clause and window,
  -- the restart count, the backoff delay
  -- trace{ internal = true }: tend's own tasks too (as --trace-internal)
  trace = function(on)
    if type(on) == "table" then core.trace(on) end
    if on then
      local describe = require("tend.scenario").describe
      core.trace(function(e)
        print((string.format("[trace] t=%.3f %s %s %s", e.t, e.path, e.ev, describe(e)):gsub(" $", "")))
      end)
    else
      core.trace(false)
    end
  end,
  -- a task of tend's own: out of trace(true) and tree()
  watch = function(ref)
    internal.after(0, function()
      tend.watch(ref)
      while true do
        local msg = tend.receive()
        if type(msg) == "table" and msg.tend == "terminated" then
          local reason = msg.reason
          print(string.format("%s died: %s", tostring(ref),
            type(reason) == "table" and (reason.kind .. ": " .. tostring(reason.message)) or tostring(reason)))
          return
        end
      end
    end)
  end,
}

-- The task /user/repl: waits for a line's chunk, runs it, prints what it
-- returned (or its error), gives the prompt back; again.
local function loop()
  require("tend.observe.live").from_cli() -- tend --observe ADDR (no script)
  while true do
    local chunk = host.next_line()
    if chunk then
      printed = nil
      local results = table.pack(xpcall(chunk, function(e)
        if type(e) == "table" and e.kind == K.Interrupted then return "interrupted" end
        local tb = debug.traceback(helpdoc.suggest(type(e) == "table" and tostring(e) or e), 2)
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
M.helpers = helpers -- (for the specs)

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
