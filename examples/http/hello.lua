-- Hello world over HTTP, on a real loopback socket: a server
-- (tend.http.serve, H2O on tend's own loop) whose router answers
-- GET /hello/:name, and the main chunk as its client (tend.http.get).
-- Each request runs in an actor of its own, a child of the server.
-- Run: build/tend examples/http/hello.lua   (or with `serve` as an
-- argument, to keep serving: curl http://127.0.0.1:8080/hello/you)
local tend = require "tend"

local keep = arg and arg[1] == "serve"

local server = tend.http.serve({
  port = keep and 8080 or 0, -- 0: a free port
  handler = tend.http.router({
    { "GET", "/hello/:name", function(req)
      return "hello, " .. req.params.name .. "\n"
    end },
    { "POST", "/echo", function(req)
      return { status = 200, headers = { ["content-type"] = "application/octet-stream" },
        body = req.body }
    end },
  }),
})
local port = tend.ask(server, "port")
if keep then
  print("serving on http://127.0.0.1:" .. port .. "/hello/you (Ctrl-C ends)")
  return
end

local base = "http://127.0.0.1:" .. port
local hello = tend.http.get(base .. "/hello/tend")
local missing = tend.http.get(base .. "/nowhere")
local wrong = tend.http.request({ method = "DELETE", url = base .. "/hello/tend" })
local echo = tend.http.request({ method = "POST", url = base .. "/echo", body = "bytes" })
print(string.format("hello: %d %q; /nowhere %d; DELETE %d (allow %s); echo %q",
  hello.status, hello.body:gsub("\n$", ""), missing.status, wrong.status, wrong.headers.allow, echo.body))
tend.shutdown()
