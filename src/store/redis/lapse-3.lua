--[[
  lapse: end one pool's lease if, on Redis's clock, its deadline has passed, and log one `lapse`.
  Re-checks the deadline, so any number of replicas may sweep at once: the lease renewed since it was
  found due is left alone, and of two replicas lapsing the same lease only the first logs it.
  The deadlines member, not the pool hash, says whether the lease is still to be lapsed: the hash expires
  by itself at the deadline (PEXPIREAT in heartbeat-3.lua), usually before a sweep comes by, and its
  lapse is logged all the same.

  KEYS[1]  the pool's hash (often already expired)
  KEYS[2]  deadlines: sorted set, member = pool key, score = deadline in ms
  KEYS[3]  change log stream
  ARGV[1]  pool key (the deadlines member)
  ARGV[2]  change log cap (XADD MAXLEN ~)

  Returns 1 when this call lapsed the lease and logged it,
          0 when the lease is not due (renewed meanwhile) or is already gone (lapsed by another replica)
]]
local poolHash = KEYS[1]
local deadlines = KEYS[2]
local changes = KEYS[3]
local member = ARGV[1]
local cap = ARGV[2]

local deadline = redis.call('ZSCORE', deadlines, member)
if not deadline then return 0 end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
if tonumber(deadline) > now then return 0 end

redis.call('ZREM', deadlines, member)
-- Usually expired already; a hash left by an older version (which kept it for a few leases) goes too.
redis.call('DEL', poolHash)
-- at_ms is when the lease ran out, not when a sweep noticed.
redis.call('XADD', changes, 'MAXLEN', '~', cap, '*', 'type', 'lapse', 'key', member, 'at_ms', deadline)
return 1
