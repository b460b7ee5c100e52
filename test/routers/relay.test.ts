// A relay follows the routers (docs/contract.md §10): two replicas on one real redis-server, routers that
// register with startRouterHeartbeat, a relay (startRelay) that lists them in relay.routers() and hears of
// each change; the replica it follows is stopped and started again on its port, and the relay keeps its
// routers throughout (the merge rule), then hears of a router registered meanwhile and of one that stopped.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRouterHeartbeat, type RouterChange, type RouterHeartbeat } from '../../src/client/index.js';
import { startRelay, type Relay } from '../../src/relay/index.js';
import { registration } from '../support/registration.js';
import { startService, type TestService } from '../support/service.js';
import { useRedis } from '../support/use-redis.js';
import { throughout, waitFor } from '../support/wait.js';

const LEASE_MS = 1500;

describe('a relay following the routers through a replica restart', () => {
  const redis = useRedis('router-relay');
  let replicas: TestService[] = [];
  let prefix: string;
  const start = (port = 0) =>
    startService({ registrationStorage: 'redis', redisUrl: redis.url, redisPrefix: prefix, leaseMs: LEASE_MS, heartbeatIntervalMs: 400 }, port);

  beforeAll(async () => {
    prefix = redis.prefix;
    replicas = await Promise.all([start(), start()]);
  });
  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
  });

  it('lists the routers, keeps them while its replica restarts, and hears of every change after', async () => {
    const [a, b] = replicas as [TestService, TestService];
    const heartbeats: RouterHeartbeat[] = [];
    let relay: Relay | undefined;
    try {
      const first = startRouterHeartbeat({ servers: [b.url], router: { id: 'gr-1', url: 'http://10.0.1.1:9100', zone: 'z-a' } });
      heartbeats.push(first);
      expect((await first.registered).router).toBe('gr-1');
      // Only replica A: the relay's router watch follows A.
      relay = startRelay({ servers: [a.url], registration: registration({ name: 'follows-routers' }) });
      const changes: RouterChange[] = [];
      relay.onRoutersChange((change) => changes.push(change));
      await waitFor(() => relay!.routers().length === 1, { message: 'gr-1 listed by the relay' });
      expect(relay.routers()).toEqual([{ id: 'gr-1', url: 'http://10.0.1.1:9100', zone: 'z-a', source: 'registration' }]);
      expect(changes).toEqual([{ type: 'added', id: 'gr-1', router: relay.routers()[0] }]);

      // A restarts on its port; the relay's list never loses gr-1 meanwhile.
      const port = a.port;
      await a.stop();
      const restart = start(port).then((service) => (replicas[0] = service));
      await throughout(LEASE_MS, 50, () => expect(relay!.routers().map((r) => r.id)).toEqual(['gr-1']));
      await restart;
      // A router registered after the restart, through the other replica.
      const second = startRouterHeartbeat({ servers: [b.url], router: { id: 'gr-2', url: 'https://[fd00::2]:9443' } });
      heartbeats.push(second);
      await waitFor(() => relay!.routers().some((r) => r.id === 'gr-2'), { timeoutMs: 15_000, message: 'gr-2 listed after the restart' });
      // gr-1 stops heartbeating: its lease lapses and the relay hears it removed.
      await first.stop();
      await waitFor(() => changes.some((c) => c.type === 'removed' && c.id === 'gr-1'), { timeoutMs: LEASE_MS + 5000, message: 'gr-1 removed' });
      expect(relay.routers().map((r) => r.id)).toEqual(['gr-2']);
      expect(changes.filter((c) => c.type === 'removed').map((c) => c.id)).toEqual(['gr-1']);
    } finally {
      await relay?.stop();
      await Promise.all(heartbeats.map((h) => h.stop()));
    }
  });

  it('refuses a router that breaks a rule of POST /routers at start, naming the field', () => {
    expect(() => startRouterHeartbeat({ servers: ['http://127.0.0.1:1'], router: { id: 'Not_A_Label', url: 'http://10.0.0.1:1' } })).toThrow(/^router: id: must be a DNS-1123 label/);
  });
});
