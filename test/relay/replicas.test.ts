// A relay against three `poolscope serve` processes on one Redis: kill (SIGKILL) or freeze (SIGSTOP) the
// replica it talks to, and the pool never leaves the list of any replica still running, on GET /pools or
// on the watch stream, for two leases after.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { watchEventSchemas } from '../../src/contract/index.js';
import { startRelay, type Relay } from '../../src/relay/index.js';
import { listPools } from '../support/http.js';
import { redisReplicaFlags, startPoolscope, type PoolscopeProcess } from '../support/process.js';
import { registration } from '../support/registration.js';
import { SseReader } from '../support/sse.js';
import { useRedis } from '../support/use-redis.js';
import { throughout, waitFor } from '../support/wait.js';

const LEASE_MS = 2000;

describe('a relay against three replicas on one Redis', () => {
  const redis = useRedis('relay-replicas');
  let replicas: PoolscopeProcess[] = [];
  let prefix: string;
  const flags = () => [...redisReplicaFlags(redis, prefix), `--lease-duration-secs=${LEASE_MS / 1000}`, '--heartbeat-interval-secs=0.5'];
  const start = () => startPoolscope(flags());

  beforeAll(async () => {
    // One prefix for the replicas of every test here (a replica restarted in a test joins the others).
    prefix = redis.prefix;
    replicas = await Promise.all([start(), start(), start()]);
  });
  afterAll(async () => {
    for (const replica of replicas) replica.child.kill('SIGCONT');
    await Promise.all(replicas.map((r) => r.stop('SIGKILL')));
  });

  /** Polls GET /pools of `survivors` and follows their watch streams for `ms`; returns every absence seen. */
  async function watchPresence(survivors: PoolscopeProcess[], name: string, ms: number, disrupt: () => void): Promise<string[]> {
    const streams = await Promise.all(survivors.map((r) => SseReader.open(`${r.url}/pools/watch`)));
    const absences: string[] = [];
    try {
      await waitFor(() => streams.every((s) => s.of('resync').length > 0));
      disrupt();
      await throughout(ms, 50, async () => {
        for (const replica of survivors) {
          const list = await listPools(replica.url);
          if (!list.pools.some((p) => p.name === name)) absences.push(`${replica.url} GET /pools at ${new Date().toISOString()}`);
        }
      });
      for (const [i, stream] of streams.entries()) {
        for (const message of stream.messages) {
          if (message.event === 'delete' && watchEventSchemas.delete.parse(message.data).pool.name === name) {
            absences.push(`${survivors[i]!.url} sent a delete`);
          }
          if (message.event === 'resync') {
            const list = watchEventSchemas.resync.parse(message.data);
            if (list.complete && !list.pools.some((p) => p.name === name)) absences.push(`${survivors[i]!.url} resync without it`);
          }
        }
      }
    } finally {
      await Promise.all(streams.map((s) => s.close()));
    }
    return absences;
  }

  async function relayOnAll(name: string): Promise<{ relay: Relay; talkingTo: PoolscopeProcess }> {
    const relay = startRelay({ servers: replicas.map((r) => r.url), registration: registration({ name }) });
    await relay.registered;
    for (const replica of replicas) {
      await waitFor(async () => (await listPools(replica.url)).pools.some((p) => p.name === name));
    }
    return { relay, talkingTo: replicas.find((r) => r.url === relay.status.server)! };
  }

  it('kill the replica it talks to: it fails over, and the pool stays on the others for two leases', async () => {
    const { relay, talkingTo } = await relayOnAll('survives-kill');
    try {
      const survivors = replicas.filter((r) => r !== talkingTo);
      const absences = await watchPresence(survivors, 'survives-kill', 2 * LEASE_MS, () => void talkingTo.stop('SIGKILL'));
      expect(absences).toEqual([]);
      expect(relay.status.server).not.toBe(talkingTo.url);
      expect(relay.status.lastAcceptedAt).toBeGreaterThan(Date.now() - LEASE_MS / 2);
      // Back on the same port, the killed replica lists the pool on its first complete answer.
      replicas[replicas.indexOf(talkingTo)] = await startPoolscope(flags(), { port: talkingTo.port });
      const list = await waitFor(async () => {
        const l = await listPools(talkingTo.url);
        return l.complete && l;
      });
      expect(list.pools.map((p) => p.name)).toContain('survives-kill');
    } finally {
      await relay.stop();
    }
  });

  it('freeze the replica it talks to: the heartbeat times out, moves on, and the pool stays on the others', async () => {
    const { relay, talkingTo } = await relayOnAll('survives-freeze');
    try {
      const survivors = replicas.filter((r) => r !== talkingTo);
      const absences = await watchPresence(survivors, 'survives-freeze', 2 * LEASE_MS, () => void talkingTo.child.kill('SIGSTOP'));
      expect(absences).toEqual([]);
      expect(relay.status.server).not.toBe(talkingTo.url);
    } finally {
      talkingTo.child.kill('SIGCONT');
      await relay.stop();
    }
  });
});
