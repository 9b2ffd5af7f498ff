-- The examples of the reference's entries that run under the real clock
-- (real programs, a local nats-server: spec/doc_entry_examples.lua says
-- what passing is). Run with `tend --real-time test
-- spec/realtime/doc_entry_examples_spec.lua` (scripts/test does).
local tend = require "tend"
local examples = require "doc_entry_examples"

if tend.virtual_time() then return end

TestDocEntryExamplesRealTime = {}
examples.define(TestDocEntryExamplesRealTime, function(flags) return not examples.virtual(flags) end)
