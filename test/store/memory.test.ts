import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/store/memory.js';
import { PositionLostError, StoreUnavailableError } from '../../src/store/types.js';
import { describeStoreContract } from './contract.js';
import { registration } from './contract-support.js';

describeStoreContract('memory', {
  async open({ leaseMs, changeLogCap }) {
    // One replica: every "replica" of a memory world is the same store.
    const store = createMemoryStore({ leaseMs, changeLogCap });
    return { replica: async () => store, close: () => store.close() };
  },
});

describe('memory store', () => {
  it('judges leases on the injected clock', async () => {
    let now = 1000;
    const store = createMemoryStore({ leaseMs: 100, now: () => now });
    await store.heartbeat(registration('clocked'));
    now = 1099;
    expect((await store.sweep()).lapsed).toBe(0);
    now = 1100;
    expect((await store.sweep()).lapsed).toBe(1);
    await store.close();
  });

  it('a sweep tells how long until the soonest deadline left, on the injected clock', async () => {
    let now = 1000;
    const store = createMemoryStore({ leaseMs: 100, now: () => now });
    expect(await store.sweep()).toEqual({ lapsed: 0, nextDueInMs: undefined });
    await store.heartbeat(registration('first'));
    now = 1030;
    await store.heartbeat(registration('second'));
    now = 1040;
    expect(await store.sweep()).toEqual({ lapsed: 0, nextDueInMs: 60 });
    now = 1100;
    expect(await store.sweep()).toEqual({ lapsed: 1, nextDueInMs: 30 });
    now = 1130;
    expect(await store.sweep()).toEqual({ lapsed: 1, nextDueInMs: undefined });
    await store.close();
  });

  it('forgets its leases on restart, with a new epoch, and says so', async () => {
    const first = createMemoryStore({ leaseMs: 60_000 });
    await first.heartbeat(registration('forgotten'));
    const before = await first.snapshot();
    expect(before.records.map((r) => r.key)).toEqual(['us-east-1/llm/forgotten']);
    await first.close();
    // A restart of the process is a new store: nothing of the first one is left.
    const second = createMemoryStore({ leaseMs: 60_000 });
    try {
      expect(second.forgetsOnRestart).toBe(true);
      const after = await second.snapshot();
      expect(after.records).toEqual([]);
      expect(after.epoch).not.toBe(before.epoch);
    } finally {
      await second.close();
    }
  });

  it('keeps at least changeLogCap events and loses the position just beyond them', async () => {
    const store = createMemoryStore({ leaseMs: 60_000, changeLogCap: 10 });
    for (let i = 0; i < 25; i += 1) await store.heartbeat(registration(`p${i}`));
    // 25 events, trimmed in chunks: the newest 10 at least are kept.
    const follow = async (position: string) => {
      const controller = new AbortController();
      const events = [];
      try {
        for await (const event of store.watch(position, controller.signal)) {
          events.push(event);
          if (event.position === '25') controller.abort();
        }
        return events.length;
      } catch (error) {
        return error;
      }
    };
    expect(await follow('15')).toBe(10);
    expect(await follow('0')).toBeInstanceOf(PositionLostError);
    await store.close();
  });

  it('does not let a consumer change what others receive', async () => {
    const store = createMemoryStore({ leaseMs: 60_000 });
    await store.heartbeat(registration('shared'));
    const [snapshot] = (await store.snapshot()).records;
    snapshot!.registration.model = 'changed by a consumer';
    expect((await store.snapshot()).records[0]!.registration.model).toBe('model-0');
    await store.close();
  });

  it("follows only from a position of its own lifetime: a watch told another epoch has lost its position", async () => {
    const store = createMemoryStore({ leaseMs: 60_000 });
    await store.heartbeat(registration('one'));
    const { position, epoch } = await store.snapshot();
    await store.heartbeat(registration('two'));
    const first = async (told: string | undefined) => {
      const controller = new AbortController();
      for await (const event of store.watch(position, controller.signal, told)) {
        controller.abort();
        return event.type === 'upsert' ? event.record.registration.name : event.type;
      }
      return undefined;
    };
    expect(await first(epoch)).toBe('two');
    expect(await first(undefined)).toBe('two');
    await expect(first(`${epoch}-not`)).rejects.toThrow(PositionLostError);
    await store.close();
    await expect(first(epoch)).rejects.toThrow(StoreUnavailableError);
  });

  it('ends its watches when closed', async () => {
    const store = createMemoryStore({ leaseMs: 60_000 });
    const watching = (async () => {
      for await (const _ of store.watch('0', new AbortController().signal)) void _;
    })();
    await store.close();
    await expect(watching).resolves.toBeUndefined();
  });
});
