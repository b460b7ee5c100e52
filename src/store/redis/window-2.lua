#!lua flags=no-writes
--[[
  window: the renewal window as a reader applies it (lapse-rule.lua, docs/contract.md §9): the latest
  deadline that may lapse now, and the last recorded outage. A snapshot keeps every lease whose deadline is
  past that horizon (its lapse, if it comes, follows in the change log or the due read); the region's
  status shows the last outage and whether its window is open. Read only, flagged no-writes.

  KEYS[1]  stamp: the writers' latest stamp (stamp-5.lua)
  KEYS[2]  outages: the recorded outages (stamp-5.lua)
  ARGV[1]  stale bound of the stamp in ms
  ARGV[2]  the reader's last read (Redis ms) of this store, -1 for none
  ARGV[3]  since when the reader has read without a gap (Redis ms), -1 for a writer
  ARGV[4]  writers silent for this long while the reader read throughout are gone (ms)

  Returns {now_ms, read_since_ms, horizon_ms, stamp_ms, last_start, last_end, last_window, covered}
    horizon_ms   the latest deadline that may lapse now
    stamp_ms     the writers' latest stamp, -1 when none
    last_*       the last recorded outage (ms), -1 each when none was recorded
    covered      leases whose deadline fell in the last outage or its window when it was recorded
]]
-- @include lapse-rule.lua
local staleMs = tonumber(ARGV[1])
local lastReadMs = tonumber(ARGV[2])
local readSinceMs = tonumber(ARGV[3])
local silentMs = tonumber(ARGV[4])

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
if readSinceMs >= 0 and (lastReadMs < 0 or now - lastReadMs > staleMs) then readSinceMs = now end
local horizon, stamp = lapse_horizon(KEYS[1], KEYS[2], now, staleMs, readSinceMs, silentMs)

local lastStart, lastEnd, lastWindow, covered = -1, -1, -1, 0
local last = redis.call('ZRANGE', KEYS[2], -1, -1)
if last[1] then
  local s, e, w, c = string.match(last[1], '^(%d+):(%d+):(%d+):?(%d*)$')
  if s then
    lastStart, lastEnd, lastWindow, covered = tonumber(s), tonumber(e), tonumber(w), tonumber(c) or 0
  end
end
return {now, readSinceMs, horizon, stamp or -1, lastStart, lastEnd, lastWindow, covered}
