// The region metrics of docs/operations.md "Metrics" through GET /metrics of the assembled service:
// poolscope_region_synced{region}, poolscope_region_read_age_seconds{region} and
// poolscope_region_dropped_total{region} follow a followed region that is cut off, held, dropped and read
// again; without regions none of them is exported.
import type { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/store/memory.js';
import { DelegatingStore } from '../support/delegating-store.js';
import { startService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';
import { parsePrometheusText, valueOf } from './prometheus-text.js';

const HOLD_MS = 300;
const running: Array<TestService | DelegatingStore> = [];
afterEach(async () => {
  for (const part of running.splice(0).reverse()) await (part instanceof DelegatingStore ? part.close() : part.stop());
});

async function scrape(app: Hono) {
  return parsePrometheusText(await (await app.request('/metrics')).text());
}

describe('region metrics', () => {
  it('follow a followed region through cut, hold, drop and return', async () => {
    const r2 = new DelegatingStore(createMemoryStore({ leaseMs: 60_000 }), { forgetsOnRestart: false });
    running.push(r2);
    const svc = await startService({
      socket: false,
      leaseMs: 60_000,
      join: {
        regions: { home: 'r1', followed: [{ name: 'r2', store: r2 }], holdMs: HOLD_MS },
        storeBackoff: { initialMs: 20, maxMs: 40 },
        sweepIntervalMs: 20,
      },
    });
    running.push(svc);
    const metric = async (name: string, region: string) => valueOf(await scrape(svc.app), name, { region });

    await waitFor(async () => (await metric('poolscope_region_synced', 'r2')) === 1);
    expect(await metric('poolscope_region_synced', 'r1')).toBe(1);
    expect(await metric('poolscope_region_dropped_total', 'r2')).toBe(0);
    expect(await metric('poolscope_region_read_age_seconds', 'r2')).toBeLessThan(1);

    r2.setCut(true);
    await waitFor(async () => (await metric('poolscope_region_synced', 'r2')) === 0);
    await waitFor(async () => (await metric('poolscope_region_dropped_total', 'r2')) === 1, { timeoutMs: HOLD_MS + 3000 });
    // Nothing answers from r2 while it is cut off: its read age grows past the hold.
    expect(await metric('poolscope_region_read_age_seconds', 'r2')).toBeGreaterThanOrEqual(HOLD_MS / 1000 - 0.05);
    expect(await metric('poolscope_region_synced', 'r1')).toBe(1);

    r2.setCut(false);
    await waitFor(async () => (await metric('poolscope_region_synced', 'r2')) === 1, { timeoutMs: 3000 });
    expect(await metric('poolscope_region_read_age_seconds', 'r2')).toBeLessThan(1);
    // A counter: the drop stays counted.
    expect(await metric('poolscope_region_dropped_total', 'r2')).toBe(1);
  });

  it('carry no sample without regions', async () => {
    const svc = await startService({ socket: false });
    running.push(svc);
    const families = [...(await scrape(svc.app)).values()];
    const regionSamples = families.filter((f) => f.name.startsWith('poolscope_region_')).flatMap((f) => f.samples);
    expect(regionSamples).toEqual([]);
    expect(families.find((f) => f.name === 'poolscope_source_synced')?.samples.length).toBeGreaterThan(0);
  });
});
