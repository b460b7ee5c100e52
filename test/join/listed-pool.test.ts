// A pool as GET /pools lists it (join.ts listedPool): its cluster_id, namespace and name are the
// registration's own strings when they spell the pool's key (docs/design.md "Memory per pool"), and the
// key's parts otherwise, so a listed pool is always named by the key it is listed under.
import { describe, expect, it } from 'vitest';
import { listedPool } from '../../src/join/join.js';
import { registration } from '../support/registration.js';
import { directoryOnTestClocks } from './support.js';

describe('listedPool', () => {
  it("is named by the registration's fields when they spell its key", () => {
    const { directory } = directoryOnTestClocks('registrations');
    const reg = registration({ cluster_id: 'c1', namespace: 'ns1', name: 'p1' });
    directory.send('c1/ns1/p1', { type: 'LEASE_UPSERT', registration: reg, deadlineMs: Number.MAX_SAFE_INTEGER });
    const pool = listedPool(directory.snapshot('c1/ns1/p1')!)!;
    expect(pool).toMatchObject({ cluster_id: 'c1', namespace: 'ns1', name: 'p1', model: reg.model, state: 'live' });
    expect(Object.keys(pool).slice(0, 3)).toEqual(['cluster_id', 'namespace', 'name']);
  });

  it('is named by its key when the registration spells another (a hand-written store entry)', () => {
    const { directory } = directoryOnTestClocks('registrations');
    const reg = registration({ cluster_id: 'c1', namespace: 'ns1', name: 'p1' });
    for (const key of ['c2/ns1/p1', 'c1/ns2/p1', 'c1/ns1/p2']) {
      directory.send(key, { type: 'LEASE_UPSERT', registration: reg, deadlineMs: Number.MAX_SAFE_INTEGER });
      const [cluster_id, namespace, name] = key.split('/');
      expect(listedPool(directory.snapshot(key)!)).toMatchObject({ cluster_id, namespace, name, model: reg.model });
    }
  });
});
