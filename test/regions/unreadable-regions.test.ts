// Readiness does not cascade (docs/contract.md §9 "Probes", §7): ten regions, seven on real redis-servers
// and three on ports where nothing listens. A new replica of a readable region is ready (`/readyz` 200) as
// soon as its home region was read, while the three are unread, held and then dropped; they are reported in
// `regions`, never a reason to stay unready. Each unreadable region is warned of once when it cannot be
// read and once when its pools are dropped; the retries in between (several a second) log no warning.
import { describe, expect, it } from 'vitest';
import { randomPrefix } from '../support/redis-server.js';
import { freePort } from '../support/process.js';
import { waitFor } from '../support/wait.js';
import { COMMAND_TIMEOUT_MS, entryOf, keepRegistered, poolOf, useRegions } from './support.js';

const OPEN = ['r0', 'r1', 'r2', 'r3', 'r4', 'r5', 'r6'];
const CLOSED = ['r7', 'r8', 'r9'];
const { servers, track, startReplicas } = useRegions(OPEN);

describe('regions: readiness with unreadable regions', () => {
  it('is ready once the home region is read, while three of ten regions cannot be read; warns once per region', async () => {
    const closed = await Promise.all(CLOSED.map(async (name) => ({ name, redisUrl: `redis://127.0.0.1:${await freePort()}` })));
    const file = [...OPEN.map((name) => ({ name, redisUrl: servers.get(name)!.url })), ...closed]
      .map((r) => ({ ...r, prefix: randomPrefix(r.name), commandTimeoutMs: COMMAND_TIMEOUT_MS }))
      .sort((a, b) => (a.name < b.name ? -1 : 1));
    const [home] = await startReplicas(file, ['r0']);
    track(await keepRegistered(home.url, poolOf('r0', 'p0')));

    const readyz = async () => (await fetch(`${home.url}/readyz`)).status;
    await waitFor(async () => (await readyz()) === 200, { timeoutMs: 5000, message: '/readyz 200' });
    let list = await home.list();
    expect(list.complete).toBe(false);
    for (const name of CLOSED) expect(entryOf(list, name)).toMatchObject({ complete: false });

    // Held, then dropped: still ready, and still told in `regions`.
    await waitFor(async () => {
      list = await home.list();
      return CLOSED.every((name) => entryOf(list, name)?.dropped === true);
    }, { timeoutMs: 10_000, message: 'the three regions dropped' });
    expect(await readyz()).toBe(200);
    for (const name of OPEN) expect(entryOf(list, name)).toMatchObject({ complete: true, dropped: false });
    expect(list.pools.map((p) => p.name)).toEqual(['p0']);

    // Several seconds of retries later: per unreadable region, one warning that it cannot be read and one
    // that its pools were dropped, nothing else at warn or above.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(await readyz()).toBe(200);
    const loud = home.logs.lines.filter((line) => line.level >= 40);
    for (const name of CLOSED) {
      const mine = loud.filter((line) => line.region === name).map((line) => line.msg);
      expect(mine).toEqual([
        'region cannot be read; holding its pools',
        'region unreadable for longer than the hold; dropping its pools until it is read again',
      ]);
    }
    expect(loud.filter((line) => !CLOSED.includes(line.region as string))).toEqual([]);
  });
});
