-- The doc entries of the group "net": TCP, HTTP calls, the simulated
-- network (the format: lua/tend/doc.lua). An example whose first line is
-- "-- run: tend FLAGS" runs with those flags; the others run with none.
return {
  ---------------------------------------------------------------- TCP
  { name = "tend.tcp.listen",
    sig = "tend.tcp.listen{host, port, handler, framing, max_connections, backlog, max_line} [, spawn_opts] "
      .. "-> listener ref",
    summary = "Listens at once (in the caller) and spawns the listener, owning that socket, as a child of the caller.",
    text = [[
The caller is the parent (/user when it is a task such as the main chunk).
Each connection accepted is a temporary child of the listener running
handler(ctx, peer), a factory (peer is "127.0.0.1:51234"): the behavior it
returns gets { tend = "data", data = ... } per line or frame, then { tend
= "closed", reason = ... } once (tend.TcpMessage), and the actor then
stops; ctx:write(data) writes a frame, ctx:close() closes. After reason
"eof" (the peer ended its input) the connection can still be written while
the handler handles that last message. A handler that raises closes its
own connection only.

tend.ask(listener, "port") gives the port (port 0 picked a free one),
"connections" the live connections, "refused" those refused (over
max_connections, or with the process out of file descriptors: accepted and
closed at once). Reading stops while the reader's mailbox holds 1000
messages or more and starts again at 500. A line or frame over max_line
ends the connection with reason "frame_too_long".

Framing: "line" (a frame ends at "\n", a "\r" before it dropped; write
adds "\n"), "length" (a 4-byte big-endian length, then the bytes;
binary-safe), "raw" (each read as it came, at most 64 KiB). A host name is
resolved at once (blocking, as gen_tcp:listen). Under --virtual-time it
listens on the simulated network: host is a simulated host's name.

An idle connection costs about 1 KiB until the listener stops or the
handler closes it (ctx:set_receive_timeout gives an idle timeout). At the
process's limit of file descriptors a new connection is closed at once
(counted in "refused") and one warn line per burst names the listener.
tend.ps() rows of a listener have socket = "port=5432", of a connection
socket = "peer=127.0.0.1:51234"; tree() shows it.]],
    params = { { "opts", "tend.TcpListenOpts", "where to listen and the handler" },
               { "spawn_opts", "tend.SpawnOpts?", "the listener's spawn options (name...)" } },
    returns = { { "tend.Ref", "the listener's ref" } },
    errors = { "ListenError (.reason \"address already in use\", \"host not found\"...): no listener is left",
               "an error naming a bad option (an unknown key, a port outside 0-65535, a handler that is "
                 .. "not a function...)" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
local function echo(ctx, peer)
  return function(msg, ctx)
    if msg.tend == "data" then ctx:write(msg.data) end
  end
end
local server = tend.tcp.listen({ port = 0, handler = echo }, { name = "echo" })
local port = tend.ask(server, "port")
local conn = tend.tcp.connect { host = "127.0.0.1", port = port }
tend.tcp.write(conn, "hello")
print(tend.receive(2).data)   --> hello
tend.tcp.close(conn)
print(tend.receive(2).reason) --> closed]],
  },
  { class = "tend.TcpListenOpts",
    summary = "The options of tend.tcp.listen and tend.tcp.server (any other key is an error).",
    fields = {
      { "handler", "fun(ctx: tend.Ctx, peer: string): any", "the factory of each connection's actor" },
      { "host", "string?", "the address or name to listen on (default \"127.0.0.1\"; a simulated host "
        .. "under --virtual-time)" },
      { "port", "integer?", "0..65535 (default 0: a free one)" },
      { "framing", "\"line\"|\"length\"|\"raw\"?", "how bytes become messages (default \"line\")" },
      { "max_connections", "integer?", "live connections at most; more are accepted and closed (default 1024)" },
      { "backlog", "integer?", "the listen backlog, 1-65535 (default 128)" },
      { "max_line", "integer?", "the longest line or frame in bytes (default 65536)" },
    },
  },
  { class = "tend.TcpMessage",
    summary = "What a connection's reader gets (the handler, or tend.tcp.connect's caller or `to`).",
    fields = {
      { "tend", "\"data\"|\"closed\"", "a frame, or the end (the last message)" },
      { "data", "string?", "data: the line (without \"\\n\") or frame" },
      { "reason", "string?", "closed: \"eof\" (the peer closed or shut down its side), \"closed\" (closed "
        .. "here, or the owner stopped), \"reset\", \"frame_too_long\", or the OS's text" },
    },
  },
  { name = "tend.tcp.server",
    sig = "tend.tcp.server{host, port, handler, framing, max_connections, backlog, max_line} -> factory",
    summary = "The listener of tend.tcp.listen as a factory, for tend.spawn, ctx:spawn or children.",
    text = [[
Each start listens again on the port (a restart too). A failed listen (a
taken port) is then an InitError of the listener, not the caller's error.]],
    params = { { "opts", "tend.TcpListenOpts", "as tend.tcp.listen's" } },
    returns = { { "fun(ctx: tend.Ctx, ...): any", "the listener's factory" } },
    errors = { "an error naming a bad option, at once" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
local hello = function(ctx) ctx:write("hello") ctx:close() return function() end end
local l = tend.spawn(tend.tcp.server { port = 7000, handler = hello }, { name = "hello" })
tend.sleep(0)
local conn = tend.tcp.connect { host = "localhost", port = 7000 }
print(tend.receive(1).data)   --> hello
print(tend.receive(1).reason) --> eof]],
  },
  { name = "tend.tcp.connect",
    sig = "tend.tcp.connect{host, port, framing, timeout, max_line, to, from} -> connection ref",
    summary = "Connects; the caller waits (others run) and gets the connection's ref, a child of the caller.",
    text = [[
Frames and the closed message (tend.TcpMessage) go to the caller, or to
`to` (sent by the connection). timeout (default 5 s) bounds the lookup and
the handshake; a refusal or a failed lookup answers as soon as the OS says
so. Names are resolved in libuv's thread pool. Only inside an actor (the
main chunk is one). The connection closes when its owner dies; from the
main chunk (a task) it lives under /user and watches it.

Under --virtual-time it connects on the simulated network: from the host
given by `from`, else the host the caller lives on (tend.simnet.place),
else "localhost"; a connect takes one round trip, and no listener there is
"connection refused" after it.]],
    params = { { "opts", "tend.TcpConnectOpts", "where to and how" } },
    returns = { { "tend.Ref", "the connection's ref (for tend.tcp.write, close, peer)" } },
    errors = { "ConnectError (.reason \"connection refused\", \"timed out\", \"host not found\", "
                 .. "\"host unreachable\" or the OS's text)",
               "an error naming a bad option; outside an actor" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
local ok, e = pcall(tend.tcp.connect, { host = "localhost", port = 9 })
print(e.kind, e.reason)   --> ConnectError  connection refused]],
  },
  { class = "tend.TcpConnectOpts",
    summary = "The options of tend.tcp.connect (any other key is an error).",
    fields = {
      { "host", "string", "the address or name to connect to (a simulated host under --virtual-time)" },
      { "port", "integer", "1..65535" },
      { "framing", "\"line\"|\"length\"|\"raw\"?", "how bytes become messages (default \"line\")" },
      { "timeout", "number?", "seconds for the lookup and the handshake (default 5)" },
      { "max_line", "integer?", "the longest line or frame in bytes (default 65536)" },
      { "to", "tend.Ref?", "the actor that gets the data and closed messages (default the caller)" },
      { "from", "string?", "under --virtual-time: the simulated host the connection comes from "
        .. "(default the caller's host)" },
    },
  },
  { name = "tend.tcp.write",
    sig = "tend.tcp.write(conn, data) -> true | false, \"closed\"",
    summary = "Sends data on a connection, framed (line: data..\"\\n\"; length: a 4-byte prefix; raw: as is).",
    text = [[
A write goes to the kernel at once when it takes it, else it is queued;
while more than 1 MiB is queued the writer waits (yields) until it is down
to 256 KiB (where it cannot wait it raises Overloaded after queueing).
Once the connection has ended it returns false, "closed" (gen_tcp's
{error, closed}). In a handler: ctx:write(data).]],
    params = { { "conn", "tend.Ref", "a connection's ref" },
               { "data", "string", "the bytes (write(\"a\\nb\") on a line connection is two lines)" } },
    returns = { { "boolean", "true, or false once the connection ended" },
                { "string?", "\"closed\" with false" } },
    errors = { "NotConnected when conn is a ref but no connection", "an error when data is not a string",
               "Overloaded when over 1 MiB is queued and the caller cannot wait" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.tcp.listen { port = 7000, handler = function(ctx)
  return function(msg, ctx) if msg.tend == "data" then ctx:write(#msg.data .. " bytes") end end
end }
local conn = tend.tcp.connect { host = "localhost", port = 7000 }
print(tend.tcp.write(conn, "abc"))   --> true
print(tend.receive(1).data)          --> 3 bytes]],
  },
  { name = "tend.tcp.close",
    sig = "tend.tcp.close(conn)",
    summary = "Sends what is queued, then closes; the reader gets closed with reason \"closed\".",
    text = [[
Queued writes go out first, for at most 5 s: what a peer that does not
read has not taken by then is dropped and the connection is reset (a warn
line says how many bytes). A ref that is no connection (or closed):
nothing. In a handler: ctx:close().]],
    params = { { "conn", "tend.Ref", "a connection's ref" } },
    returns = {},
    errors = {},
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.tcp.listen { port = 7000, handler = function() return function() end end }
local conn = tend.tcp.connect { host = "localhost", port = 7000 }
tend.tcp.close(conn)
print(tend.receive(1).reason)   --> closed]],
  },
  { name = "tend.tcp.peer",
    sig = "tend.tcp.peer(conn) -> \"address:port\"",
    summary = "The other end of a connection.",
    text = "",
    params = { { "conn", "tend.Ref", "a connection's ref" } },
    returns = { { "string", "\"address:port\"" } },
    errors = { "NotConnected when conn is a ref but no live connection", "an error when conn is no ref" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.tcp.listen { host = "db", port = 5432, handler = function() return function() end end }
local conn = tend.tcp.connect { host = "db", port = 5432 }
print(tend.tcp.peer(conn))   --> db:5432]],
  },
  { name = "tend.tcp.socket_of",
    sig = "tend.tcp.socket_of(conn) -> socket | nil",
    summary = "The socket behind a connection ref (its transport's object, as tend.chaos.reset uses), or nil.",
    text = "",
    params = { { "conn", "tend.Ref", "a connection's ref" } },
    returns = { { "userdata|table|nil", "the socket (a real or a simulated one), nil for no connection" } },
    errors = {},
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.tcp.listen { port = 7000, handler = function() return function() end end }
local conn = tend.tcp.connect { host = "localhost", port = 7000 }
print(tend.tcp.socket_of(conn) ~= nil, tend.tcp.socket_of(tend.self()))   --> true  nil]],
  },
  { name = "ctx:write",
    sig = "ctx:write(data) -> true | false, \"closed\"",
    summary = "In a TCP connection's handler: writes a frame to the peer (tend.tcp.write on its own connection).",
    text = "",
    params = { { "data", "string", "the bytes" } },
    returns = { { "boolean", "true, or false once the connection ended" },
                { "string?", "\"closed\" with false" } },
    errors = { "NotConnected outside a connection's actor", "an error when data is not a string" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.tcp.listen { port = 7000, handler = function(ctx, peer)
  ctx:write("welcome")
  return function() end
end }
tend.tcp.connect { host = "localhost", port = 7000 }
print(tend.receive(1).data)   --> welcome]],
  },
  { name = "ctx:close",
    sig = "ctx:close()",
    summary = "In a TCP connection's handler: sends what is queued, then closes the connection.",
    text = "The handler then gets closed, reason \"closed\" (Akka's Closed), and stops.",
    params = {},
    returns = {},
    errors = {},
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.tcp.listen { port = 7000, handler = function()
  return function(msg, ctx)
    if msg.tend == "data" then ctx:write("bye") ctx:close() end
  end
end }
local conn = tend.tcp.connect { host = "localhost", port = 7000 }
tend.tcp.write(conn, "hi")
print(tend.receive(1).data, tend.receive(1).reason)   --> bye  eof]],
  },

  ---------------------------------------------------------------- HTTP
  { name = "tend.http.request",
    sig = "tend.http.request{method, url, headers, body, timeout, max_body} -> {status, headers, body}",
    summary = "An HTTP(S) call through libcurl; the caller waits (others run).",
    text = [[
A 404 or 500 is a response; only a call that got no response raises
HttpError. Header names are lowercased (a name sent twice has its values
joined with ", "). Redirects are not followed (a 301 is a response with
its location header). HTTPS verifies the peer against the system's CA
store. The request sends User-Agent: tend/<version> (a User-Agent in
headers replaces it) and no Expect: 100-continue; after a 100 Continue
only the final response's headers are kept. When the waiting actor dies or
restarts mid-call, its request leaves curl at once. curl reuses
connections (a reused one the server closed meanwhile is noticed and the
call goes on a fresh one) and reads http_proxy and https_proxy from the
environment. Not there: following redirects, cookies, streaming bodies,
proxies set per call.

Under --virtual-time the call never reaches the real network: it goes to a
simulated server (tend.http.serve) on the simulated network, taking a
round trip of the link from the caller's host; a URL no simulated server
serves raises HttpError, reason "no simulated server".]],
    params = { { "opts", "tend.HttpRequestOpts", "the request" } },
    returns = { { "tend.HttpResponse", "the response" } },
    errors = { "HttpError when no response came: .reason is curl's text (\"Failed to connect to ...\", "
                 .. "\"Operation timed out after ...\", \"Could not resolve host: ...\"), \"response body "
                 .. "over max_body\" or \"response headers over their bound (256 lines, 64 KiB)\"; .url",
               "an error naming a bad option, before anything is sent (an unknown method or option, a URL "
                 .. "not http(s)://, a header name that is no HTTP token or a value with CR, LF or NUL...)",
               "an error where the caller cannot wait (a gsub callback, a metamethod)" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.http.serve { host = "api", handler = function(req)
  return { status = 201, headers = { ["X-Seen"] = req.method }, body = req.body:upper() }
end }
local r = tend.http.request { method = "POST", url = "http://api/items", body = "pen" }
print(r.status, r.headers["x-seen"], r.body)   --> 201  POST  PEN]],
  },
  { class = "tend.HttpRequestOpts",
    summary = "The options of tend.http.request (any other key is an error).",
    fields = {
      { "url", "string", "an http:// or https:// URL" },
      { "method", "string?", "\"GET\" (default), \"HEAD\", \"POST\", \"PUT\", \"PATCH\", \"DELETE\" or "
        .. "\"OPTIONS\", any case" },
      { "headers", "table<string, string>?", "name = value (names HTTP tokens; no CR, LF or NUL in values)" },
      { "body", "string?", "sent as is (a POST without one sends an empty body)" },
      { "timeout", "number?", "seconds for the whole call (default 30)" },
      { "max_body", "integer?", "the largest response body in bytes (default 16 MiB)" },
    },
  },
  { class = "tend.HttpResponse",
    summary = "What tend.http.request and tend.http.get return.",
    fields = {
      { "status", "integer", "the status code (200, 404...)" },
      { "headers", "table<string, string>", "the headers, names lowercased" },
      { "body", "string", "the body" },
    },
  },
  { name = "tend.http.get",
    sig = "tend.http.get(url [, opts]) -> {status, headers, body}",
    summary = "tend.http.request with method GET.",
    text = "",
    params = { { "url", "string", "an http:// or https:// URL" },
               { "opts", "tend.HttpGetOpts?", "headers, timeout, max_body" } },
    returns = { { "tend.HttpResponse", "the response" } },
    errors = { "as tend.http.request's; an error when opts.method is other than GET" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.http.serve { host = "api", handler = function(req) return { body = "you asked " .. req.path } end }
print(tend.http.get("http://api/health", { timeout = 2 }).body)   --> you asked /health]],
  },
  { class = "tend.HttpGetOpts",
    summary = "The options of tend.http.get.",
    fields = {
      { "headers", "table<string, string>?", "request headers" },
      { "timeout", "number?", "seconds for the whole call (default 30)" },
      { "max_body", "integer?", "the largest response body in bytes (default 16 MiB)" },
    },
  },
  { name = "tend.http.serve",
    sig = "tend.http.serve{host, port, handler, name, max_connections, max_body, timeout, debug, tls, ws} [, spawn_opts] -> ref",
    summary = "An HTTP/1.1 and HTTP/2 server (H2O on tend's loop), an actor bound in the caller; under --virtual-time a simulated server.",
    text = [[
Binds in the caller: a taken port or a host that does not resolve raises
ListenError there (.reason), and nothing is left behind. The server is a
child of the caller (of /user from a task). Each request runs
handler(req, ctx) in an actor of its own, a temporary child of the server;
it returns a string (200, text/plain; charset=utf-8), {status, headers,
body}, nil and a status, or nothing (204). A body may be a pull function,
called in the request's actor for each next chunk (a string; nil ends it;
it may ask, sleep, call out), only once the previous chunk was sent (chunked
under HTTP/1.1, DATA frames under HTTP/2): the client's reading paces it;
a client leaving stops the actor. A raise gives 500 (its text only
with debug = true) and a warn line; past timeout the client gets 503 and
the request's actor is stopped. A body over max_body gets 413 without the
handler. tend.ask(server, "port" | "refused" | "connections"). Every
answered request is an "http" trace event (method, target, status,
duration), logged at info. Under --virtual-time it serves the simulated
network's requests to http://host:port/ with the same req and answers, the
handler running in the caller's request (no ctx, no timeout).]],
    params = { { "opts", "tend.HttpServeOpts", "the options" },
               { "spawn_opts", "tend.SpawnOpts?", "the server actor's spawn options" } },
    returns = { { "tend.Ref", "the server (real clock)" } },
    errors = { "ListenError when it cannot listen (.reason)",
               "an error naming the option that is wrong (tls.cert, tls.key: a file that cannot be read, "
                 .. "is not PEM, or a key that does not match)" },
    example = [[
local tend = require "tend"
local server = tend.http.serve { port = 0, handler = function(req) return "hi " .. req.path end }
local port = tend.ask(server, "port")
print(tend.http.get("http://127.0.0.1:" .. port .. "/x").body)   --> hi /x
tend.stop(server)]],
  },
  { class = "tend.HttpServeOpts",
    summary = "The options of tend.http.serve and tend.http.server.",
    fields = {
      { "handler", "fun(req: tend.HttpServerRequest, ctx: tend.Ctx?): any", "the answer (see tend.http.serve)" },
      { "host", "string?", "the address to listen on (default \"127.0.0.1\"); a simulated host's name under --virtual-time" },
      { "port", "integer?", "0-65535 (default 0: a free one under the real clock, 80 simulated)" },
      { "name", "string?", "the server actor's name" },
      { "max_connections", "integer?", "connections at once (default 1024); more are closed and counted" },
      { "max_body", "integer?", "bytes of a request body (default 8 MiB); more: 413" },
      { "timeout", "number?", "seconds a handler has to return (default 30), then 503 (a streamed body's pulls are not timed); also a TLS handshake, a request's head and an idle keep-alive connection, then closed" },
      { "debug", "boolean?", "a handler's error text is the body of its 500 (default false)" },
      { "ws", "fun(ctx: tend.Ctx, req: tend.HttpServerRequest): any", "WebSocket: every upgrade request becomes a connection actor built by it (see ctx:ws_send); a route may carry its own ws" },
      { "tls", "{cert: string, key: string}?", "HTTPS: PEM files of the certificate (chain) and its key; ALPN offers h2 and http/1.1" },
      { "real", "boolean?", "under --virtual-time, listen for real (on the host's loop, as under the real clock) instead of on the simulated network: the observer's; its timeouts still run on the virtual clock" },
    },
  },
  { class = "tend.HttpServerRequest",
    summary = "The request a server's handler gets.",
    fields = {
      { "method", "string", "\"GET\", \"POST\", ..." },
      { "path", "string", "the path without the query string, as sent" },
      { "query", "table<string, string>", "the query string decoded (a repeated key: its last value)" },
      { "headers", "table<string, string>", "names in lower case; repeated values joined with \", \"" },
      { "body", "string", "the body (at most max_body bytes)" },
      { "peer", "string?", "\"address:port\" of the client" },
      { "version", "string", "\"1.1\", \"1.0\" or \"2\"" },
      { "websocket", "boolean?", "true on a WebSocket handshake (HTTP/1.1 Upgrade)" },
      { "scheme", "string", "\"http\", or \"https\" on a server with tls" },
      { "params", "table<string, string>?", "the router's :names, decoded" },
    },
  },
  { name = "ctx:ws_send",
    sig = "ctx:ws_send(data [, binary]) -> true | false, \"closed\"",
    summary = "In a WebSocket connection's actor (tend.http.serve's ws): sends a text message (a binary one with binary = true).",
    text = [[
The actor's factory(ctx, req) returns its behavior, which gets { tend =
"ws", data, binary } per message and { tend = "closed", code, reason }
once at the end (the peer's close code and reason; 1006 when the
connection just ended), after which it stops. Writes are back-pressured as
tend.tcp's: while more than 1 MiB is queued the sender waits until the
socket has taken it down to 256 KiB.]],
    params = { { "data", "string", "the message" }, { "binary", "boolean?", "a binary frame (default: text)" } },
    returns = { { "boolean", "true, or false once the connection ended" },
                { "string?", "\"closed\" with false" } },
    errors = { "an error outside a WebSocket connection's actor", "an error when data is not a string" },
    example = [[
local tend = require "tend"
local server = tend.http.serve { handler = function() return "no upgrade here" end,
  ws = function(ctx, req)
    return function(msg, ctx)
      if msg.tend == "ws" then ctx:ws_send("echo " .. msg.data, msg.binary) end
    end
  end }
tend.stop(server)]],
  },
  { name = "ctx:ws_close",
    sig = "ctx:ws_close([code])",
    summary = "In a WebSocket connection's actor: sends a close frame after what is queued (code 1000 unless given).",
    text = "The actor gets { tend = \"closed\", code, reason } once the peer answered, then stops.",
    params = { { "code", "integer?", "1000-4999 (default 1000)" } },
    returns = {},
    errors = { "an error outside a WebSocket connection's actor", "an error naming code when it is not 1000-4999" },
    example = [[
local tend = require "tend"
local server = tend.http.serve { handler = function() return "" end, ws = function()
  return function(msg, ctx)
    if msg.tend == "ws" and msg.data == "bye" then ctx:ws_close(4000) end
  end
end }
tend.stop(server)]],
  },
  { name = "tend.http.server",
    sig = "tend.http.server{...} -> factory",
    summary = "tend.http.serve's server as a factory for a supervisor: a restart listens again on the same port.",
    text = [[
The same options as tend.http.serve. The old incarnation's connections are
closed at its restart. Under --virtual-time, the simulated twin's.]],
    params = { { "opts", "tend.HttpServeOpts", "the options" } },
    returns = { { "function", "a factory for ctx:spawn or tend.start_child" } },
    errors = { "an error naming the option that is wrong" },
    example = [[
local tend = require "tend"
local sup = tend.spawn(function(ctx)
  ctx:spawn(tend.http.server { port = 0, handler = function() return "ok" end }, { name = "web" })
  return function() end
end, { name = "app" })
tend.sleep(0.1)
local web = tend.whereis("/user/app/web")
print(tend.http.get("http://127.0.0.1:" .. tend.ask(web, "port") .. "/").body)   --> ok
tend.stop(sup)]],
  },
  { name = "tend.http.router",
    sig = "tend.http.router{ {method, pattern, fn}, ... } -> handler",
    summary = "A handler that routes by method and path: req.params holds the pattern's :names; 404, and 405 with Allow.",
    text = [[
A pattern's segments may be :name (/items/:id). The first route whose
method and pattern match runs. No path matches: 404; the path matches only
other methods: 405 with Allow. Method "*" takes every method; a GET route
serves HEAD. A route with ws = factory takes WebSocket upgrades on its path
({ "GET", "/chat", ws = factory }; a plain request to it gets 426 unless
the route also has fn). Any handler may accept an upgrade by returning
{ ws = factory }.]],
    params = { { "routes", "table[]", "{ method, pattern, fn(req, ctx) [, ws = factory] } each" } },
    returns = { { "function", "a handler for tend.http.serve" } },
    errors = { "an error naming the route that is not {method, pattern, function}" },
    example = [[
local tend = require "tend"
local server = tend.http.serve { port = 0, handler = tend.http.router {
  { "GET", "/books/:id", function(req) return "book " .. req.params.id end },
} }
local base = "http://127.0.0.1:" .. tend.ask(server, "port")
print(tend.http.get(base .. "/books/42").body)   --> book 42
print(tend.http.request { method = "POST", url = base .. "/books/42" }.status)   --> 405
tend.stop(server)]],
  },
  { name = "tend.http.in_flight",
    sig = "tend.http.in_flight() -> n",
    summary = "How many real HTTP requests are in flight now.",
    text = "",
    params = {},
    returns = { { "integer", "the number" } },
    errors = {},
    example = [[
local tend = require "tend"
print(tend.http.in_flight())   --> 0]],
  },

  ---------------------------------------------------------------- the simulated network
  { name = "tend.simnet.place",
    sig = "tend.simnet.place(ref, host)",
    summary = "Under --virtual-time: ref and its subtree live on the simulated host (connects go from there).",
    text = [[
Hosts are names, any string; "localhost", "127.0.0.1" and "::1" are one
host, each with its own ports (port 0 picks a free one from 49152). An
actor lives on the host given to it or its nearest ancestor, else
"localhost"; a listener lives on the host it listens on, and so do its
connections. Partitions, holds and latencies (tend.chaos) apply to the
links between hosts. Bytes go in order per connection after the link's
latency (0 unless set); writes are not slowed by the reader (the
simulation keeps what is in flight). Everything runs on the virtual clock
and draws from the seed, so a networked failure story replays byte for
byte.]],
    params = { { "ref", "tend.Ref", "the actor (its subtree follows)" },
               { "host", "string", "the simulated host's name" } },
    returns = {},
    errors = { "an error when ref is no actor ref or host is not a non-empty string" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.http.serve { host = "api", handler = function() return { body = "ok" } end }
local web = tend.spawn(function()
  return function(msg, ctx) ctx:reply(tend.http.get("http://api/", { timeout = 1 }).body) end
end)
tend.simnet.place(web, "web")
tend.chaos.partition("web", "api")
print((pcall(tend.ask, web, "go", 5)))     --> false (web's call timed out: it failed)
print(tend.http.get("http://api/").body)   --> ok (the main chunk is on localhost)]],
  },
  { name = "tend.simnet.host_of",
    sig = "tend.simnet.host_of(ref) -> host",
    summary = "The simulated host an actor lives on (its own place, or its nearest ancestor's, else \"localhost\").",
    text = "",
    params = { { "ref", "tend.Ref?", "the actor (nil: \"localhost\")" } },
    returns = { { "string", "the host's name" } },
    errors = {},
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
local a = tend.spawn(function(ctx)
  ctx:spawn(function() return function() end end, { name = "child" })
  return function() end
end, { name = "a" })
tend.simnet.place(a, "db")
tend.sleep(0)
print(tend.simnet.host_of(tend.whereis("/user/a/child")), tend.simnet.host_of(tend.self()))   --> db  localhost]],
  },

  ---------------------------------------------------------------- its plumbing
  -- What tend.chaos and tend.http call under --virtual-time; reachable as
  -- tend.simnet.*, so each has an entry saying what to call instead.
  { name = "tend.simnet.partition",
    sig = "tend.simnet.partition(a, b)",
    summary = "The simulated network's half of tend.chaos.partition (hosts only); call tend.chaos.partition.",
    text = "tend.chaos.partition also cuts two simulated nodes' bus when a and b name them.",
    params = { { "a", "string|tend.Ref", "a host name, or an actor ref" },
               { "b", "string|tend.Ref", "the other end" } },
    returns = {},
    errors = { "an error under the real clock, or when a or b is neither a host name nor an actor ref" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.simnet.partition("localhost", "db")
tend.simnet.repair("localhost", "db")]],
  },
  { name = "tend.simnet.repair",
    sig = "tend.simnet.repair(a, b)",
    summary = "The simulated network's half of tend.chaos.repair (hosts only); call tend.chaos.repair.",
    text = "",
    params = { { "a", "string|tend.Ref", "a host name, or an actor ref" },
               { "b", "string|tend.Ref", "the other end" } },
    returns = {},
    errors = { "an error under the real clock, or when a or b is neither a host name nor an actor ref" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.simnet.partition("localhost", "db")
tend.simnet.repair("localhost", "db")]],
  },
  { name = "tend.simnet.hold",
    sig = "tend.simnet.hold(a, b)",
    summary = "What tend.chaos.hold calls; call tend.chaos.hold.",
    text = "",
    params = { { "a", "string|tend.Ref", "a host name, or an actor ref" },
               { "b", "string|tend.Ref", "the other end" } },
    returns = {},
    errors = { "an error under the real clock, or when a or b is neither a host name nor an actor ref" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.simnet.hold("localhost", "db")
tend.simnet.release("localhost", "db")]],
  },
  { name = "tend.simnet.release",
    sig = "tend.simnet.release(a, b)",
    summary = "What tend.chaos.release calls; call tend.chaos.release.",
    text = "",
    params = { { "a", "string|tend.Ref", "a host name, or an actor ref" },
               { "b", "string|tend.Ref", "the other end" } },
    returns = {},
    errors = { "an error under the real clock, or when a or b is neither a host name nor an actor ref" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.simnet.hold("localhost", "db")
tend.simnet.release("localhost", "db")]],
  },
  { name = "tend.simnet.latency",
    sig = "tend.simnet.latency(a, b, seconds [, jitter])",
    summary = "The simulated network's half of tend.chaos.latency (hosts only); call tend.chaos.latency.",
    text = "",
    params = { { "a", "string|tend.Ref", "a host name, or an actor ref" },
               { "b", "string|tend.Ref", "the other end" },
               { "seconds", "number", "the one-way delay, >= 0" },
               { "jitter", "number?", "up to this much more, from the seed (default 0)" } },
    returns = {},
    errors = { "an error under the real clock, or when seconds or jitter is not a number >= 0" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.simnet.latency("localhost", "db", 0.01)]],
  },
  { name = "tend.simnet.heal",
    sig = "tend.simnet.heal()",
    summary = "Every link of the simulated network as new (what waited goes); tend.chaos.heal calls it.",
    text = "tend.chaos.heal also removes the chaos rules on actors and heals the simulated nodes' bus.",
    params = {},
    returns = {},
    errors = {},
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.simnet.partition("localhost", "db")
tend.simnet.heal()]],
  },
  { name = "tend.simnet.http_bind",
    sig = "tend.simnet.http_bind(spec, owner) -> handle",
    summary = "What tend.http.serve binds under --virtual-time (the server actor is the real one's); call tend.http.serve.",
    text = [[Binds spec.host:spec.port (0: 80 when free, else the host's next free port) for the server actor owner and returns its handle (port, refused, connections, respond, stream, send, hold, close). A simulated client's request is an ask of the server actor. A port whose owner is dead is free again.]],
    params = { { "spec", "table", "the checked options of tend.http.serve" }, { "owner", "tend.Ref", "the server actor" } },
    returns = { { "table", "the handle" } },
    errors = { "ListenError (.reason \"address already in use\")", "an error naming tls or ws (real only)" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
local s = tend.http.serve { host = "api", handler = function() return { body = "ok" } end }
print(tend.ask(s, "port"), tend.http.get("http://api/").body)   --> 80  ok]],
  },
  { name = "tend.simnet.http_request",
    sig = "tend.simnet.http_request(opts) -> {status, headers, body}",
    summary = "What tend.http.request does under --virtual-time, its options already checked; call tend.http.request.",
    text = "",
    params = { { "opts", "tend.HttpRequestOpts", "the request (unchecked here)" } },
    returns = { { "tend.HttpResponse", "the response" } },
    errors = { "HttpError (.reason \"no simulated server\", \"timed out\")" },
    example = [[
-- run: tend --virtual-time
local tend = require "tend"
tend.http.serve { host = "api", handler = function() return { body = "ok" } end }
print(tend.simnet.http_request({ url = "http://api/" }).body)   --> ok]],
  },
}
