#!lua flags=no-writes
--[[
  read-changes: the change log entries after a position, checking in the same atomic step that the log
  still reaches back to it, so a follower never silently skips an entry.
  The position is still reachable when its entry is still in the stream (trimming only drops the oldest
  entries, so nothing after it was dropped), or, for "0-0", when the stream never dropped anything.
  A position whose entry is gone was trimmed away, or was lost with its stream (a Redis restart without
  persistence or a failover that lost the tail, where new entries get new ids): the follower must
  re-read a snapshot.
  Read only, and flagged no-writes, so it also runs on a read-only replica (a follower reading another
  region's Redis through a replica in its own region).

  KEYS[1]  change log stream
  ARGV[1]  position: a stream id (ms-seq) the follower has applied, or "0-0"
  ARGV[2]  at most this many entries

  Returns {1, entries}: entries as XRANGE gives them ({id, {field, value, ...}}), possibly none
       or {0}: the log no longer reaches back to the position
  Errors when XINFO STREAM lacks entries-added (Redis older than 7.0)
]]
local changes = KEYS[1]
local position = ARGV[1]
local count = ARGV[2]

if position ~= '0-0' then
  if #redis.call('XRANGE', changes, position, position) == 0 then return {0} end
elseif redis.call('EXISTS', changes) == 1 then
  local info = redis.call('XINFO', 'STREAM', changes)
  local field = {}
  for i = 1, #info, 2 do field[info[i]] = info[i + 1] end
  if field['entries-added'] == nil then
    return redis.error_reply('poolscope needs Redis 7.0 or newer (XINFO STREAM entries-added)')
  end
  if field['entries-added'] ~= field['length'] then return {0} end
end
return {1, redis.call('XRANGE', changes, '(' .. position, '+', 'COUNT', count)}
