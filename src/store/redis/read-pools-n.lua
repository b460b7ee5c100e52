#!lua flags=no-writes
--[[
  read-pools: the fields of many pool hashes in one command (a snapshot reads the pools in steps of about
  a thousand; one HMGET each would cost a client round of work per pool). Read only, and flagged
  no-writes, so it also runs on a read-only replica.
  The key count varies with the step, so the file is named -n rather than by a fixed count.

  KEYS[i]  the hash of a pool, i = 1..n

  Returns one entry per key, in KEYS order: {registration, renewed_at_ms, lease_ms, version, changed_at_ms},
  each field false (nil) when the hash is gone (it expired at its lease deadline, or was lapsed);
  changed_at_ms alone is nil in a hash an older version wrote
]]
local rows = {}
for i = 1, #KEYS do
  rows[i] = redis.call('HMGET', KEYS[i], 'registration', 'renewed_at_ms', 'lease_ms', 'version', 'changed_at_ms')
end
return rows
