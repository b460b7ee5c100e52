--[[
  heartbeat: renew (or create) one pool's lease, judged on Redis's clock (TIME).
  Writes the registration and its deadline together, and logs only what a follower needs: an `upsert`
  when the pool is new or its content changed, preceded by a `lapse` when the previous lease had already
  run out without being swept (so the log reads lapse, then upsert, as if the sweep had come first).
  A plain renewal moves the deadline and logs nothing. A renewal of a lease whose deadline passed while a
  renewal window holds it (lapse-rule.lua, docs/contract.md §9) continues that lease, and is logged as an
  `upsert` (same version and content): a reader whose view of the lease ran out learns that it goes on.
  The pool's hash expires a backstop after its deadline (PEXPIREAT, on the same clock), later than any
  lapse a renewal window allows, so a lease held by one is still read whole; the sweep (lapse-5.lua)
  removes the hash when it lapses the lease. The deadlines set is what turns deadlines into lapses.

  KEYS[1]  the pool's hash: registration, renewed_at_ms, lease_ms, version, changed_at_ms (when the
           content last changed; a plain renewal leaves it)
  KEYS[2]  deadlines: sorted set, member = pool key, score = deadline in ms
  KEYS[3]  change log: stream of upsert/lapse entries
  KEYS[4]  stamp: the writers' latest stamp (stamp-5.lua)
  KEYS[5]  outages: the recorded outages (stamp-5.lua)
  KEYS[6]  gap renewals: sorted set, member = pool hash key, score = deadline. A lease whose deadline
           passed, renewed while the stamp is stale (Redis answers again, no writer stamped yet), is put
           here, and moved with each later renewal until the next stamp: the outage's record, made by that
           stamp, counts it among the leases the outage held (stamp-5.lua), as it would had it not been
           renewed first.
  ARGV[1]  pool key (cluster_id/namespace/name): the deadlines member and the `key` of log entries
  ARGV[2]  registration as canonical JSON
  ARGV[3]  lease in ms
  ARGV[4]  change log cap (XADD MAXLEN ~)
  ARGV[5]  how long the hash outlives the deadline, in ms (the backstop)
  ARGV[6]  stale bound of the stamp in ms
  ARGV[7]  the highest version of this pool's registration the caller knows in any region (0: none).
           A new lease or a content change takes a version above it and above the lease's own, so
           versions order content changes across regions without comparing their clocks (docs/contract.md
           §7): the caller follows every region, and the pool's lease there is shown by version.

  Returns changed: 1 when an upsert was logged (new pool, changed content, or a held lease continued),
  0 for a plain renewal. (One integer: the heartbeat runs for every PoolRelay every few seconds, and the
  version, the renewal time and the upsert's id are in the hash and the log for whoever needs them.)
]]
-- @include lapse-rule.lua
local poolHash = KEYS[1]
local deadlines = KEYS[2]
local changes = KEYS[3]
local member = ARGV[1]
local registration = ARGV[2]
local leaseMs = tonumber(ARGV[3])
local cap = ARGV[4]
local backstopMs = tonumber(ARGV[5])
local staleMs = tonumber(ARGV[6])
local knownVersion = tonumber(ARGV[7]) or 0

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

-- The live lease this heartbeat renews, if any: {registration, lease_ms, version, changed_at_ms}.
local live = nil
-- Its deadline passed, but a renewal window holds it: the lease goes on.
local held = false
-- The stamp went stale before this renewal of a lease that ran out: an outage nobody recorded yet.
local inGap = false
local deadline = tonumber(redis.call('ZSCORE', deadlines, member))
if deadline then
  -- The rule is read only for a deadline that passed (after an outage, or a relay that came back late).
  local horizon, stamp = now, false
  if deadline <= now then
    horizon, stamp = lapse_horizon(KEYS[4], KEYS[5], now, staleMs, -1, 0)
    inGap = not stamp or now - stamp > staleMs
  end
  if deadline > now or deadline > horizon then
    live = redis.call('HMGET', poolHash, 'registration', 'lease_ms', 'version', 'changed_at_ms')
    if not live[1] then live = nil end
    held = deadline <= now
  end
  if not live then
    -- Run out (and no window holds it), or, with a clock that stepped back, a hash gone before its
    -- deadline: followers still hold the old lease, so the log must end it before it starts the new one.
    local at = math.min(deadline, now)
    redis.call('XADD', changes, 'MAXLEN', '~', cap, '*', 'type', 'lapse', 'key', member, 'at_ms', at)
    redis.call('DEL', poolHash)
  end
end

local changed = 1
local version = math.max(0, knownVersion) + 1
local changedAt = now
if live then
  local own = tonumber(live[3]) or 0
  if live[1] == registration and tonumber(live[2]) == leaseMs then
    changed = 0
    version = own
    changedAt = tonumber(live[4]) or now
  else
    version = math.max(own, knownVersion) + 1
  end
end

if changed == 1 then
  redis.call('HSET', poolHash, 'registration', registration, 'renewed_at_ms', now, 'lease_ms', leaseMs,
    'version', version, 'changed_at_ms', now)
else
  redis.call('HSET', poolHash, 'renewed_at_ms', now)
end
redis.call('PEXPIREAT', poolHash, now + leaseMs + backstopMs)
redis.call('ZADD', deadlines, now + leaseMs, member)
if held and inGap then
  redis.call('ZADD', KEYS[6], now + leaseMs, poolHash)
else
  -- Already there (renewed earlier in the same gap): its deadline moves with the lease.
  redis.call('ZADD', KEYS[6], 'XX', now + leaseMs, poolHash)
end

if changed == 1 or held then
  redis.call('XADD', changes, 'MAXLEN', '~', cap, '*', 'type', 'upsert', 'key', member,
    'registration', registration, 'renewed_at_ms', now, 'lease_ms', leaseMs, 'version', version,
    'changed_at_ms', changedAt)
  return 1
end
return 0
