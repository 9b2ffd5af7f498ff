-- tend.http.serve{ tls = { cert, key } }: HTTPS on H2O with OpenSSL, a
-- certificate made by `openssl req` here, curl -k as the client (HTTP/1.1,
-- and HTTP/2 by ALPN); bad paths and files raise naming the option. Run
-- with the real clock: `tend --real-time test spec/realtime/http_tls_spec.lua`.
local lu = require "luaunit"
local tend = require "tend"
local H = require "helper"

if tend.virtual_time() then return end

TestHttpTls = {}

local dir
local function pem(name) return dir .. "/" .. name end

-- The certificates, made once (the first setUp).
function TestHttpTls:setUp()
  if dir then return end
  dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir -p " .. dir))
  local r = tend.process.run({ "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
    "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", pem("key.pem"), "-out",
    pem("cert.pem"), "-days", "2", "-subj", "/CN=localhost" })
  assert(r.status == 0, r.stderr)
  r = tend.process.run({ "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
    "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", pem("other.pem"), "-out",
    pem("othercert.pem"), "-days", "2", "-subj", "/CN=other" })
  assert(r.status == 0, r.stderr)
  local f = assert(io.open(pem("junk.pem"), "w"))
  f:write("not a certificate\n")
  f:close()
end

function TestHttpTls:tearDown() H.stop_user_and_assert_clean() end

local function serve()
  return tend.http.serve({ tls = { cert = pem("cert.pem"), key = pem("key.pem") },
    handler = function(req) return req.scheme .. " " .. req.version .. " " .. req.path end })
end

function TestHttpTls:test_https_over_http_1_1_and_http_2_by_alpn()
  local s = serve()
  local url = "https://127.0.0.1:" .. tend.ask(s, "port") .. "/secret"
  local r = tend.process.run({ "curl", "-s", "-k", "-i", "--http1.1", url })
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertStrMatches(r.stdout, "^HTTP/1.1 200 OK\r\n.*https 1.1 /secret$")
  r = tend.process.run({ "curl", "-s", "-k", "-i", "--http2", url })
  lu.assertEquals(r.status, 0, r.stderr)
  lu.assertStrMatches(r.stdout, "^HTTP/2 200 \r\n.*https 2 /secret$")
  -- without -k the self-made certificate is refused by the client
  r = tend.process.run({ "curl", "-s", url })
  lu.assertNotEquals(r.status, 0)
  -- plain HTTP on the TLS port: H2O drops it, the server lives
  r = tend.process.run({ "curl", "-s", "--max-time", "5", "http://127.0.0.1:"
    .. tend.ask(s, "port") .. "/" })
  lu.assertNotEquals(r.status, 0)
  r = tend.process.run({ "curl", "-s", "-k", url })
  lu.assertEquals(r.stdout, "https 2 /secret") -- curl asks for h2 by default
  lu.assertTrue(H.eventually(function() return tend.ask(s, "connections") == 0 end))
end

function TestHttpTls:test_a_streamed_body_over_tls()
  local s = tend.http.serve({ tls = { cert = pem("cert.pem"), key = pem("key.pem") },
    handler = function()
      local i = 0
      return { body = function()
        i = i + 1
        return i <= 3 and ("part" .. i .. ";") or nil
      end }
    end })
  local url = "https://127.0.0.1:" .. tend.ask(s, "port") .. "/"
  for _, v in ipairs({ "--http1.1", "--http2" }) do
    local r = tend.process.run({ "curl", "-s", "-k", v, url })
    lu.assertEquals({ r.status, r.stdout }, { 0, "part1;part2;part3;" })
  end
end

function TestHttpTls:test_bad_tls_options_raise_naming_the_option()
  local function err(tls)
    local ok, e = pcall(tend.http.serve, { tls = tls, handler = function() end })
    lu.assertFalse(ok)
    return tostring(e)
  end
  lu.assertStrContains(err({ cert = pem("nope.pem"), key = pem("key.pem") }),
    "tend.http.serve: tls.cert: cannot read " .. pem("nope.pem") .. ": No such file or directory")
  lu.assertStrContains(err({ cert = pem("cert.pem"), key = pem("nope.pem") }),
    "tend.http.serve: tls.key: cannot read " .. pem("nope.pem"))
  lu.assertStrContains(err({ cert = pem("junk.pem"), key = pem("key.pem") }),
    "tend.http.serve: tls.cert: not a PEM certificate chain (" .. pem("junk.pem") .. ")")
  lu.assertStrContains(err({ cert = pem("cert.pem"), key = pem("junk.pem") }),
    "tend.http.serve: tls.key: not a PEM private key")
  lu.assertStrContains(err({ cert = pem("cert.pem"), key = pem("other.pem") }),
    "tend.http.serve: tls.key: does not match the certificate")
  lu.assertStrContains(err({ cert = pem("cert.pem") }),
    "tend.http.serve: tls.key: expected the path of its PEM private key, got nil")
  lu.assertStrContains(err("yes"), "tend.http.serve: tls: expected a table { cert = path, key = path }")
  lu.assertStrContains(err({ cert = pem("cert.pem"), key = pem("key.pem"), ca = "x" }),
    "tend.http.serve: tls: expected only the keys cert and key, got \"ca\"")
  lu.assertTrue(H.eventually(function() return tend.stats().actors == 1 end)) -- none left
  os.execute("rm -rf " .. dir) -- the last test (luaunit runs them by name)
  dir = nil
end
