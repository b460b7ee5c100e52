// Spreading over replicas and failing over: start at a random replica, stay while it answers, move on
// a failure, and report a full round of failures.
import { describe, expect, it } from 'vitest';
import { normalizeServers, ReplicaRotation } from '../../src/client/replica-rotation.js';

describe('ReplicaRotation', () => {
  const servers = ['http://a:1', 'http://b:1/', 'http://c:1'];

  it('starts where the random source points, so clients spread over replicas', () => {
    expect(new ReplicaRotation({ servers, random: () => 0 }).current).toBe('http://a:1');
    expect(new ReplicaRotation({ servers, random: () => 0.5 }).current).toBe('http://b:1');
    expect(new ReplicaRotation({ servers, random: () => 0.999 }).current).toBe('http://c:1');
  });

  it('moves to the next replica on each failure and says when all have failed in a row', () => {
    const rotation = new ReplicaRotation({ servers, random: () => 0.5 });
    expect(rotation.failed()).toBe(false);
    expect(rotation.current).toBe('http://c:1');
    rotation.succeeded();
    expect(rotation.failed()).toBe(false);
    expect(rotation.failed()).toBe(false);
    expect(rotation.failed()).toBe(true);
    expect(rotation.current).toBe('http://c:1');
  });

  it('refuses no servers, non-URLs, other schemes and queries, naming the value', () => {
    expect(() => normalizeServers([])).toThrow(/at least one/);
    expect(() => normalizeServers(['poolscope:8080'])).toThrow(/"poolscope:8080" must be an http/);
    expect(() => normalizeServers(['nope'])).toThrow(/"nope" is not a URL/);
    expect(() => normalizeServers(['http://a/?x=1'])).toThrow(/query/);
    expect(normalizeServers(['https://a:8443/base/'])).toEqual(['https://a:8443/base']);
  });
});
