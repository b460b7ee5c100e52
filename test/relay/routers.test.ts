// The routers a relay lists (docs/contract.md §10), against one replica in process on its memory store:
// relay.routers() in id order whatever order they registered in, a listener that hears each change until
// it unsubscribes, and a relay started with followRouters: false that lists none and takes a listener
// without failing. (test/routers/relay.test.ts follows the same list through a replica restart on Redis.)
import { describe, expect, it } from 'vitest';
import { startRouterHeartbeat, type RouterChange } from '../../src/client/index.js';
import { startRelay } from '../../src/relay/index.js';
import { stopAfterEach } from '../support/cleanup.js';
import { registration } from '../support/registration.js';
import { startService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

const track = stopAfterEach();

describe("a relay's router list", () => {
  it('lists the routers in id order, and a listener hears each change until it unsubscribes', async () => {
    const replica = track(await startService({ leaseMs: 1500 }));
    // Registered out of id order: gr-b, then gr-c, then gr-a.
    for (const id of ['gr-b', 'gr-c']) {
      const heartbeat = track(startRouterHeartbeat({ servers: [replica.url], router: { id, url: `http://10.0.2.1:9100/${id}` } }));
      await heartbeat.registered;
    }
    const relay = track(startRelay({ servers: [replica.url], registration: registration({ name: 'lists-routers' }) }));
    const heard: RouterChange[] = [];
    const unsubscribe = relay.onRoutersChange((change) => heard.push(change));
    await waitFor(() => relay.routers().length === 2, { message: 'gr-b and gr-c listed' });
    expect(relay.routers().map((router) => router.id)).toEqual(['gr-b', 'gr-c']);

    const first = track(startRouterHeartbeat({ servers: [replica.url], router: { id: 'gr-a', url: 'http://10.0.2.1:9100/gr-a' } }));
    await first.registered;
    await waitFor(() => relay.routers().length === 3, { message: 'gr-a listed' });
    expect(relay.routers().map((router) => router.id)).toEqual(['gr-a', 'gr-b', 'gr-c']);
    expect(relay.routers()[0]).toEqual({ id: 'gr-a', url: 'http://10.0.2.1:9100/gr-a', source: 'registration' });
    await waitFor(() => heard.some((change) => change.id === 'gr-a'), { message: 'the listener hears gr-a' });
    expect(heard.filter((change) => change.id === 'gr-a')).toEqual([{ type: 'added', id: 'gr-a', router: relay.routers()[0] }]);

    // Unsubscribed: gr-a's lapse is listed, and the listener hears nothing more.
    unsubscribe();
    const before = heard.length;
    await first.stop();
    await waitFor(() => relay.routers().length === 2, { timeoutMs: 6000, message: 'gr-a lapsed from the relay' });
    expect(relay.routers().map((router) => router.id)).toEqual(['gr-b', 'gr-c']);
    expect(heard.length).toBe(before);
  });

  it('with followRouters: false lists none, and a listener is taken and given back without failing', async () => {
    const replica = track(await startService({ leaseMs: 1500 }));
    const heartbeat = track(startRouterHeartbeat({ servers: [replica.url], router: { id: 'gr-x', url: 'http://10.0.2.1:9100' } }));
    await heartbeat.registered;
    const relay = track(startRelay({ servers: [replica.url], registration: registration({ name: 'no-routers' }), followRouters: false }));
    const heard: RouterChange[] = [];
    const unsubscribe = relay.onRoutersChange((change) => heard.push(change));
    await relay.registered;
    expect(relay.routers()).toEqual([]);
    expect(() => unsubscribe()).not.toThrow();
    expect(heard).toEqual([]);
  });
});
