--[[
  lapse: end one pool's lease if, on Redis's clock, it may lapse now (its deadline has passed and no
  renewal window holds it: lapse-rule.lua), and log one `lapse`. Re-checks, so any number of replicas may
  sweep at once: the lease renewed since it was found due is left alone, and of two replicas lapsing the
  same lease only the first logs it.
  The pool's hash outlives its deadline (heartbeat-6.lua), so a lease the window held is still read whole;
  this is where it goes.

  KEYS[1]  the pool's hash
  KEYS[2]  deadlines: sorted set, member = pool key, score = deadline in ms
  KEYS[3]  change log stream
  KEYS[4]  stamp: the writers' latest stamp (stamp-5.lua)
  KEYS[5]  outages: the recorded outages (stamp-5.lua)
  ARGV[1]  pool key (the deadlines member)
  ARGV[2]  change log cap (XADD MAXLEN ~)
  ARGV[3]  stale bound of the stamp in ms

  Returns 1 when this call lapsed the lease and logged it,
          0 when the lease may not lapse (renewed meanwhile, or held by a renewal window) or is already
            gone (lapsed by another replica)
]]
-- @include lapse-rule.lua
local poolHash = KEYS[1]
local deadlines = KEYS[2]
local changes = KEYS[3]
local member = ARGV[1]
local cap = ARGV[2]
local staleMs = tonumber(ARGV[3])

local deadline = redis.call('ZSCORE', deadlines, member)
if not deadline then return 0 end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
if tonumber(deadline) > now then return 0 end
-- A writer: it never concludes that writers are gone (-1), it is one.
if tonumber(deadline) > lapse_horizon(KEYS[4], KEYS[5], now, staleMs, -1, 0) then return 0 end

redis.call('ZREM', deadlines, member)
redis.call('DEL', poolHash)
-- at_ms is when the lease ran out, not when a sweep noticed.
redis.call('XADD', changes, 'MAXLEN', '~', cap, '*', 'type', 'lapse', 'key', member, 'at_ms', deadline)
return 1
