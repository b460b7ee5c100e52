import { describe, expect, it } from 'vitest';
import { describeRedisTarget, parseRedisUrl, redactRedisUrl, RedisUrlError } from '../../src/store/redis/url.js';

describe('parseRedisUrl', () => {
  it('reads a single server', () => {
    expect(parseRedisUrl('redis://127.0.0.1:6380/2')).toEqual({
      kind: 'standalone',
      address: { host: '127.0.0.1', port: 6380 },
      tls: false,
      db: 2,
      credentials: {},
    });
    expect(parseRedisUrl('redis://redis')).toMatchObject({ address: { host: 'redis', port: 6379 }, db: 0 });
    expect(parseRedisUrl('redis://redis/')).toMatchObject({ db: 0 });
    expect(parseRedisUrl('REDIS://redis')).toMatchObject({ kind: 'standalone' });
  });

  it('reads TLS, IPv6 and credentials (percent-decoded)', () => {
    expect(parseRedisUrl('rediss://alice:p%40ss%3Aw%2Frd@[::1]:6390')).toEqual({
      kind: 'standalone',
      address: { host: '::1', port: 6390 },
      tls: true,
      db: 0,
      credentials: { username: 'alice', password: 'p@ss:w/rd' },
    });
    expect(parseRedisUrl('redis://:secret@h').credentials).toEqual({ password: 'secret' });
    expect(parseRedisUrl('redis://bob@h').credentials).toEqual({ username: 'bob' });
  });

  it('reads Sentinel: several sentinels, the master name and a db', () => {
    expect(parseRedisUrl('redis+sentinel://u:p@s1,s2:26380,[::1]/mymaster/3')).toEqual({
      kind: 'sentinel',
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26380 },
        { host: '::1', port: 26379 },
      ],
      masterName: 'mymaster',
      tls: false,
      db: 3,
      credentials: { username: 'u', password: 'p' },
    });
    expect(parseRedisUrl('rediss+sentinel://s1/m')).toMatchObject({ kind: 'sentinel', tls: true, db: 0, masterName: 'm' });
  });

  it('reads Cluster seed nodes', () => {
    expect(parseRedisUrl('redis+cluster://127.0.0.1:7000,127.0.0.1:7001')).toEqual({
      kind: 'cluster',
      nodes: [
        { host: '127.0.0.1', port: 7000 },
        { host: '127.0.0.1', port: 7001 },
      ],
      tls: false,
      credentials: {},
    });
    expect(parseRedisUrl('rediss+cluster://:pw@n1')).toMatchObject({ tls: true, nodes: [{ host: 'n1', port: 6379 }], credentials: { password: 'pw' } });
  });

  it.each([
    ['http://h', /unknown scheme/],
    ['h:6379', /scheme:\/\//],
    ['redis://', /host\[:port\]/],
    ['redis://h:0', /port/],
    ['redis://h:65536', /port/],
    ['redis://h:x', /host\[:port\]/],
    ['redis://a,b', /one host/],
    ['redis://h/db', /db/],
    ['redis://h/1/2', /path/],
    ['redis://h?family=6', /query/],
    ['redis+sentinel://s1', /masterName/],
    ['redis+sentinel://s1/m/1/2', /masterName/],
    ['redis+cluster://n1/0', /no path/],
    ['redis://u:%zz@h', /percent/],
  ])('refuses %s', (url, rule) => {
    expect(() => parseRedisUrl(url)).toThrow(RedisUrlError);
    expect(() => parseRedisUrl(url)).toThrow(rule);
  });

  it('never repeats the password in an error', () => {
    expect(() => parseRedisUrl('redis://u:hunter2@h:0')).toThrow(/u:\*\*\*@h:0/);
    try {
      parseRedisUrl('redis://u:hunter2@h?x');
    } catch (error) {
      expect(String(error)).not.toContain('hunter2');
    }
  });
});

describe('redactRedisUrl and describeRedisTarget', () => {
  it('mask credentials', () => {
    expect(redactRedisUrl('redis://u:p@ss@h:1')).toBe('redis://u:***@h:1');
    expect(redactRedisUrl('redis://:pw@h')).toBe('redis://:***@h');
    expect(redactRedisUrl('redis://h:6379')).toBe('redis://h:6379');
    expect(describeRedisTarget(parseRedisUrl('redis+sentinel://u:pw@[::1]:1/m/2'))).toBe('redis sentinel [::1]:1 master m db 2');
    expect(describeRedisTarget(parseRedisUrl('rediss+cluster://u:pw@a:1,b:2'))).toBe('redis cluster a:1,b:2 (tls)');
  });
});
