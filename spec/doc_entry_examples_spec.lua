-- The examples of the reference's entries that run under the virtual
-- clock (spec/doc_entry_examples.lua says what passing is); the others
-- are spec/realtime/doc_entry_examples_spec.lua's. Each runs as its own
-- tend process.
local examples = require "doc_entry_examples"

TestDocEntryExamples = {}
examples.define(TestDocEntryExamples, examples.virtual)
