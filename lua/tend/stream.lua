-- tend.stream: Akka Streams in Lua. A blueprint (a source, flows, a sink)
-- is immutable: each method returns a new one, and running one twice runs
-- it twice. Running it makes a supervisor /user/stream-N (or its name)
-- whose children run the stages (stream_run.lua); the caller waits for the
-- sink's value as for an ask. The operators: stream_sources, stream_flows,
-- stream_async, stream_sinks, stream_restart.
local core = require "tend.core"
local R = require "tend.stream_run"
local src = require "tend.stream_sources"
local flows = require "tend.stream_flows"
local async = require "tend.stream_async"
local sinks = require "tend.stream_sinks"
local restart = require "tend.stream_restart"
local io_src = require "tend.stream_io"
local backoff = require "tend.backoff"

local S = { sink = {} }

local Blueprint = {}
Blueprint.__index = Blueprint
Blueprint.__name = "tend.stream"
local Sink = {}
Sink.__index = Sink
Sink.__name = "tend.stream.sink"

local function shown(v)
  if type(v) == "string" then return ("%q"):format(v) end
  if type(v) == "table" or type(v) == "function" or type(v) == "userdata" then return "a " .. type(v) end
  return tostring(v)
end

-- The level (for error) of the first caller outside tend.stream's own
-- files: a bad argument is reported at the user's line.
local function user_level()
  local level = 3
  while true do
    local info = debug.getinfo(level, "S")
    if not info then return 1 end
    if not info.source:find("tend/stream", 1, true) then return level - 1 end
    level = level + 1
  end
end

local function bad(fn, arg, expected, got)
  error(("tend.stream.%s: %s: expected %s, got %s"):format(fn, arg, expected, shown(got)), user_level())
end

local function need(fn, arg, ok, expected, got)
  if not ok then bad(fn, arg, expected, got) end
end

-- Each key of opts must be in keys (listed in `expected`).
local function known(fn, opts, keys, expected)
  for k in pairs(opts) do
    if not keys[k] then bad(fn, "options", expected, k) end
  end
end

local function is_int(n, min) return math.type(n) == "integer" and n >= min end
local function is_pos(n) return type(n) == "number" and n > 0 and n == n end

local function blueprint(parts, kind)
  return setmetatable({ parts = parts, kind = kind }, Blueprint)
end

