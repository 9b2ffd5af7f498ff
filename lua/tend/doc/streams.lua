-- The doc entries of the group "streams": tend.stream, Akka Streams in
-- Lua (the format: lua/tend/doc.lua; the guide: docs/guide/streams.md).
-- An example as a whole program (each runs as a tend process of its own:
-- spec/doc_entry_examples.lua), its "-- run:" line first.
local function prog(ex)
  local run, rest = ex:match("^(%-%- run:[^\n]*\n)(.*)$")
  return (run or "") .. 'local tend = require "tend"\n' .. (rest or ex)
end

local function src(name, sig, summary, params, example, text)
  return { name = "tend.stream." .. name, sig = sig, summary = summary, text = text or "",
    params = params, returns = { { "tend.Stream", "a source blueprint (immutable, reusable)" } },
    errors = { "a wrong argument, named with what was expected and what was given" },
    example = prog(example) }
end

return {
  { class = "tend.Stream", summary = "A blueprint (source or flow): its methods are the flows, via, to, run_with, run_async and the run_* shortcuts (docs/guide/streams.md).", fields = {} },
  { class = "tend.StreamSink", summary = "A sink of tend.stream.sink (fold, reduce, seq, head, last, foreach, ignore, actor, tcp), or flow:to(sink).", fields = {} },
  src("from", "tend.stream.from(list) -> stream", "The elements of a list, in order.",
    { { "list", "table", "the elements (copied; nil ends it)" } },
    [[print(#tend.stream.from({ "a", "b" }):run_seq()) --> 2]]),
  src("range", "tend.stream.range(a, b [, step]) -> stream", "The numbers a, a+step, ... up to b.",
    { { "a", "number", "the first" }, { "b", "number", "the last" }, { "step", "number?", "default 1; not 0" } },
    [[print(tend.stream.range(1, 5):run_last()) --> 5]]),
  src("unfold", "tend.stream.unfold(state, fn) -> stream",
    "fn(state) returns next_state, element, or nil to complete (a state with no element fails the stream: NilElement).",
    { { "state", "any", "the first state" }, { "fn", "function", "(state) -> next_state, element | nil" } },
    [[print(#tend.stream.unfold(1, function(s) if s <= 4 then return s + 1, s end end):run_seq()) --> 4]]),
  src("single", "tend.stream.single(v) -> stream", "One element.",
    { { "v", "any", "the element (not nil)" } }, [[print(tend.stream.single(7):run_head()) --> 7]]),
  src("empty", "tend.stream.empty() -> stream", "Completes at once.", {},
    [[print(#tend.stream.empty():run_seq()) --> 0]]),
  src("failed", "tend.stream.failed(err) -> stream", "Fails at once with err.",
    { { "err", "any", "the error (the StreamFailed's .cause)" } },
    [[local s = tend.stream.failed("no")
print(pcall(s.run_seq, s)) ]], nil),
  src("tick", "tend.stream.tick(interval, value) -> stream",
    "value every interval seconds of the tend clock (virtual under --virtual-time).",
    { { "interval", "number", "seconds, > 0" }, { "value", "any", "the element (default \"tick\")" } },
    [[print(#tend.stream.tick(0.01, 1):take(3):run_seq()) --> 3]],
    "The first comes interval after the start; ticks a busy consumer missed are skipped (it gets the next one on schedule)."),
  src("lazy", "tend.stream.lazy(factory) -> stream", "factory() makes the source at the first pull.",
    { { "factory", "function", "() -> source" } },
    [[print(tend.stream.lazy(function() return tend.stream.single(1) end):run_head()) --> 1]]),
  src("queue", "tend.stream.queue{size, overflow} -> stream",
    "A source fed by actors: :run_async gives a handle with :offer(v), :complete(), :fail(err).",
    { { "opts", "table", "size (integer >= 1), overflow: \"backpressure\" (default: the offer waits), \"drop_head\", \"drop_tail\", \"drop_new\", \"fail\"" } },
    [[local h = tend.stream.queue({ size = 2 }):run_async(tend.stream.sink.seq())
h:offer(1) h:offer(2) h:complete()
print(#h:await()) --> 2]],
    [[:offer returns "enqueued", "dropped" or "closed" (Akka's Source.queue). :complete() ends the
stream after what is queued; :fail(err), and an offer over a full "fail" queue (answered "dropped"),
fail it at once, dropping what is queued.]]),
  src("lines", "tend.stream.lines(process_spec) -> stream",
    "The stdout lines of an OS process (tend.process options), read as they are asked for.",
    { { "process_spec", "table", "tend.process options ({cmd, ...}; not to or stdout)" } },
    [[-- run: tend
print(#tend.stream.lines({ cmd = { "seq", "1", "3" } }):run_seq()) --> 3]],
    [[The process runs under the stream's supervisor and is stopped when the stream ends or is
cancelled. Its lines wait in the mailbox of the stream's reading task until demanded; at 1000
tend stops reading the pipe, so a slow stream keeps the program blocked on it. A non-zero exit
fails the stream (ProcessExit). The source brings an asynchronous boundary: the stage after it
is #3.]]),
  src("tcp", "tend.stream.tcp{host, port, framing} -> stream",
    "The frames of a client connection (tend.tcp.connect options).",
    { { "opts", "table", "tend.tcp.connect options (not to)" } },
    [[-- run: tend --virtual-time
local server = tend.tcp.listen({ port = 0, handler = function(ctx)
  ctx:write("a") ctx:write("b") ctx:close()
  return function() end
end })
local port = tend.ask(server, "port")
print(table.concat(tend.stream.tcp({ host = "127.0.0.1", port = port }):run_seq(), " ")) --> a b]],
    "The connection closes when the stream ends; the peer closing completes the stream."),
  { name = "tend.stream.flow", sig = "tend.stream.flow() -> flow",
    summary = "A flow with no source yet (Akka's Flow): source:via(flow), flow:to(sink).",
    text = "", params = {}, returns = { { "tend.Stream", "an empty flow blueprint" } }, errors = {},
    example = prog([[local double = tend.stream.flow():map(function(x) return 2 * x end)
print(tend.stream.range(1, 3):via(double):run_last()) --> 6]]) },
  { name = "tend.stream.restart_source", sig = "tend.stream.restart_source(opts, factory) -> stream",
    summary = "Akka's RestartSource.withBackoff: factory()'s source made again after it fails or completes.",
    text = [[opts: min_backoff, max_backoff, random_factor (tend's backoff options), max_restarts,
max_restarts_within (seconds), on_failures_only (true: a completion ends it, Akka's
onFailuresWithBackoff). After max_restarts it completes: :run_head() then raises StreamFailed
whose .cause is NoElement. Each delay is a stream_backoff trace event, each restart a stream_restart.]],
    params = { { "opts", "table", "the backoff options" }, { "factory", "function", "() -> source" } },
    returns = { { "tend.Stream", "a source" } }, errors = { "an unknown or wrong option, named" },
    example = prog([[-- run: tend --virtual-time
local n = 0
local s = tend.stream.restart_source({ min_backoff = 1, max_backoff = 1, max_restarts = 3 },
  function() n = n + 1 return tend.stream.failed("down") end)
print(pcall(s.run_head, s), n) ]]) },
  { name = "tend.stream.restart_flow", sig = "tend.stream.restart_flow(opts, factory) -> flow",
    summary = "Akka's RestartFlow: factory()'s flow made again over the same upstream after a failure.",
    text = "The element in it when it failed is lost.",
    params = { { "opts", "table", "as restart_source" }, { "factory", "function", "() -> flow" } },
    returns = { { "tend.Stream", "a flow" } }, errors = { "an unknown or wrong option, named" },
    example = prog([[local f = tend.stream.restart_flow({ min_backoff = 0.01, max_backoff = 0.1 }, function()
  return tend.stream.flow():map(function(x) return x + 1 end) end)
print(tend.stream.range(1, 3):via(f):run_last()) --> 4]]) },
  { name = "tend.stream.restart_sink", sig = "tend.stream.restart_sink(opts, factory) -> sink",
    summary = "Akka's RestartSink: factory()'s sink made again after a failure (its state starts over).",
    text = "After max_restarts the run ends with the sink's value.",
    params = { { "opts", "table", "as restart_source" }, { "factory", "function", "() -> sink" } },
    returns = { { "tend.StreamSink", "a sink" } }, errors = { "an unknown or wrong option, named" },
    example = prog([[local k = tend.stream.restart_sink({ min_backoff = 0.01, max_backoff = 0.1 }, tend.stream.sink.seq)
print(#tend.stream.range(1, 3):run_with(k)) --> 3]]) },
}
