--[[
  stamp: a writer of the region (a home replica) says it can write, on Redis's clock, and records the
  outage it lived through (docs/contract.md §9, "Renewal window"). Run by every writer at least once a
  second (with its sweeps) and before its snapshots.
  An outage is recorded when the caller's own commands failed since its last stamp AND nobody stamped for
  longer than the stale bound: then the store answered no writer in time (frozen, down, failing over, cut
  off). Writers that were merely gone (all stopped, Redis up) record nothing: a writer that starts has no
  failures to report, so their pools lapse as without outages. The first writer back records the outage
  and stamps in the same step, so every later reader finds either a fresh stamp with the record, or a
  stale stamp (see lapse-rule.lua). A writer that lived through the same outage and gets through a little
  later (its connection was still being opened again) extends the record's end to its own first stamp:
  its PoolRelays could renew only from then on, so their window runs from then too.

  KEYS[1]  stamp: string, the latest stamp (Redis TIME, ms)
  KEYS[2]  outages: sorted set, score = end (ms), member = "start:end:window:covered" (ms, then the leases
           the outage held: see `covered` below)
  KEYS[3]  deadlines: sorted set of the pools' lease deadlines (to count the leases the window covers)
  KEYS[4]  router deadlines: sorted set of the routers' lease deadlines (the same Redis, one record for
           both kinds: whichever writer records the outage counts the leases of both)
  KEYS[5]  gap renewals: sorted set of the leases (hash key, score = deadline) renewed after their
           deadline while the stamp was stale (heartbeat-6.lua): a renewal that reached Redis before any
           writer stamped again moved its deadline out of the outage, yet the outage held it. Counted by
           the record, and emptied by every stamp (the gap it belongs to ends with the stamp).
  ARGV[1]  1 when the caller's commands failed since its last stamp, else 0
  ARGV[2]  stale bound in ms: a gap between stamps longer than this, with failures, is an outage
  ARGV[3]  renewal window in ms (the writer's heartbeat interval + command timeout), kept with the outage
  ARGV[4]  outages kept (the oldest beyond this are removed)
  ARGV[5]  the caller's own last stamp (Redis ms) as of when it sent this call, -1 when it never stamped
  ARGV[6]  how long after a recorded outage's end a writer that lived through it may still extend it (ms)

  Returns {now_ms, recorded, start_ms, covered}
    recorded  1 when this call recorded an outage [start_ms, now_ms], 2 when it extended the last one to
              end now, else 0 (start_ms, covered then 0)
    covered   leases (pools' and routers') whose deadline falls in [start, now + window], and those renewed
              before this record whose renewed deadline falls after it: the ones the outage held
]]
local stampKey = KEYS[1]
local outagesKey = KEYS[2]

-- Leases of both kinds whose deadline falls in [from, to].
local function leases_between(from, to)
  return redis.call('ZCOUNT', KEYS[3], from, to) + redis.call('ZCOUNT', KEYS[4], from, to)
end
local staleMs = tonumber(ARGV[2])
local windowMs = tonumber(ARGV[3])
local keep = tonumber(ARGV[4])
local ownLast = tonumber(ARGV[5])
local extendMs = tonumber(ARGV[6])

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local previous = tonumber(redis.call('GET', stampKey))
-- A writer whose own last stamp is older than the stale bound lived through a gap too, whatever it says:
-- this call may be one it sent before the outage, run only now (a command queued in a socket buffer, or
-- sent again by the client after it reconnected).
local failed = ARGV[1] == '1' or (ownLast >= 0 and now - ownLast > staleMs)

local recorded, start, covered = 0, 0, 0
if failed and previous ~= nil and now - previous > staleMs then
  start = previous
  -- Renewed in the gap to a deadline past the window (within it, leases_between counts them already).
  covered = leases_between(start, now + windowMs) + redis.call('ZCOUNT', KEYS[5], '(' .. (now + windowMs), '+inf')
  redis.call('ZADD', outagesKey, now, string.format('%d:%d:%d:%d', start, now, windowMs, covered))
  redis.call('ZREMRANGEBYRANK', outagesKey, 0, -(keep + 1))
  recorded = 1
elseif failed then
  -- Another writer got through first: if this one had not stamped since before that outage ended, it
  -- lived through it too, and the outage ends for its PoolRelays only now.
  local last = redis.call('ZRANGE', outagesKey, -1, -1)[1]
  if last then
    local s, e, w, c = string.match(last, '^(%d+):(%d+):(%d+):?(%d*)$')
    s, e, w, c = tonumber(s), tonumber(e), tonumber(w), tonumber(c) or 0
    if s and e >= ownLast and now > e and now - e <= extendMs then
      start = s
      covered = math.max(c, leases_between(start, now + w))
      redis.call('ZREM', outagesKey, last)
      redis.call('ZADD', outagesKey, now, string.format('%d:%d:%d:%d', s, now, w, covered))
      recorded = 2
    end
  end
end
-- A clock stepped back never moves the stamp back: it says the latest time a writer could write.
if previous == nil or now > previous then redis.call('SET', stampKey, now) end
-- The stamp is fresh again: the gap's renewals are counted (when it was an outage) or no outage's at all.
redis.call('DEL', KEYS[5])
return {now, recorded, start, covered}
