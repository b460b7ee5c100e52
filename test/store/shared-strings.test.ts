// The strings many registrations repeat are kept once (docs/design.md "Memory per pool"): a registration
// read from the store has its model, cluster, namespace, region, zone, capabilities and capacity names
// replaced by the first equal string seen, in a table that never holds more than MAX_SHARED strings.
import { describe, expect, it } from 'vitest';
import type { Registration } from '../../src/contract/index.js';
import { canonicalJson } from '../../src/store/canonical-json.js';
import { parseSnapshotRecord } from '../../src/store/redis/replies.js';
import { MAX_SHARED, SharedStrings, sharedStrings } from '../../src/store/redis/shared-strings.js';
import { registration } from './contract-support.js';

describe('SharedStrings', () => {
  it('keeps one entry per distinct string and answers equal strings with it', () => {
    const table = new SharedStrings();
    expect(table.share('meta-llama/Llama-3.1-70B-Instruct')).toBe('meta-llama/Llama-3.1-70B-Instruct');
    expect(table.size).toBe(1);
    // An equal string built apart from the first is answered with the entry: the table does not grow.
    const built = ['meta-llama', 'Llama-3.1-70B-Instruct'].join('/');
    expect(table.share(built)).toBe('meta-llama/Llama-3.1-70B-Instruct');
    expect(table.size).toBe(1);
    table.share('cluster-1');
    expect(table.size).toBe(2);
  });

  it('never holds more than MAX_SHARED strings: a full table is emptied and filled again', () => {
    const table = new SharedStrings();
    for (let i = 0; i < MAX_SHARED; i += 1) table.share(`model-${i}`);
    expect(table.size).toBe(MAX_SHARED);
    table.share('model-0');
    expect(table.size).toBe(MAX_SHARED);
    table.share('one-more');
    expect(table.size).toBe(1);
    for (let i = 0; i < 3 * MAX_SHARED; i += 1) table.share(`made-up-${i}`);
    expect(table.size).toBeLessThanOrEqual(MAX_SHARED);
  });

  it('replaces each repeated field and changes no value', () => {
    const table = new SharedStrings();
    const original = registration('p1', 0, {
      cluster_id: 'c-east',
      namespace: 'ns-llm',
      capabilities: ['chat', 'kv-routing'],
      capacity: [{ name: 'gpus', value: 8 }],
      location: { region: 'r-east', zone: 'z-east-a' },
    });
    const parsed = JSON.parse(JSON.stringify(original)) as Registration;
    expect(table.shareFields(parsed)).toBe(parsed);
    expect(parsed).toEqual(original);
    // model, cluster_id, namespace, region, zone, two capabilities, one capacity name, each distinct; the
    // name, frontends and relay are the pool's own and are not kept.
    expect(table.size).toBe(8);
    const seen = () => table.size;
    for (const [field, value] of [
      ['model', 'm-other'],
      ['cluster_id', 'c-other'],
      ['namespace', 'ns-other'],
      ['location', { region: 'r-other' }],
      ['location', { zone: 'z-other' }],
      ['capabilities', ['cap-other']],
      ['capacity', [{ name: 'cap-name-other', value: 1 }]],
    ] as const) {
      const before = seen();
      table.shareFields(JSON.parse(JSON.stringify({ ...original, [field]: value })) as Registration);
      expect([field, seen()]).toEqual([field, before + 1]);
    }
    // A location without region or zone gains neither.
    const bare = JSON.parse(JSON.stringify({ ...original, location: {} })) as Registration;
    table.shareFields(bare);
    expect(Object.keys(bare.location)).toEqual([]);
  });

  it('leaves fields of an unexpected type as they are', () => {
    const table = new SharedStrings();
    const odd = { model: 7, cluster_id: null, namespace: ['x'], location: null, capabilities: [1, 'a'], capacity: [null, 3, { name: 2 }, { name: 'g' }] };
    const copy = structuredClone(odd);
    table.shareFields(odd as unknown as Registration);
    expect(odd).toEqual(copy);
    expect(table.size).toBe(2);
    const notLists = { location: 'r', capabilities: 'c', capacity: { name: 'not-a-list' } };
    table.shareFields(notLists as unknown as Registration);
    expect(notLists).toEqual({ location: 'r', capabilities: 'c', capacity: { name: 'not-a-list' } });
    expect(table.size).toBe(2);
  });
});

describe('a snapshot record read', () => {
  it("keeps its registration's repeated strings in the process's table, its content unchanged", () => {
    const model = `model-of-this-test-${Math.random()}`;
    const reg = registration('p1', 0, { model });
    // Every other field of the record seen once first: only the model is new below.
    parseSnapshotRecord(['c/ns/p0', canonicalJson(registration('p0')), '1000', '15000', '2', '900']);
    const before = sharedStrings.size;
    const record = parseSnapshotRecord(['c/ns/p1', canonicalJson(reg), '1000', '15000', '2', '900']);
    expect(record.registration).toEqual(reg);
    expect(sharedStrings.size).toBe(before + 1);
    const again = sharedStrings.size;
    parseSnapshotRecord(['c/ns/p2', canonicalJson(registration('p2', 0, { model })), '1000', '15000', '2', '900']);
    expect(sharedStrings.size).toBe(again);
  });
});
