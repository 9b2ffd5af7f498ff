-- tend.observe.server: the observer's HTTP server, on tend.http.serve.
-- Every request needs the token (?token=...; 403 without it, before
-- anything else, unknown paths included); GET only, or POST only for the
-- routes in opts.post (405); a route
-- returns a Lua value (sent as JSON), or nil, status, message (an error
-- as JSON { error = message }), or M.events(pull) (a stream of server-sent
-- events: pull() returns the next chunk, as a streamed body of
-- tend.http.serve); "/" serves the page. Bodies over 64 KiB are refused by
-- the HTTP server (413).
local json = require "tend.observe.json"

local M = {}

M.DEFAULT_PORT = 8642

-- 32 hex digits from /dev/urandom (not tend.random: a seeded run draws
-- the same numbers every time, and the token must not be guessable).
function M.token()
  local f = assert(io.open("/dev/urandom", "rb"))
  local bytes = f:read(16)
  f:close()
  return (bytes:gsub(".", function(c) return string.format("%02x", c:byte()) end))
end

-- "[HOST:]PORT" -> host, port; or nil, a message naming what was given.
function M.parse_address(s, what)
  local host, port = tostring(s):match("^(.+):(%d+)$")
  if not host then host, port = "127.0.0.1", tostring(s):match("^(%d+)$") end
  port = tonumber(port)
  if not port or port > 65535 or host == "" then
    return nil, string.format("%s: expected [HOST:]PORT (a port 0-65535), got '%s'", what, tostring(s))
  end
  return host, math.tointeger(port)
end

local STREAM = {} -- marks a route's answer as an event stream

-- A route's answer that streams server-sent events, each chunk pull()'s.
function M.events(pull) return { [STREAM] = pull } end

local function same(a, b) -- compares in a time that does not depend on where they differ
  if type(a) ~= "string" or #a ~= #b then return false end
  local diff = 0
  for i = 1, #b do diff = diff | (a:byte(i) ~ b:byte(i)) end
  return diff == 0
end

local function answer(status, value)
  return { status = status, headers = { ["content-type"] = "application/json",
    ["cache-control"] = "no-store" }, body = json.encode(value) .. "\n" }
end

-- Serves routes (path -> function(query, req) returning a value, or nil,
-- status, message) and page (the HTML of "/") on host:port. Returns the
-- server's ref, its URL with the token, and the token.
function M.start(opts)
  local tend = require "tend"
  local token = opts.token or M.token()
  local routes, page = opts.routes, opts.page
  local function handler(req)
    local q = req.query or {}
    if not same(q.token, token) then
      return answer(403, { error = "a token is needed: open the URL the observer printed (?token=...)" })
    end
    local post = (opts.post or {})[req.path]
    if (post and req.method ~= "POST") or (not post and req.method ~= "GET" and req.method ~= "HEAD") then
      local allow = post and "POST" or "GET, HEAD"
      local r = answer(405, { error = "only " .. allow .. ": " .. tostring(req.method) .. " " .. req.path })
      r.headers.allow = allow
      return r
    end
    if req.path == "/" or req.path == "/index.html" then
      return { status = 200, headers = { ["content-type"] = "text/html; charset=utf-8",
        ["cache-control"] = "no-store" }, body = page }
    end
    local route = routes[req.path]
    if not route then return answer(404, { error = "no such endpoint: " .. req.path }) end
    local ok, value, status, why = pcall(route, q, req)
    if not ok then return answer(500, { error = tostring(value) }) end
    if value == nil then return answer(status or 404, { error = why or "not found" }) end
    if type(value) == "table" and value[STREAM] then
      return { status = 200, headers = { ["content-type"] = "text/event-stream",
        ["cache-control"] = "no-store" }, body = value[STREAM] }
    end
    if type(value) == "string" then
      return { status = 200, headers = { ["content-type"] = opts.types and opts.types[req.path]
        or "text/plain; charset=utf-8", ["cache-control"] = "no-store" }, body = value }
    end
    return answer(200, value)
  end
  local ref = tend.http.serve({ host = opts.host or "127.0.0.1", port = opts.port or M.DEFAULT_PORT,
    handler = handler, max_body = 64 * 1024, timeout = 10, real = true }, opts.spawn)
  local port = tend.ask(ref, "port")
  local shown = opts.host or "127.0.0.1"
  if shown:find(":", 1, true) then shown = "[" .. shown .. "]" end
  return ref, string.format("http://%s:%d/?token=%s", shown, port, token), token
end

return M
