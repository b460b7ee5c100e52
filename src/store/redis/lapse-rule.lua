--[[
  lapse-rule (a chunk, not a script: scripts.ts puts it in place of the line `-- @include lapse-rule.lua`
  of each script that lapses, lists due, renews or reads leases, so one rule serves them all).

  When a lease whose deadline has passed may lapse (docs/contract.md §9). During an outage of the store, and
  for one renewal window after it, PoolRelays could not renew: a deadline that passed then is no evidence.
  The evidence lives in Redis, on Redis's clock, so every reader (the region's sweepers, its followers, a
  replica started later) applies the same rule:
  - stamp: the latest Redis TIME a writer stamped (stamp-5.lua, at least every second while one runs);
  - outages: sorted set, score = end, member = "start:end:window:covered" (ms, and the leases it held when
    recorded), recorded by a writer that lived through one (its commands failed and nobody stamped for longer than the stale bound).
  A deadline at or after the start of an outage whose window (end + window) has not run may not lapse yet:
  so the latest deadline that may lapse now is one ms before the earliest such start. And while the stamp
  is stale (no writer stamped within the stale bound), a deadline after it may be in an outage nobody
  recorded yet: it is held too, unless the reader knows the writers are gone (it read the store
  throughout the time the stamp went stale, or for `silentMs` since it started reading).

  lapse_horizon(stampKey, outagesKey, now, staleMs, readSinceMs, silentMs)
    now          Redis TIME in ms (minus a reader's grace, if any)
    staleMs      a stamp older than this is stale
    readSinceMs  since when (Redis ms) the reader has read the store without a gap longer than staleMs;
                 -1 for a writer (it never concludes that writers are gone: it is one)
    silentMs     a stale stamp for this long while the reader read throughout means the writers are gone
  Returns horizon, stamp, heldUntil: the latest deadline that may lapse at `now`, the stamp (false when
  none), and when the earliest open window that holds deadlines runs out (false when none does).
]]
local function lapse_horizon(stampKey, outagesKey, now, staleMs, readSinceMs, silentMs)
  local horizon = now
  local stamp = tonumber(redis.call('GET', stampKey))
  if stamp == nil or now - stamp > staleMs then
    local gone = false
    if readSinceMs >= 0 then
      gone = (stamp ~= nil and readSinceMs <= stamp + staleMs) or now - readSinceMs >= silentMs
    end
    if not gone then horizon = math.min(horizon, stamp or -1) end
  end
  -- Outages whose window may still be open (their score is their end; windows are far below a day).
  local heldUntil = false
  local outages = redis.call('ZRANGEBYSCORE', outagesKey, now - 86400000, '+inf')
  for i = 1, #outages do
    local s, e, w = string.match(outages[i], '^(%d+):(%d+):(%d+)')
    local untilMs = s and tonumber(e) + tonumber(w)
    if untilMs and untilMs > now then
      horizon = math.min(horizon, tonumber(s) - 1)
      if not heldUntil or untilMs < heldUntil then heldUntil = untilMs end
    end
  end
  return horizon, stamp or false, heldUntil
end