-- A new blueprint: self's parts and one more stage.
-- fuse: the stage as a push (stream_fuse.lua), for those that have one.
local function add(self, name, build, prefix, fuse)
  local parts = table.move(self.parts, 1, #self.parts, 1, {})
  parts[#parts + 1] = { name = name, build = build, prefix = prefix, fuse = fuse }
  local b = blueprint(parts, self.kind)
  b.queue = self.queue
  return b
end

local function is_source(v)
  return getmetatable(v) == Blueprint and v.kind == "source"
end

-- A source blueprint made into a stage in env.
local function materialize_source(env, s, fn)
  if not is_source(s) then
    error(R.failed(core.error("BadArg", fn .. ": expected a source, got " .. shown(s))), 0)
  end
  return R.materialize(env, s.parts)
end

local function source(name, build)
  return blueprint({ { name = name, build = build } }, "source")
end

------------------------------------------------------------------ sources
function S.from(list)
  need("from", "list", type(list) == "table", "a table (list)", list)
  local copy = table.move(list, 1, #list, 1, {})
  return source("from", src.from(copy))
end

function S.range(a, b, step)
  step = step or 1
  need("range", "a", type(a) == "number", "a number", a)
  need("range", "b", type(b) == "number", "a number", b)
  need("range", "step", type(step) == "number" and step ~= 0, "a number other than 0", step)
  return source("range", src.range(a, b, step))
end

function S.unfold(state, fn)
  need("unfold", "fn", type(fn) == "function", "a function", fn)
  return source("unfold", src.unfold(state, fn))
end

function S.single(v)
  need("single", "v", v ~= nil, "a value (nil is no element)", v)
  return source("single", src.single(v))
end

function S.empty() return source("empty", src.empty()) end

function S.failed(err) return source("failed", src.failed(err)) end

function S.tick(interval, value)
  need("tick", "interval", is_pos(interval), "a number of seconds > 0", interval)
  if value == nil then value = "tick" end
  return source("tick", src.tick(interval, value))
end

function S.lazy(factory)
  need("lazy", "factory", type(factory) == "function", "a function returning a source", factory)
  return source("lazy", src.lazy(factory, materialize_source))
end

local overflows = { backpressure = true, drop_head = true, drop_tail = true, drop_new = true, fail = true }
local OVERFLOWS = '"backpressure", "drop_head", "drop_tail", "drop_new" or "fail"'

function S.queue(opts)
  need("queue", "options", type(opts) == "table", "a table {size, overflow}", opts)
  known("queue", opts, { size = true, overflow = true }, "size or overflow")
  need("queue", "option 'size'", is_int(opts.size, 1), "an integer >= 1", opts.size)
  local overflow = opts.overflow or "backpressure"
  need("queue", "option 'overflow'", overflows[overflow], OVERFLOWS, overflow)
  local b = source("queue", src.queue())
  b.queue = { size = opts.size, overflow = overflow }
  return b
end

-- A source that reads a mailbox (a process's, a connection's): in a task
-- of its own, behind an asynchronous boundary.
local function outside(name, build)
  local parts = { { name = name, build = build, mailbox = true },
    { name = "async", build = async.async(), prefix = true } }
  return blueprint(parts, "source")
end

function S.lines(spec)
  need("lines", "spec", type(spec) == "table", "a table of tend.process options {cmd, ...}", spec)
  if spec.to ~= nil or spec.stdout ~= nil then
    bad("lines", "spec", "tend.process options without 'to' and 'stdout' (the stream reads stdout)", spec.to or spec.stdout)
  end
  -- tend.process checks the options (and that the program runs) now
  local ok, e = pcall(require("tend.process"), spec)
  if not ok then error("tend.stream.lines: spec: " .. tostring(e), user_level()) end
  return outside("lines", io_src.lines(spec))
end

function S.tcp(opts)
  need("tcp", "options", type(opts) == "table", "a table {host, port, framing}", opts)
  known("tcp", opts, { host = true, port = true, framing = true, timeout = true, max_line = true, from = true,
    to = true }, "host, port, framing, timeout, max_line or from")
  need("tcp", "option 'port'", is_int(opts.port, 1), "an integer port", opts.port)
  if opts.to ~= nil then bad("tcp", "option 'to'", "nothing (the stream reads the frames)", opts.to) end
  return outside("tcp", io_src.tcp(opts))
end

-- S.flow(): a flow with no source yet (Akka's Flow): attach it with
-- source:via(flow), make a sink of it with flow:to(sink).
function S.flow() return blueprint({}, "flow") end

-------------------------------------------------------------------- flows
local function fn_op(name, make)
  Blueprint[name] = function(self, fn)
    need(name, "fn", type(fn) == "function", "a function", fn)
    local build, fuse = make(fn)
    return add(self, name, build, nil, fuse)
  end
end
fn_op("map", flows.map)
fn_op("filter", flows.filter)
fn_op("take_while", flows.take_while)
fn_op("recover", flows.recover)

function Blueprint:take(n)
  need("take", "n", is_int(n, 0), "an integer >= 0", n)
  local build, fuse = flows.take(n)
  return add(self, "take", build, nil, fuse)
end

function Blueprint:drop(n)
  need("drop", "n", is_int(n, 0), "an integer >= 0", n)
  local build, fuse = flows.drop(n)
  return add(self, "drop", build, nil, fuse)
end

function Blueprint:scan(init, fn)
  need("scan", "init", init ~= nil, "a value (nil is no element)", init)
  need("scan", "fn", type(fn) == "function", "a function (acc, element) -> acc", fn)
  local build, fuse = flows.scan(init, fn)
  return add(self, "scan", build, nil, fuse)
end

function Blueprint:fold(init, fn)
  need("fold", "init", init ~= nil, "a value (nil is no element)", init)
  need("fold", "fn", type(fn) == "function", "a function (acc, element) -> acc", fn)
  return add(self, "fold", flows.fold(init, fn))
end

function Blueprint:grouped(n)
  need("grouped", "n", is_int(n, 1), "an integer >= 1", n)
  return add(self, "grouped", flows.grouped(n))
end

function Blueprint:grouped_within(n, seconds)
  need("grouped_within", "n", is_int(n, 1), "an integer >= 1", n)
  need("grouped_within", "seconds", is_pos(seconds), "a number of seconds > 0", seconds)
  return add(self, "grouped_within", async.grouped_within(n, seconds), true)
end

-- burst: the bucket's size (0: every element waits its period, the first
-- too); by default 100 ms worth of tokens, at least 1 (Akka's automatic
-- maximumBurst).
function Blueprint:throttle(n, per, burst)
  need("throttle", "n", is_int(n, 1), "an integer >= 1", n)
  need("throttle", "per", is_pos(per), "a number of seconds > 0", per)
  burst = burst or math.max(1, math.floor(0.1 * n / per + 1e-9))
  need("throttle", "burst", is_int(burst, 0), "an integer >= 0", burst)
  return add(self, "throttle", flows.throttle(n, per, burst))
end

function Blueprint:buffer(n, overflow)
  need("buffer", "n", is_int(n, 1), "an integer >= 1", n)
  overflow = overflow or "backpressure"
  need("buffer", "overflow", overflows[overflow], OVERFLOWS, overflow)
  return add(self, "buffer", async.buffer(n, overflow), true)
end

function Blueprint:async(buffer)
  need("async", "buffer", buffer == nil or is_int(buffer, 1), "an integer >= 1", buffer)
  return add(self, "async", async.async(buffer), true)
end

function Blueprint:merge(other)
  need("merge", "other", is_source(other), "a source", other)
  return add(self, "merge", async.merge(other), true)
end

function Blueprint:zip(other)
  need("zip", "other", is_source(other), "a source", other)
  return add(self, "zip", async.zip(other), true)
end

function Blueprint:concat(other)
  need("concat", "other", is_source(other), "a source", other)
  return add(self, "concat", flows.concat(other, materialize_source))
end

function Blueprint:flat_map(fn)
  need("flat_map", "fn", type(fn) == "function", "a function returning a source", fn)
  return add(self, "flat_map", flows.flat_map(fn, materialize_source))
end

function Blueprint:idle_timeout(seconds)
  need("idle_timeout", "seconds", is_pos(seconds), "a number of seconds > 0", seconds)
  return add(self, "idle_timeout", async.idle_timeout(seconds), true)
end

function Blueprint:log(name)
  need("log", "name", type(name) == "string", "a string", name)
  return add(self, "log", flows.log(name))
end

local function map_async(self, fname, n, fn, opts, ordered)
  need(fname, "n", is_int(n, 1), "an integer >= 1", n)
  need(fname, "fn", type(fn) == "function", "a function", fn)
  need(fname, "options", opts == nil or type(opts) == "table", "a table {retry = backoff options}", opts)
  if opts then known(fname, opts, { retry = true }, "retry") end
  if opts and opts.retry ~= nil then
    need(fname, "option 'retry'", type(opts.retry) == "table", "a table of backoff options", opts.retry)
    -- tend.retry's own checks, made now (it makes them at each element)
    local ok, e = pcall(backoff.retry, function() end, opts.retry)
    if not ok then
      error(("tend.stream.%s: option 'retry': %s"):format(fname, (tostring(e):gsub("^.-tend%.retry: ", ""))), user_level())
    end
  end
  return add(self, fname, async.map_async(n, fn, opts, ordered))
end

function Blueprint:map_async(n, fn, opts) return map_async(self, "map_async", n, fn, opts, true) end

function Blueprint:map_async_unordered(n, fn, opts)
  return map_async(self, "map_async_unordered", n, fn, opts, false)
end

local words = { resume = true, restart = true, stop = true }

-- The decider of every stage before it that has none of its own: right
-- after a stage, that stage's (and those before); at the end, the whole
-- blueprint's.
function Blueprint:with_supervision(decider)
  need("with_supervision", "decider", type(decider) == "function" or words[decider],
    'a function (err) -> "resume" | "restart" | "stop", or one of those words', decider)
  local parts = {}
  for i, p in ipairs(self.parts) do
    parts[i] = setmetatable({ decider = p.decider or decider }, { __index = p })
  end
  local b = blueprint(parts, self.kind)
  b.queue = self.queue
  return b
end

function Blueprint:via(flow)
  need("via", "flow", getmetatable(flow) == Blueprint and flow.kind == "flow", "a flow (tend.stream.flow())", flow)
  local parts = table.move(self.parts, 1, #self.parts, 1, {})
  table.move(flow.parts, 1, #flow.parts, #parts + 1, parts)
  local b = blueprint(parts, self.kind)
  b.queue = self.queue
  return b
end

local function is_sink(v) return getmetatable(v) == Sink end

-- What v is, for a restart factory's check: "source", "flow", "sink", or
-- the value shown.
local function kind_of(v)
  if getmetatable(v) == Blueprint then return v.kind end
  if is_sink(v) then return "sink" end
  return shown(v)
end

function Blueprint:to(sink)
  need("to", "sink", is_sink(sink), "a sink (tend.stream.sink.*)", sink)
  if self.kind ~= "flow" then bad("to", "self", "a flow (a source runs with :run_with)", self) end
  local parts = table.move(self.parts, 1, #self.parts, 1, {})
  table.move(sink.parts, 1, #sink.parts, #parts + 1, parts)
  return setmetatable({ name = sink.name, make = sink.make, parts = parts }, Sink)
end

------------------------------------------------------------------- sinks
local function sink(name, make) return setmetatable({ name = name, make = make, parts = {} }, Sink) end

function S.sink.fold(init, fn)
  need("sink.fold", "fn", type(fn) == "function", "a function (acc, element) -> acc", fn)
  return sink("fold", sinks.fold(init, fn))
end
function S.sink.reduce(fn)
  need("sink.reduce", "fn", type(fn) == "function", "a function (acc, element) -> acc", fn)
  return sink("reduce", sinks.reduce(fn))
end
function S.sink.seq() return sink("seq", sinks.seq()) end
function S.sink.head() return sink("head", sinks.head()) end
function S.sink.last() return sink("last", sinks.last()) end
function S.sink.foreach(fn)
  need("sink.foreach", "fn", type(fn) == "function", "a function", fn)
  return sink("foreach", sinks.foreach(fn))
end
function S.sink.ignore() return sink("ignore", sinks.ignore()) end
function S.sink.actor(ref, opts)
  need("sink.actor", "ref", type(ref) == "userdata", "a ref", ref)
  need("sink.actor", "options", opts == nil or type(opts) == "table", "a table {on_complete, on_failure, ack}", opts)
  for k in pairs(opts or {}) do
    if k ~= "on_complete" and k ~= "on_failure" and k ~= "ack" then
      bad("sink.actor", "options", "on_complete, on_failure or ack", k)
    end
  end
  return sink("actor", sinks.actor(ref, opts or {}))
end
function S.sink.tcp(conn)
  need("sink.tcp", "conn", type(conn) == "userdata", "a tend.tcp connection (a ref)", conn)
  return sink("tcp", sinks.tcp(conn))
end

------------------------------------------------------------------ restarts
local restart_keys = { min_backoff = true, max_backoff = true, random_factor = true,
  max_restarts = true, max_restarts_within = true, on_failures_only = true,
  jitter = true, algorithm = true, slot_time = true, ceiling = true, stay_at_ceiling = true }

local function restart_opts(fn, opts, factory)
  need(fn, "options", type(opts) == "table", "a table of backoff options", opts)
  for k in pairs(opts) do
    if not restart_keys[k] then bad(fn, "options", "backoff options (min_backoff, max_backoff, random_factor, max_restarts, max_restarts_within, on_failures_only)", k) end
  end
  need(fn, "option 'max_restarts'", opts.max_restarts == nil or is_int(opts.max_restarts, 0), "an integer >= 0", opts.max_restarts)
  need(fn, "option 'max_restarts_within'", opts.max_restarts_within == nil or is_pos(opts.max_restarts_within), "a number of seconds > 0", opts.max_restarts_within)
  need(fn, "factory", type(factory) == "function", "a function", factory)
  local cfg = {}
  for k, v in pairs(opts) do
    if k ~= "max_restarts" and k ~= "max_restarts_within" and k ~= "on_failures_only" then cfg[k] = v end
  end
  local ok, e = pcall(core.backoff_delay_generator, cfg, "tend.stream." .. fn)
  if not ok then error(e, 3) end
  local copy = {}
  for k, v in pairs(opts) do copy[k] = v end
  return copy
end

function S.restart_source(opts, factory)
  local o = restart_opts("restart_source", opts, factory)
  return source("restart_source", restart.source(o, factory, materialize_source, kind_of))
end

function S.restart_flow(opts, factory)
  local o = restart_opts("restart_flow", opts, factory)
  return add(S.flow(), "restart_flow", restart.flow(o, factory, kind_of))
end

function S.restart_sink(opts, factory)
  local o = restart_opts("restart_sink", opts, factory)
  return sink("restart_sink", restart.sink(o, factory, kind_of))
end

-------------------------------------------------------------------- running
require("tend.stream_handle")(S, Blueprint, Sink, R)

return S
