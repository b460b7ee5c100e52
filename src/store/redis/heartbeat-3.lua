--[[
  heartbeat: renew (or create) one pool's lease, judged on Redis's clock (TIME).
  Writes the registration and its deadline together, and logs only what a follower needs: an `upsert`
  when the pool is new or its content changed, preceded by a `lapse` when the previous lease had already
  run out without being swept (so the log reads lapse, then upsert, as if the sweep had come first).
  A plain renewal moves the deadline and logs nothing.
  The pool's hash expires at the lease deadline (PEXPIREAT, on the same clock), so no reader, a read-only
  replica included, ever finds a lapsed registration; the deadlines set is what turns expiries into
  `lapse` entries (lapse-3.lua). A deadline member whose hash is gone has lapsed, swept or not.

  KEYS[1]  the pool's hash: registration, renewed_at_ms, lease_ms, version, changed_at_ms (when the
           content last changed; a plain renewal leaves it)
  KEYS[2]  deadlines: sorted set, member = pool key, score = deadline in ms
  KEYS[3]  change log: stream of upsert/lapse entries
  ARGV[1]  pool key (cluster_id/namespace/name): the deadlines member and the `key` of log entries
  ARGV[2]  registration as canonical JSON
  ARGV[3]  lease in ms
  ARGV[4]  change log cap (XADD MAXLEN ~)

  Returns changed: 1 when an upsert was logged (new pool or changed content), 0 for a plain renewal.
  (One integer: the heartbeat runs for every PoolRelay every few seconds, and the version, the renewal
  time and the upsert's id are in the hash and the log for whoever needs them.)
]]
local poolHash = KEYS[1]
local deadlines = KEYS[2]
local changes = KEYS[3]
local member = ARGV[1]
local registration = ARGV[2]
local leaseMs = tonumber(ARGV[3])
local cap = ARGV[4]

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

-- The live lease this heartbeat renews, if any: {registration, lease_ms, version}.
local live = nil
local deadline = redis.call('ZSCORE', deadlines, member)
if deadline then
  if tonumber(deadline) > now then
    live = redis.call('HMGET', poolHash, 'registration', 'lease_ms', 'version')
    if not live[1] then live = nil end
  end
  if not live then
    -- Run out (the hash expired or is due to), or, with a clock that stepped back, a hash gone before its
    -- deadline: followers still hold the old lease, so the log must end it before it starts the new one.
    local at = math.min(tonumber(deadline), now)
    redis.call('XADD', changes, 'MAXLEN', '~', cap, '*', 'type', 'lapse', 'key', member, 'at_ms', at)
    redis.call('DEL', poolHash)
  end
end

local changed = 1
local version = 1
if live then
  version = tonumber(live[3]) or 0
  if live[1] == registration and tonumber(live[2]) == leaseMs then
    changed = 0
  else
    version = version + 1
  end
end

if changed == 1 then
  redis.call('HSET', poolHash, 'registration', registration, 'renewed_at_ms', now, 'lease_ms', leaseMs,
    'version', version, 'changed_at_ms', now)
else
  redis.call('HSET', poolHash, 'renewed_at_ms', now)
end
redis.call('PEXPIREAT', poolHash, now + leaseMs)
redis.call('ZADD', deadlines, now + leaseMs, member)

if changed == 1 then
  redis.call('XADD', changes, 'MAXLEN', '~', cap, '*', 'type', 'upsert', 'key', member,
    'registration', registration, 'renewed_at_ms', now, 'lease_ms', leaseMs, 'version', version)
end
return changed
