// `poolscope simulate --routers N`: N simulated Global Router replicas register beside the pools, so
// /debug and GET /routers show both tiers; they leave once the simulation stops and their leases run out.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { parseSimulateFlags } from '../../src/cli/commands/simulate.js';
import { seededRandom, Simulation } from '../../src/cli/commands/simulation.js';
import { stopAfterEach } from '../support/cleanup.js';
import { startService } from '../support/service.js';
import { waitFor } from '../support/wait.js';
import { listRouters } from './support.js';

describe('simulate --routers', () => {
  const stopLater = stopAfterEach();

  it('parses --routers (0 to 1000) and refuses anything else naming the flag', () => {
    const parsed = parseSimulateFlags(['--routers=3'], {});
    expect(parsed.ok && parsed.config.routers).toBe(3);
    const refused = parseSimulateFlags(['--routers=1001'], {});
    expect(!refused.ok && [refused.flag, refused.message]).toEqual(['--routers', 'must be an integer from 0 to 1000']);
  });

  it('registers N routers beside the pools; they lapse once it stops', async () => {
    const service = await startService({ leaseMs: 900 }).then(stopLater);
    const logger = pino({ level: 'silent' });
    const simulation = new Simulation({ servers: [service.url], pools: 2, routers: 3, churnIntervalMs: 0, random: seededRandom(1), logger, relayLogger: logger });
    try {
      await simulation.start();
      const list = await waitFor(async () => {
        const body = await listRouters(service.url);
        return body.routers.length === 3 && body;
      });
      expect(list.routers.map((r) => [r.id, r.source, r.region])).toEqual([
        ['sim-router-0', 'registration', 'us-east-1'],
        ['sim-router-1', 'registration', 'us-west-2'],
        ['sim-router-2', 'registration', 'eu-west-1'],
      ]);
    } finally {
      await simulation.stop();
    }
    await waitFor(async () => (await listRouters(service.url)).routers.length === 0, { timeoutMs: 5000, message: 'simulated routers lapsed' });
  });
});
