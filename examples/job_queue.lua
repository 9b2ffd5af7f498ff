-- job_queue: a job queue served by a pool of workers. tend.pool supervises
-- 3 workers and routes each job to the one with the fewest queued jobs;
-- a job that fails for a moment is retried with backoff inside its worker
-- (tend.retry); each job is asked from its own task, so they run at once.
-- Run: tend --virtual-time examples/job_queue.lua
local tend = require "tend"

local attempts = {}
-- Every fourth job fails twice before it works (a flaky downstream).
local function work(job)
  attempts[job] = (attempts[job] or 0) + 1
  if job % 4 == 0 and attempts[job] < 3 then
    tend.raise("Unavailable", "downstream busy for job " .. job)
  end
  return job * job
end

local workers = tend.pool{
  name = "workers", size = 3, routing = "smallest_mailbox",
  strategy = tend.one_for_one{ max_retries = 3, within = 10 },
  factory = function(ctx)
    return function(job, ctx)
      ctx:sleep(0.1) -- the work takes time
      local result = tend.retry(function() return work(job) end,
        { min_backoff = 0.2, max_backoff = 1, random_factor = 0, max_restarts = 5 })
      ctx:reply({ result = result, by = ctx.self:name() })
    end
  end,
}
tend.register("jobs", workers)

local sum, by, left = 0, {}, 12
for job = 1, 12 do
  tend.after(0, function()
    local r = tend.ask("jobs", job, 10)
    sum, left = sum + r.result, left - 1
    by[r.by] = (by[r.by] or 0) + 1
  end)
end
while left > 0 do tend.sleep(0.1) end

local retries = 0
for _, n in pairs(attempts) do retries = retries + n - 1 end
local members = tend.count_children("jobs")
print(string.format("job_queue: 12 jobs done by %d workers (%d, %d, %d), %d retries, "
  .. "sum of squares %d, at %.1f s", members.active, by["1"], by["2"], by["3"], retries,
  sum, tend.now()))
tend.stop(workers)
