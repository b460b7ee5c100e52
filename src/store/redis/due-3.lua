#!lua flags=no-writes
--[[
  due: the pool keys whose lease may lapse now on Redis's clock (TIME), judged a grace in the past,
  soonest first, with their deadlines: deadlines that passed, except those the renewal window still holds
  (lapse-rule.lua, docs/contract.md §9). Read only, and flagged no-writes, so it also runs on a read-only
  replica (a follower reading another region). The sweep lapses each with lapse-5.lua, which checks
  again; a follower pages through with ARGV[3] and ARGV[4] and treats each as lapsed.

  KEYS[1]  deadlines: sorted set, member = pool key, score = deadline in ms
  KEYS[2]  stamp: the writers' latest stamp (stamp-5.lua)
  KEYS[3]  outages: the recorded outages (stamp-5.lua)
  ARGV[1]  at most this many keys
  ARGV[2]  grace in ms: judged as of now - grace (deadlines, and the ends of renewal windows)
  ARGV[3]  lowest deadline to list (inclusive), or "-inf": where a paging caller resumes
  ARGV[4]  how many members whose deadline equals ARGV[3] the caller already has (skipped)
  ARGV[5]  stale bound of the stamp in ms
  ARGV[6]  the reader's last read (Redis ms) of this store, -1 for none or a writer
  ARGV[7]  since when the reader has read without a gap (Redis ms), -1 for a writer
  ARGV[8]  writers silent for this long while the reader read throughout are gone (ms)

  Returns {now_ms, read_since_ms, held_until_ms, key1, deadline1, key2, deadline2, ...}
    now_ms         Redis TIME in ms
    read_since_ms  the reader's unbroken reading as of this call (ARGV[7], or now_ms when ARGV[6] is
                   older than the stale bound), -1 for a writer
    held_until_ms  when the earliest open renewal window runs out (Redis ms), -1 when none is open: a
                   sweeper comes back then rather than for deadlines that passed and are held
    deadline       the member's score, as Redis writes it
]]
-- @include lapse-rule.lua
local deadlines = KEYS[1]
local limit = ARGV[1]
local graceMs = tonumber(ARGV[2])
local from = ARGV[3]
local skip = ARGV[4]
local staleMs = tonumber(ARGV[5])
local lastReadMs = tonumber(ARGV[6])
local readSinceMs = tonumber(ARGV[7])
local silentMs = tonumber(ARGV[8])

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
if readSinceMs >= 0 and (lastReadMs < 0 or now - lastReadMs > staleMs) then readSinceMs = now end
local horizon, _, heldUntil = lapse_horizon(KEYS[2], KEYS[3], now - graceMs, staleMs, readSinceMs, silentMs)
local due = redis.call('ZRANGEBYSCORE', deadlines, from, horizon, 'WITHSCORES', 'LIMIT', skip, limit)
table.insert(due, 1, heldUntil and heldUntil + graceMs or -1)
table.insert(due, 1, readSinceMs)
table.insert(due, 1, now)
return due
