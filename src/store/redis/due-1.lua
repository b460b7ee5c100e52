#!lua flags=no-writes
--[[
  due: the pool keys whose lease deadline has passed on Redis's clock (TIME) by at least a grace, soonest
  first, with their deadlines. Read only, and flagged no-writes, so it also runs on a read-only replica
  (a follower reading another region). The sweep lapses each with lapse-3.lua, which checks again; a
  follower pages through with ARGV[3] and ARGV[4] and treats each as lapsed.
  A member is listed whether or not its pool hash still exists (the hash expires at the deadline).

  KEYS[1]  deadlines: sorted set, member = pool key, score = deadline in ms
  ARGV[1]  at most this many keys
  ARGV[2]  grace in ms: only deadlines <= now - grace
  ARGV[3]  lowest deadline to list (inclusive), or "-inf": where a paging caller resumes
  ARGV[4]  how many members whose deadline equals ARGV[3] the caller already has (skipped)

  Returns {now_ms, key1, deadline1, key2, deadline2, ...} (just {now_ms} when none is due)
    now_ms     Redis TIME in ms
    deadline   the member's score, as Redis writes it
]]
local deadlines = KEYS[1]
local limit = ARGV[1]
local graceMs = tonumber(ARGV[2])
local from = ARGV[3]
local skip = ARGV[4]

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local due = redis.call('ZRANGEBYSCORE', deadlines, from, now - graceMs, 'WITHSCORES', 'LIMIT', skip, limit)
table.insert(due, 1, now)
return due
