--[[
  due: the pool keys whose lease deadline has passed on Redis's clock, soonest first. Read only; each is
  then lapsed by lapse-3.lua, which checks again.

  KEYS[1]  deadlines: sorted set, member = pool key, score = deadline in ms
  ARGV[1]  at most this many keys

  Returns an array of pool keys (empty when none is due)
]]
local deadlines = KEYS[1]
local limit = ARGV[1]

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
return redis.call('ZRANGEBYSCORE', deadlines, '-inf', now, 'LIMIT', 0, limit)
