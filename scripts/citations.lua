-- scripts/citations.lua: checks that what the sources cite is in the
-- repository (docs/style.md, "Comments state contracts").
--
--   build/tend scripts/citations.lua [ROOT]   (ROOT: the repository, .)
--
-- Violations, one line each as "citations: <file>:<line>: <what>", then
-- exit 1:
--   1. a citation of the design ("design §5.5", "design §3.1, §7",
--      "design §5.1-§5.4", "docs/design.md §6") names a section that
--      docs/design.md has no heading for; in docs/design.md itself, so
--      does any bare "§x.y";
--   2. a file points outside the repository: a parent's shared folder,
--      a machine path, or the documents the design and style replaced
--      (the upper-case DESIGN and STYLE files);
--   3. a comment in code (src, lua, spec, scripts, examples, bench, the
--      Makefile, .ci) cites an issue or an item of one: a comment states
--      its reason itself, or cites the design.
-- The files are those git knows (tracked, or new and not ignored), or
-- every file under ROOT but build/ and .git/ when git is not there.
-- A comment is found by its mark, not by parsing: in C, /* */ and // with
-- strings left out; in Lua, from "--" on (a "--" in a string counts); in
-- the rest, from "#" on.

local root = (arg[1] or "."):gsub("(.)/+$", "%1")
local SELF = "scripts/citations.lua" -- names what it forbids
local DESIGN = "docs/design.md"

local failed = false
local function violation(file, line, what)
  print(("citations: %s:%d: %s"):format(file, line, what))
  failed = true
end

local function quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function lines_of(cmd)
  local out = {}
  local p = assert(io.popen(cmd))
  for line in p:lines() do out[#out + 1] = line end
  p:close()
  return out
end

local function read(path)
  local f = io.open(root .. "/" .. path, "rb")
  if not f then return nil end
  local text = f:read("a")
  f:close()
  return text
end

-- The repository's files, relative to root, sorted.
local function files()
  local list = lines_of(("cd %s && git ls-files --cached --others --exclude-standard 2>/dev/null | sort -u")
    :format(quote(root)))
  if #list == 0 then
    list = lines_of(("cd %s && find . -path ./build -prune -o -path ./.git -prune -o -type f -print | sort")
      :format(quote(root)))
    for i, p in ipairs(list) do list[i] = p:gsub("^%./", "") end
  end
  return list
end

-- The line number of byte position pos in text.
local function line_at(text, pos)
  local n = 1
  for _ in text:sub(1, pos - 1):gmatch("\n") do n = n + 1 end
  return n
end

-- Rule 1 ------------------------------------------------------------------

-- The section numbers of docs/design.md: "## 5. Semantics" gives "5",
-- "### 5.1 Failure handling" gives "5.1".
local function sections_of(text)
  local have, count = {}, 0
  for line in text:gmatch("[^\n]+") do
    local n = line:match("^#+%s+(%d[%d%.]*)")
    if n then
      have[n:gsub("%.+$", "")] = true
      count = count + 1
    end
  end
  return have, count
end

local SECTION = "§(%d[%d%.]*)"
-- What may stand between "design" and a section it cites, or between two
-- sections of one citation: "design §3.1, §5.1-§5.4 and §7".
local CHAIN = "[Dd][Ee][Ss][Ii][Gg][Nn][%.md]*%s*[%s§%d%.,%-and]*$"

local function check_sections(path, text, have, bare)
  for pos, n in text:gmatch("()" .. SECTION) do
    n = n:gsub("%.+$", "")
    local before = text:sub(math.max(1, pos - 160), pos - 1)
    if (bare or before:find(CHAIN)) and not have[n] then
      violation(path, line_at(text, pos), ("cites §%s, which %s does not have"):format(n, DESIGN))
    end
  end
end

-- Rule 2 ------------------------------------------------------------------

local OUTSIDE = {
  { "%.%./sha" .. "red", "points outside the repository (the shared folder beside it)" },
  { "/work/", "names a machine path (/work/)" },
  { "DESIGN%.md", "cites DESIGN.md, which is not in the repository: cite design §x.y (" .. DESIGN .. ")" },
  { "DESIGN" .. " §", "cites the old design document by its upper-case name: cite design §x.y (" .. DESIGN .. ")" },
  { "STYLE%.md", "cites STYLE.md, which is not in the repository: docs/style.md" },
  { "ANCHORS%.md", "cites ANCHORS.md, which is not in the repository" },
}

local function check_outside(path, text)
  for _, rule in ipairs(OUTSIDE) do
    local init = 1
    while true do
      local s, e = text:find(rule[1], init)
      if not s then break end
      violation(path, line_at(text, s), rule[2])
      init = e + 1
    end
  end
end

-- Rule 3 ------------------------------------------------------------------

local CODE_DIRS = { src = true, lua = true, spec = true, scripts = true, examples = true, bench = true,
  [".ci"] = true }

local function is_code(path)
  return CODE_DIRS[path:match("^([^/]+)/")] or path == "Makefile"
end

local function blank(s) return (s:gsub("[^\n]", " ")) end

-- Each line of text blanked up to the comment mark (a Lua pattern), kept
-- from there on.
local function after_mark(text, mark)
  return (text:gsub("[^\n]*", function(line)
    local s = line:find(mark)
    if not s then return blank(line) end
    return blank(line:sub(1, s - 1)) .. line:sub(s)
  end))
end

-- text with everything but its comments blanked, newlines kept.
local function comments_of(path, text)
  if not path:find("%.[ch]$") then
    return after_mark(text, path:find("%.lua$") and "%-%-" or "#")
  end
  -- C: strings blanked first, so that a "/*" or "//" in one opens nothing
  local t = text:gsub('"[^"\n]*"', blank)
  local out, pos = {}, 1
  for s, c, e in t:gmatch("()(/%*.-%*/)()") do
    out[#out + 1] = after_mark(t:sub(pos, s - 1), "//")
    out[#out + 1] = c
    pos = e
  end
  out[#out + 1] = after_mark(t:sub(pos), "//")
  return table.concat(out)
end

local ISSUE = {
  "[Ii][Ss][Ss][Uu][Ee][Ss]?[%s:#]*%d+",
  "[Ii][Ss][Ss][Uu][Ee]:",
  "[Ii]tems?%s+%d+",
}

local function check_issues(path, text)
  local c = comments_of(path, text)
  for _, pattern in ipairs(ISSUE) do
    local init = 1
    while true do
      local s, e = c:find(pattern, init)
      if not s then break end
      violation(path, line_at(c, s), "a comment cites an issue (" .. c:sub(s, e) ..
        "...): state the reason, or cite design §x.y")
      init = e + 1
    end
  end
end

-- Main --------------------------------------------------------------------

local design = read(DESIGN)
if not design then
  print("citations: " .. DESIGN .. ": missing")
  os.exit(1)
end
local have, count = sections_of(design)
local list = files()
local checked = 0
for _, path in ipairs(list) do
  local text = path ~= SELF and read(path)
  if text and not text:find("\0", 1, true) then
    checked = checked + 1
    check_sections(path, text, have, path == DESIGN)
    check_outside(path, text)
    if is_code(path) then check_issues(path, text) end
  end
end
if failed then os.exit(1) end
print(("citations: ok (%d files; %d sections in %s)"):format(checked, count, DESIGN))
