-- The flaky service: `GET /<uuid>` answers 200 `{"value":N}` or 500,
-- half and half, decided by the seed: each request for a uuid is an
-- attempt (1, 2, ...) and the seed, the uuid and the attempt decide its
-- answer, so a retry may succeed where the first try failed, and a run
-- with one seed gets the same answers in the same order every time (a
-- client's retries and streams can be checked against it). N is the
-- uuid's own, whichever attempt gets it. Anything but a uuid is 404;
-- anything but GET, 405.
--
-- As a module (examples/http on package.path):
--   local flaky = require("flaky_service")
--   local server = flaky.start{ port = 0, seed = 42 }   -- the server's ref
--   flaky.answer(42, uuid [, attempt])  --> 200, '{"value":N}'  or  500, nil
-- As a script: build/tend examples/http/flaky_service.lua [SEED [N]]
-- serves on a free port, asks it for N uuids (default 20) and prints how
-- many answered and how many failed; `serve` as the first argument keeps
-- it serving on port 8081 (curl http://127.0.0.1:8081/<uuid>).
local tend = require "tend"

local M = {}

-- The seed's hash of a string: FNV-1a, 32 bits, then MurmurHash3's
-- finalizer (so that similar strings get unlike hashes).
local function hash(seed, s)
  local h = (2166136261 ~ seed) & 0xffffffff
  for i = 1, #s do
    h = ((h ~ s:byte(i)) * 16777619) & 0xffffffff
  end
  h = ((h ~ (h >> 16)) * 0x85ebca6b) & 0xffffffff
  h = ((h ~ (h >> 13)) * 0xc2b2ae35) & 0xffffffff
  return h ~ (h >> 16)
end

local UUID = "^%x%x%x%x%x%x%x%x%-%x%x%x%x%-%x%x%x%x%-%x%x%x%x%-%x%x%x%x%x%x%x%x%x%x%x%x$"

-- What the service with this seed answers for uuid at its attempt-th
-- request (default 1): 200 and the JSON body, or 500 (nil body). Half of
-- the attempts fail, which half is the seed's.
function M.answer(seed, uuid, attempt)
  uuid = uuid:lower()
  local h = hash(seed, uuid)
  local try = (attempt or 1) == 1 and h or hash(seed, uuid .. "#" .. attempt)
  if try & 1 == 1 then return 500, nil end
  return 200, string.format('{"value":%d}', (h >> 1) % 1000)
end

-- The i-th uuid of a seed (version 4 layout), for clients and tests.
function M.uuid(seed, i)
  local a, b = hash(seed, "a" .. i), hash(seed, "b" .. i)
  local c, d = hash(seed, "c" .. i), hash(seed, "d" .. i)
  return string.format("%08x-%04x-4%03x-%04x-%04x%08x", a, b >> 16, b & 0xfff,
    0x8000 | (c & 0x3fff), c >> 16, d)
end

-- start{ port = 0, host = "127.0.0.1", seed = 1, name } -> the server's
-- ref (tend.http.serve: a child of the caller; tend.ask(ref, "port")).
function M.start(opts)
  opts = opts or {}
  local seed = opts.seed or 1
  if math.type(seed) ~= "integer" then
    error("flaky_service.start: seed: expected an integer, got " .. tostring(seed), 2)
  end
  local attempts = {} -- uuid -> requests so far (handlers run one at a time)
  return tend.http.serve({
    host = opts.host, port = opts.port or 0, name = opts.name,
    handler = tend.http.router({
      { "GET", "/:id", function(req)
        if not req.params.id:match(UUID) then return nil, 404 end
        local id = req.params.id:lower()
        attempts[id] = (attempts[id] or 0) + 1
        local status, body = M.answer(seed, id, attempts[id])
        if status ~= 200 then return nil, status end
        return { status = 200, headers = { ["content-type"] = "application/json" }, body = body }
      end },
    }),
  })
end

local modname = ...
if type(modname) == "string" and modname:match("flaky_service$") then return M end

-- ------------------------------------------------------------ the script
if arg[1] == "serve" then
  local server = M.start({ port = 8081, seed = tonumber(arg[2]) or 1 })
  print("serving on http://127.0.0.1:" .. tend.ask(server, "port") .. "/<uuid> (Ctrl-C ends)")
  return
end
local seed, n = math.tointeger(tonumber(arg[1])) or 1, math.tointeger(tonumber(arg[2])) or 20
local server = M.start({ seed = seed })
local base = "http://127.0.0.1:" .. tend.ask(server, "port") .. "/"
local ok, failed, right = 0, 0, 0
for i = 1, n do
  local uuid = M.uuid(seed, i)
  local r = tend.http.get(base .. uuid)
  local status, body = M.answer(seed, uuid)
  if r.status == 200 then ok = ok + 1 else failed = failed + 1 end
  if r.status == status and (body == nil or r.body == body) then right = right + 1 end
end
local missing = tend.http.get(base .. "not-a-uuid").status
print(string.format("flaky_service: %d requests, %d answered, %d failed with 500 (seed %d); "
  .. "%d as the seed says; not-a-uuid %d", n, ok, failed, seed, right, missing))
tend.stop(server)
tend.shutdown()
