// `poolscope simulate`: N real relays fill the service, churn stops pools (they lapse), brings them back,
// changes capacity and frontends; the same seed makes the same choices; it stops cleanly.
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { listPools } from '../support/http.js';
import { captureCliIo } from '../support/logs.js';
import { startService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

const churnKinds = (lines: Record<string, unknown>[]) =>
  new Set(lines.map((l) => String(l.msg)).filter((m) => m.startsWith('churn: ')));

describe('poolscope simulate', () => {
  it('fills the service with N pools, churns them, and stops on shutdown', async () => {
    const service = await startService({ leaseMs: 600, heartbeatIntervalMs: 150 });
    const c = captureCliIo({ POOLSCOPE_LOG_LEVEL: 'info' });
    try {
      const running = main(['simulate', `--servers=${service.url}`, '--pools=8', '--churn-interval-secs=0.05', '--seed=7'], c.io);
      await waitFor(async () => (await listPools(service.url)).pools.length >= 6, { timeoutMs: 5000 });
      await waitFor(() => churnKinds(c.lines()).size === 5, { timeoutMs: 15_000, message: 'every kind of churn' });
      expect([...churnKinds(c.lines())].sort()).toEqual([
        'churn: capacity changed',
        'churn: frontends back',
        'churn: frontends gone',
        'churn: pool back',
        'churn: pool stopped (its lease will lapse)',
      ]);
      const listed = await listPools(service.url);
      expect(listed.pools.every((p) => p.namespace === 'llm' && p.frontends.every((f) => f.startsWith('http://127.')))).toBe(true);
      c.stop();
      expect(await running).toBe(0);
      expect(c.lines().at(-1)).toMatchObject({ msg: 'stopping', signal: 'shutdown' });
      // Every relay stopped: every pool lapses.
      await waitFor(async () => (await listPools(service.url)).pools.length === 0, { timeoutMs: 3000 });
      expect(c.err()).toBe('');
    } finally {
      c.stop();
      await service.stop();
    }
  });

  it('numbers its pools from --first-pool, so two simulations hold different pools', async () => {
    const service = await startService({ leaseMs: 2000, heartbeatIntervalMs: 200 });
    const c = captureCliIo({ POOLSCOPE_LOG_LEVEL: 'info' });
    try {
      const running = main(['simulate', `--servers=${service.url}`, '--pools=3', '--first-pool=12', '--churn-interval-secs=0'], c.io);
      const listed = await waitFor(async () => {
        const { pools } = await listPools(service.url);
        return pools.length === 3 && pools;
      });
      expect(listed.map((p) => Number(p.name.split('-').at(-1))).sort((a, b) => a - b)).toEqual([12, 13, 14]);
      c.stop();
      expect(await running).toBe(0);
    } finally {
      c.stop();
      await service.stop();
    }
  });

  it('refuses a --first-pool that is not a whole number', async () => {
    const c = captureCliIo({ POOLSCOPE_LOG_LEVEL: 'info' });
    expect(await main(['simulate', '--servers=http://127.0.0.1:1', '--first-pool=-1'], c.io)).toBe(2);
    expect(c.err()).toMatch(/^poolscope: --first-pool: /);
  });

  it('makes the same churn choices for the same seed', async () => {
    const service = await startService({ leaseMs: 5000, heartbeatIntervalMs: 1000 });
    try {
      const runs: string[][] = [];
      for (let i = 0; i < 2; i++) {
        const c = captureCliIo({ POOLSCOPE_LOG_LEVEL: 'info' });
        const running = main(['simulate', `--servers=${service.url}`, '--pools=5', '--churn-interval-secs=0.02', '--seed=42'], c.io);
        await waitFor(() => c.lines().filter((l) => String(l.msg).startsWith('churn: ')).length >= 12, { timeoutMs: 10_000 });
        c.stop();
        await running;
        runs.push(
          c
            .lines()
            .filter((l) => String(l.msg).startsWith('churn: '))
            .slice(0, 12)
            .map((l) => `${String(l.pool)} ${String(l.msg)} ${String(l.gpus ?? '')}`),
        );
      }
      expect(runs[1]).toEqual(runs[0]);
    } finally {
      await service.stop();
    }
  });

  it('refuses a bad --pools with exit 2', async () => {
    const c = captureCliIo({ POOLSCOPE_LOG_LEVEL: 'info' });
    expect(await main(['simulate', '--pools=0'], c.io)).toBe(2);
    expect(c.err()).toBe('poolscope: --pools: must be an integer from 1 to 100000\n');
  });
});
