// Edges of --redis-url and a region's redis_url (docs/contract.md §6): the whole text must match, the
// boundaries of ports and dbs, empty credentials, the messages a refusal gives, and the description logged.
import { describe, expect, it } from 'vitest';
import { describeRedisTarget, parseRedisUrl, redactRedisUrl, RedisUrlError } from '../../src/store/redis/url.js';
import { PositionLostError, StoreUnavailableError } from '../../src/store/types.js';

const refusal = (url: string) => {
  try {
    parseRedisUrl(url);
  } catch (error) {
    expect(error).toBeInstanceOf(RedisUrlError);
    expect((error as Error).name).toBe('RedisUrlError');
    return (error as Error).message;
  }
  throw new Error(`accepted ${url}`);
};

describe('redis URLs: edges', () => {
  it('text around the URL is refused', () => {
    expect(refusal(' redis://h')).toMatch(/must look like scheme:\/\/host:port/);
    expect(refusal('x redis://h')).toMatch(/must look like scheme:\/\/host:port/);
  });

  it('a query or a fragment is refused, whatever follows', () => {
    expect(refusal('redis://h?')).toMatch(/query strings and fragments are not supported/);
    expect(refusal('redis://h#x')).toMatch(/query strings and fragments are not supported/);
  });

  it('names the schemes it knows when refusing another', () => {
    expect(refusal('http://h:6379')).toBe(
      'redis url http://h:6379: unknown scheme "http" (use redis, rediss, redis+sentinel, rediss+sentinel, redis+cluster, rediss+cluster)',
    );
  });

  it('the host follows the last @ of the userinfo', () => {
    expect(parseRedisUrl('redis://u:p@h:7000')).toMatchObject({ address: { host: 'h', port: 7000 }, credentials: { username: 'u', password: 'p' } });
    expect(parseRedisUrl('redis://h:7000')).toMatchObject({ address: { host: 'h', port: 7000 }, credentials: {} });
  });

  it('an empty password is no password', () => {
    expect(parseRedisUrl('redis://u:@h').credentials).toEqual({ username: 'u' });
    expect(parseRedisUrl('redis://u@h').credentials).toEqual({ username: 'u' });
  });

  it('port 65535 is accepted, 65536 refused; db up to five digits', () => {
    expect(parseRedisUrl('redis://h:65535')).toMatchObject({ address: { port: 65535 } });
    expect(refusal('redis://h:65536')).toMatch(/port 65536 is not 1-65535/);
    expect(parseRedisUrl('redis://h/12345')).toMatchObject({ db: 12345 });
    expect(parseRedisUrl('redis://h/10')).toMatchObject({ db: 10 });
    for (const db of ['123456', 'x1', '1x', '-1']) expect(refusal(`redis://h/${db}`)).toBe(`redis url redis://h/${db}: db "${db}" is not a number`);
  });

  it('a sentinel URL needs a master name, with an optional db', () => {
    expect(parseRedisUrl('redis+sentinel://s1,s2/mymaster')).toMatchObject({ kind: 'sentinel', masterName: 'mymaster', db: 0 });
    expect(parseRedisUrl('redis+sentinel://s1/mymaster/3')).toMatchObject({ masterName: 'mymaster', db: 3 });
    expect(parseRedisUrl('redis+sentinel://s1/mymaster/')).toMatchObject({ masterName: 'mymaster', db: 0 });
    expect(refusal('redis+sentinel://s1//3')).toMatch(/path must be \/<masterName>\[\/<db>\]$/);
  });

  it('masks the password of a URL it refuses or logs', () => {
    expect(redactRedisUrl('redis://u:secret@h:1')).toBe('redis://u:***@h:1');
    expect(redactRedisUrl('redis://:secret@h:1')).toBe('redis://:***@h:1');
    expect(redactRedisUrl('redis://u@h:1/x:y@z')).toBe('redis://u@h:1/x:y@z');
    expect(redactRedisUrl('xredis://u:secret@h')).toBe('xredis://u:***@h');
  });

  it('describes each kind of target for the logs', () => {
    expect(describeRedisTarget(parseRedisUrl('redis://h:7000/2'))).toBe('redis h:7000 db 2');
    expect(describeRedisTarget(parseRedisUrl('rediss://[::1]'))).toMatch(/^redis \[::1\]:6379 db 0/);
    expect(describeRedisTarget(parseRedisUrl('redis+sentinel://s1,s2:26380/m/1'))).toBe('redis sentinel s1:26379,s2:26380 master m db 1');
  });
});

describe('store errors', () => {
  it('name themselves and say what was lost', () => {
    expect(new StoreUnavailableError('x').name).toBe('StoreUnavailableError');
    const lost = new PositionLostError('42');
    expect(lost.name).toBe('PositionLostError');
    expect(lost.message).toBe('the change log no longer reaches back to position 42');
    expect(lost.position).toBe('42');
  });
});
