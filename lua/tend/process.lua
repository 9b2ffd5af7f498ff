-- tend.process: OS processes as actors of the tree. tend.process{...}
-- checks its options (in C, core.process_check) and returns a factory; the
-- actor it builds owns one program (core.process_spawn: uv_spawn through
-- tend's exec helper), is `starting` until the program is ready, turns
-- the program's exit into a normal stop (status 0) or a failure
-- (ProcessExit, ProcessSignal), and stops the program in its post_stop:
-- the kill signal, then SIGKILL after `shutdown` seconds. Its output goes
-- to `to` as messages or, without `to`, through to tend's own stdout and
-- stderr (unless stdout/stderr say otherwise). Under the
-- virtual clock a simulated process (`sim`) takes the program's place.
-- tend.process.run is os.execute / io.popen for actors: it waits by
-- yielding, so other actors run meanwhile.
local core = require "tend.core"
local K = require "tend.kinds" -- the error kinds (src/runtime/core/errkind.h)

local M = {}

local sims = setmetatable({}, { __mode = "k" }) -- ref -> sim state

-- Checks options with the C checker; raises at the caller of the caller.
local function check(opts, fn, cmd)
  local ok, spec = pcall(core.process_check, opts, fn, cmd)
  if not ok then error(spec, 3) end
  return spec
end

local function program_name(spec)
  if type(spec.cmd) == "string" then return spec.cmd end -- a shell command
  if spec.argv then return spec.argv[1] end
  if type(spec.cmd) == "table" and type(spec.cmd[1]) == "string" then return spec.cmd[1] end
  return "sim"
end

-- The error of an exit that was not a clean one.
-- Raises ReadyTimeout with msg, with no position: the place is the
-- program's, not a line of this file.
local function ready_timeout(msg)
  local e = core.error(K.ReadyTimeout, msg)
  e.where = nil
  error(e, 0)
end

local function exit_error(name, status, signal, core_dump, before_ready)
  local e
  local when = before_ready and " before it was ready" or ""
  if signal then
    e = core.error(K.ProcessSignal, string.format("'%s' was killed by signal %s%s%s",
      name, signal, core_dump and " (core dumped)" or "", when))
    e.signal, e.core_dump = signal, core_dump and true or false
  else
    e = core.error(K.ProcessExit, string.format("'%s' exited with status %d%s",
      name, status, when))
    e.status = status
  end
  return e
end

local function is_handle(x)
  local mt = type(x) == "userdata" and getmetatable(x)
  return type(mt) == "table" and rawget(mt, "__name") == "tend.Process"
end

-- The kill sequence: the kill signal, `shutdown` seconds, then SIGKILL.
local function stop_program(h, spec, name)
  if h:done() then return end
  h:signal(spec.kill_signal_name)
  if h:wait(spec.shutdown) ~= "exit" then
    core.log("warn", "'%s' (pid %d) did not exit within %g s of SIG%s; SIGKILL",
      name, h:pid(), spec.shutdown, spec.kill_signal_name)
    h:signal("KILL")
    h:wait(5)
  end
end

-- A message to a process actor (real or simulated): d is its driver.
local function handle_message(d, msg, ctx)
  if msg == "pid" then ctx:reply(d.pid()) return end
  if type(msg) ~= "table" then return core.unhandled end
  if msg.write ~= nil then
    if type(msg.write) ~= "string" then
      ctx:log("warn", "write: expected a string, got %s", type(msg.write))
      return core.unhandled
    end
    return d.write(msg.write)
  elseif msg.close_stdin then
    return d.close_stdin()
  elseif msg.signal ~= nil then
    if type(msg.signal) ~= "string" or not core.signal_number(msg.signal) then
      ctx:log("warn", "signal: expected a signal name such as \"HUP\", got %s",
        tostring(msg.signal))
      return core.unhandled
    end
    return d.signal(msg.signal)
  end
  return core.unhandled
end

-- The ref that gets the output as messages: `to`, else the parent. Raises
-- when "lines" or "chunks" would go to the /user guardian (tend.spawn at
-- top level), which takes no messages: the output would be lost.
local function output_to(spec, ctx)
  if spec.to then return spec.to end
  for _, kind in ipairs { "stdout", "stderr" } do
    local out = spec[kind]
    if (out == "lines" or out == "chunks") and ctx.parent:path() == "/user" then
      error(string.format("tend.process: option 'to': needed with %s = \"%s\" when the "
        .. "program is spawned with tend.spawn (its parent, the /user guardian, takes no "
        .. "messages); give to = tend.self() or another ref, or leave %s out to pass the "
        .. "output through", kind, out, kind), 0)
    end
  end
  return ctx.parent
end

-- ------------------------------------------------------------ real

local function real_factory(spec)
  local name = program_name(spec)
  return function(ctx)
    local h = core.process_spawn(spec, output_to(spec, ctx), false)
    if spec.ready_after then
      h:wait(spec.ready_after) -- an exit meanwhile is seen below
    elseif spec.ready_line or spec.ready_tcp then
      local r = h:wait(spec.ready_timeout, true)
      if r == "timeout" then
        stop_program(h, spec, name)
        ready_timeout(string.format("'%s' was not ready within %g s (%s)",
          name, spec.ready_timeout, spec.ready_line and ("ready.line '" .. spec.ready_line .. "'")
          or ("ready.tcp " .. spec.ready_tcp)))
      end
    end
    local waited = spec.ready_after or spec.ready_line or spec.ready_tcp
    if waited and h:done() then -- it died before it was ready
      local status, signal, core_dump = h:status()
      error(exit_error(name, status, signal, core_dump, true), 0)
    end
    h:mark_ready() -- (without a condition, an exit already known is the token's)
    local d = {
      pid = function() return h:pid() end,
      write = function(data)
        local ok, err = h:write(data)
        if not ok then ctx:log("warn", "write to the stdin of '%s': %s", name, err) end
      end,
      close_stdin = function() h:close_stdin() end,
      signal = function(sig) h:signal(sig) end,
    }
    return {
      receive = function(_, msg, c)
        if msg == h then -- the exit token: the program is gone
          local status, signal, core_dump = h:status()
          if not signal and status == 0 then return core.stopped end
          error(exit_error(name, status, signal, core_dump), 0)
        end
        if is_handle(msg) then return end -- an earlier incarnation's
        return handle_message(d, msg, c)
      end,
      post_stop = function() stop_program(h, spec, name) end,
    }
  end
end

-- ------------------------------------------------------------ sim

local sim_count = 0

local function sim_factory(spec)
  local name = program_name(spec)
  return function(ctx)
    local to = output_to(spec, ctx)
    sim_count = sim_count + 1
    local pid = 10000 + sim_count -- made-up, deterministic
    local st = { ready = false, exited = false, input = {}, closed = false,
                 reading = false, seq = 0, pending = nil, handler = nil }
    local started = core.now()
    local co
    local function send(kind, text)
      local out = spec[kind] or (spec.to and "lines" or "pass") -- as a real one
      if out == "log" then ctx:log(kind == "stderr" and "warn" or "info", "%s", text)
      elseif out == "lines" or out == "chunks" then
        to:send({ tend = kind, [out == "lines" and "line" or "chunk"] = text })
      elseif out == "pass" or out == "inherit" then
        core.process_pass(kind == "stderr", text)
      end
    end
    local function exit_with(status, signal)
      if st.exited then return end
      st.exited, st.status, st.signal = true, status, signal
    end
    local p = { pid = pid }
    function p:print(...)
      local line = table.concat({ ... }, "\t")
      if spec.ready_line and not st.ready and line:find(spec.ready_line) then st.hit = true end
      send("stdout", line)
    end
    function p:eprint(...) send("stderr", table.concat({ ... }, "\t")) end
    local function in_sim(what)
      if coroutine.running() ~= co then
        error("p:" .. what .. ": only in the sim function itself (not in a signal handler)", 3)
      end
    end
    function p:sleep(s)
      in_sim("sleep")
      if type(s) ~= "number" or s < 0 then error("p:sleep: expected seconds >= 0, got " .. tostring(s), 2) end
      coroutine.yield({ sleep = s })
    end
    function p:read()
      in_sim("read")
      return coroutine.yield({ read = true })
    end
    function p:exit(status)
      status = status or 0
      if math.type(status) ~= "integer" or status < 0 or status > 255 then
        error("p:exit: expected a status 0-255, got " .. tostring(status), 2)
      end
      exit_with(status, nil)
      if coroutine.running() == co then coroutine.yield({ exit = true }) end
    end
    function p:die(sig)
      if not core.signal_number(tostring(sig)) then
        error("p:die: expected a signal name such as \"SEGV\", got " .. tostring(sig), 2)
      end
      exit_with(nil, (sig:gsub("^SIG", "")))
      if coroutine.running() == co then coroutine.yield({ exit = true }) end
    end
    function p:on_signal(fn)
      if type(fn) ~= "function" then error("p:on_signal: expected a function, got " .. type(fn), 2) end
      st.handler = fn
    end
    co = coroutine.create(function() spec.sim(p) exit_with(0, nil) end)

    -- Runs the sim until it waits; returns what it waits for.
    local function step(value)
      if st.exited then return "exit" end
      local ok, req = coroutine.resume(co, value)
      if not ok then
        ctx:log("warn", "simulated '%s' raised: %s", name, tostring(req))
        exit_with(1, nil)
      end
      if st.exited or coroutine.status(co) == "dead" then return "exit" end
      if req.sleep then return "sleep", req.sleep end
      if req.read then return "read" end
      return "exit"
    end
    local function signal(sig)
      sig = sig:gsub("^SIG", "")
      if sig == "KILL" then exit_with(nil, "KILL")
      elseif sig == "STOP" or sig == "CONT" then return
      elseif st.handler then
        local ok, err = pcall(st.handler, sig)
        if not ok then ctx:log("warn", "simulated '%s' signal handler raised: %s", name, tostring(err)) end
      elseif not (sig == "CHLD" or sig == "WINCH" or sig == "URG") then
        exit_with(nil, sig)
      end
    end
    local function report_exit()
      core.process_event(ctx, "exit", { pid = pid, status = st.status, signal = st.signal })
    end
    sims[ctx.self] = st
    core.process_cover(ctx, spec.shutdown)
    core.process_event(ctx, "spawn_os", { pid = pid, argv0 = name })

    -- Starting: the sim runs here (ctx:sleep) until it is ready.
    local what, arg = nil, nil
    local need_step = spec.ready_line or spec.ready_after
    local deadline = started + (spec.ready_after or spec.ready_timeout)
    while need_step and not st.ready do
      what, arg = step(st.pending_value)
      st.pending_value = nil
      if spec.ready_line and st.hit then st.ready = true break end
      if what == "exit" then break end
      local left = deadline - core.now()
      local wait = what == "sleep" and arg or math.huge
      if wait >= left then
        ctx:sleep(left)
        if spec.ready_after then
          st.ready = true
          if what == "sleep" then st.resume_at = core.now() + (wait - left) end
          break
        end
        signal(spec.kill_signal_name)
        if not st.exited then ctx:sleep(spec.shutdown) exit_with(nil, "KILL") end
        report_exit()
        ready_timeout(string.format("'%s' was not ready within %g s (ready.line '%s')",
          name, spec.ready_timeout, spec.ready_line))
      end
      ctx:sleep(wait)
      what = nil
    end
    if st.exited then
      report_exit()
      error(exit_error(name, st.status, st.signal, false, true), 0)
    end
    st.ready = true
    core.process_event(ctx, "ready", {})

    local wake = {} -- the private message that resumes a sleep
    local function arm(s)
      st.seq = st.seq + 1
      ctx:after(s, { [wake] = st.seq })
    end
    -- After a step: arm its sleep, or finish when it exited.
    local function after_step(w, a)
      if w == "sleep" then arm(a)
      elseif w == "read" then
        if #st.input > 0 then return after_step(step(table.remove(st.input, 1))) end
        if st.closed then return after_step(step(nil)) end
        st.reading = true
      end
    end
    local function finish()
      report_exit()
      if st.signal == nil and st.status == 0 then return core.stopped end
      error(exit_error(name, st.status, st.signal, false), 0)
    end
    if st.resume_at then arm(st.resume_at - core.now())
    elseif what == "sleep" then arm(arg)
    elseif what == "read" then st.reading = true
    else ctx.self:send({ [wake] = st.seq }) end -- runs as soon as it is ready
    local d = {
      pid = function() return pid end,
      write = function(data)
        if st.closed then return end
        if st.reading then st.reading = false after_step(step(data))
        else st.input[#st.input + 1] = data end
      end,
      close_stdin = function()
        st.closed = true
        if st.reading then st.reading = false after_step(step(nil)) end
      end,
      signal = signal,
    }
    return {
      receive = function(_, msg, c)
        if type(msg) == "table" and msg[wake] ~= nil then
          if msg[wake] == st.seq then after_step(step()) end
        else
          local r = handle_message(d, msg, c)
          if not st.exited then return r end
        end
        if st.exited then return finish() end
      end,
      post_stop = function()
        if st.exited then return end
        signal(spec.kill_signal_name)
        if not st.exited then
          ctx:sleep(spec.shutdown)
          if not st.exited then
            ctx:log("warn", "simulated '%s' did not exit within %g s of SIG%s; SIGKILL",
              name, spec.shutdown, spec.kill_signal_name)
            exit_with(nil, "KILL")
          end
        end
        report_exit()
      end,
    }
  end
end

-- ------------------------------------------------------------ the API

-- tend.process{ cmd = {...}, ... } -> a factory for tend.spawn & co.
local function process(opts)
  if type(opts) ~= "table" then
    error("tend.process: options: expected a table { cmd = {...}, ... }, got " .. type(opts), 2)
  end
  local spec = check(opts, "tend.process")
  if spec.sim and (core.virtual_time() or not spec.argv) then return sim_factory(spec) end
  return real_factory(spec)
end

-- tend.process.run(cmd, opts) -> { status, signal, core_dump, stdout,
-- stderr, timed_out }: runs cmd and waits for it (yielding).
function M.run(cmd, opts)
  if cmd == nil then
    error("tend.process.run: cmd: expected a list of strings (or a string with shell = true), got nil", 2)
  end
  if type(cmd) == "string" and (opts == nil or (type(opts) == "table" and opts.shell == nil)) then
    local copy = { shell = true } -- a string is a shell command line
    for k, v in pairs(opts or {}) do copy[k] = v end
    opts = copy
  end
  local spec = check(opts, "tend.process.run", cmd)
  local h = core.process_spawn(spec, nil, true)
  if spec.input then
    h:write(spec.input)
    h:close_stdin()
  end
  local timed_out = false
  if h:wait(spec.timeout) ~= "exit" then
    timed_out = true
    stop_program(h, spec, program_name(spec))
  end
  local status, signal, core_dump = h:status()
  local out, err = h:collected()
  return { status = status, signal = signal, core_dump = core_dump,
           stdout = out, stderr = err, timed_out = timed_out, pid = h:pid() }
end

-- Is ref a simulated process? (tend.chaos.signal)
function M.is_sim(ref) return sims[ref] ~= nil end

return setmetatable(M, { __call = function(_, opts) return process(opts) end })
