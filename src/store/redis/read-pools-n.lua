--[[
  read-pools: the fields of many pool hashes in one command (a snapshot reads the pools in steps of about
  a thousand; one HMGET each would cost a client round of work per pool). Read only.
  The key count varies with the step, so the file is named -n rather than by a fixed count.

  KEYS[i]  the hash of a pool, i = 1..n

  Returns one entry per key, in KEYS order: {registration, renewed_at_ms, lease_ms, version}, each field
  false (nil) when the hash is gone
]]
local rows = {}
for i = 1, #KEYS do
  rows[i] = redis.call('HMGET', KEYS[i], 'registration', 'renewed_at_ms', 'lease_ms', 'version')
end
return rows
