// startRouterHeartbeat() (src/client/router-heartbeat.ts, docs/contract.md §10) against scripted replicas
// over real sockets: what it sends, the interval the reply names, the next replica at once on a 5xx, a
// timeout or a reply that breaks the contract, the backoff only after a whole round failed, a refusal
// logged once per change of what is refused, and stop(). One test against a real service in process.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startRouterHeartbeat, type RouterHeartbeat } from '../../src/client/index.js';
import { errorBody } from '../relay/support.js';
import { listenOnFreePort } from '../support/loopback-server.js';
import { captureLogs } from '../support/logs.js';
import { startService } from '../support/service.js';
import { throughout, waitFor } from '../support/wait.js';

interface Seen {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingMessage['headers'];
  body: string;
  at: number;
}

/** A replica whose every POST is answered by `answer` (a status and a body, or nothing at all: never answered). */
interface ScriptedReplica {
  url: string;
  seen: Seen[];
  answer: (seen: Seen) => { status: number; body: unknown } | 'never';
  stop(): Promise<void>;
}

const stopping: { stop(): Promise<void> }[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  // Heartbeats first (each ends its loop), then the replicas they talk to.
  await Promise.all(stopping.splice(0).reverse().map((s) => s.stop()));
});

function accept(intervalMs = 60_000): ScriptedReplica['answer'] {
  return () => ({ status: 200, body: { router: 'gr-1', lease_ms: 3 * intervalMs, heartbeat_interval_ms: intervalMs } });
}

async function scriptedReplica(answer: ScriptedReplica['answer']): Promise<ScriptedReplica> {
  const seen: Seen[] = [];
  const replica: ScriptedReplica = { url: '', seen, answer, stop: async () => {} };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const one = { method: req.method, url: req.url, headers: req.headers, body, at: Date.now() };
      seen.push(one);
      const reply = replica.answer(one);
      if (reply === 'never') return;
      res.writeHead(reply.status, { 'content-type': 'application/json' }).end(typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body));
    });
  });
  Object.assign(replica, await listenOnFreePort(server));
  stopping.push(replica);
  return replica;
}

function heartbeat(servers: string[], options: Partial<Parameters<typeof startRouterHeartbeat>[0]> = {}) {
  const logs = captureLogs();
  const beat = startRouterHeartbeat({
    servers,
    router: { id: 'gr-1', url: 'http://10.0.1.5:9100', region: 'us-east-1', zone: 'us-east-1a' },
    logger: logs.logger,
    // The first server first; the interval's jitter at its shortest (0.9 ×).
    random: () => 0,
    backoff: { initialMs: 40, maxMs: 40, jitter: 0 },
    ...options,
  });
  stopping.push(beat);
  return { beat, logs, lines: (msg: string) => logs.lines.filter((line) => line.msg === msg) };
}

describe('startRouterHeartbeat', () => {
  it("POSTs the router's registration to /routers as JSON, resolves `registered` with the reply, and logs it once", async () => {
    const replica = await scriptedReplica(accept(30));
    const { beat, lines } = heartbeat([replica.url], { token: 'a-token' });
    const before = Date.now();
    await expect(beat.registered).resolves.toEqual({ router: 'gr-1', lease_ms: 90, heartbeat_interval_ms: 30 });
    expect(beat.lastAcceptedAt).toBeGreaterThanOrEqual(before);
    expect(beat.router).toEqual({ id: 'gr-1', url: 'http://10.0.1.5:9100', region: 'us-east-1', zone: 'us-east-1a' });
    const [first] = replica.seen;
    expect(first).toMatchObject({ method: 'POST', url: '/routers' });
    expect(first!.headers['content-type']).toBe('application/json');
    expect(first!.headers.authorization).toBe('Bearer a-token');
    expect(JSON.parse(first!.body)).toEqual({ id: 'gr-1', url: 'http://10.0.1.5:9100', region: 'us-east-1', zone: 'us-east-1a' });
    // The reply's interval (30 ms, not the 5 s default): more heartbeats follow, each moving lastAcceptedAt.
    await waitFor(() => replica.seen.length >= 4, { message: 'four heartbeats at the 30 ms interval' });
    const accepted = beat.lastAcceptedAt!;
    await waitFor(() => beat.lastAcceptedAt! > accepted, { message: 'lastAcceptedAt moved' });
    expect(lines('router registered')).toHaveLength(1);
    expect(lines('router registered')[0]).toMatchObject({ router: 'gr-1', server: replica.url, lease_ms: 90 });
    expect(lines('router heartbeat starting')[0]).toMatchObject({ servers: [replica.url], url: 'http://10.0.1.5:9100' });
  });

  it.each([
    [0, 270],
    [0.5, 285],
    [1, 300],
  ])("waits the reply's interval (less at most a tenth, jittered) between two heartbeats: random %s, %s ms of 300", async (random, waitMs) => {
    const replica = await scriptedReplica(accept(300));
    // The wait the heartbeat asks of the timer, exactly (the transport's own timers ask for 2 s and more,
    // the test's polls for 10 ms).
    const timers = vi.spyOn(globalThis, 'setTimeout');
    heartbeat([replica.url], { random: () => random });
    await waitFor(() => replica.seen.length >= 2, { message: 'a second heartbeat' });
    // Less 5 ms: a timer may fire a millisecond early, and the replica stamps each request as it ends.
    expect(replica.seen[1]!.at - replica.seen[0]!.at).toBeGreaterThanOrEqual(waitMs - 5);
    const waits = timers.mock.calls.map(([, ms]) => ms).filter((ms) => ms !== undefined && ms >= 100 && ms < 2000);
    expect(waits[0]).toBeCloseTo(waitMs, 6);
  });

  it('counts any reply but a 200 as a failure, and only a 4xx as a refusal of the router', async () => {
    const moved = await scriptedReplica(() => ({ status: 302, body: '' }));
    const empty = await scriptedReplica(() => ({ status: 204, body: '' }));
    const accepting = await scriptedReplica(accept());
    const { beat, lines } = heartbeat([moved.url, empty.url, accepting.url]);
    await beat.registered;
    expect(lines('router heartbeat failed; trying the next replica').map((line) => [line.server, line.reason])).toEqual([
      [moved.url, 'POST /routers: answered 302'],
      [empty.url, 'POST /routers: answered 204'],
    ]);
    expect(lines('router registration refused')).toEqual([]);
  });

  it('logs an unexpected error that ends its loop, and stop() still returns', async () => {
    const replica = await scriptedReplica(accept(20));
    let draws = 0;
    // The rotation's start draws once; the first jittered interval after an acceptance draws again.
    const random = () => {
      draws += 1;
      if (draws > 1) throw new Error('no randomness left');
      return 0;
    };
    const { beat, lines } = heartbeat([replica.url], { random });
    await beat.registered;
    await waitFor(() => lines('router heartbeat stopped on an unexpected error').length === 1, { message: 'the error logged' });
    expect(lines('router heartbeat stopped on an unexpected error')[0]).toMatchObject({ level: 50, router: 'gr-1', err: { message: 'no randomness left' } });
    await throughout(100, 20, () => expect(replica.seen).toHaveLength(1));
    await beat.stop();
  });

  it('moves to the next replica at once on a 5xx, and stays on the one that accepts', async () => {
    const failing = await scriptedReplica(() => ({ status: 503, body: errorBody('unavailable', 'the store is unreachable') }));
    const accepting = await scriptedReplica(accept(20));
    // A backoff of 10 s: were it taken after the 503, the accepting replica would be reached only then.
    const { beat, logs, lines } = heartbeat([failing.url, accepting.url], { backoff: { initialMs: 10_000, maxMs: 10_000, jitter: 0 } });
    await beat.registered;
    await waitFor(() => accepting.seen.length >= 4, { message: 'heartbeats on the accepting replica' });
    expect(failing.seen).toHaveLength(1);
    expect(accepting.seen[0]!.at - failing.seen[0]!.at).toBeLessThan(5000);
    expect(lines('router heartbeat failed; trying the next replica')).toEqual([
      expect.objectContaining({ level: 40, router: 'gr-1', server: failing.url, reason: 'POST /routers: 503 unavailable: the store is unreachable', next: accepting.url }),
    ]);
    // A 5xx is the replica failing, not a refusal of the router.
    expect(lines('router registration refused')).toEqual([]);
    expect(logs.lines.filter((line) => line.level >= 50)).toEqual([]);
  });

  it('moves on from a replica that does not answer within requestTimeoutMs', async () => {
    const silent = await scriptedReplica(() => 'never');
    const accepting = await scriptedReplica(accept());
    const { beat, lines } = heartbeat([silent.url, accepting.url], { requestTimeoutMs: 100 });
    await beat.registered;
    expect(accepting.seen[0]!.at - silent.seen[0]!.at).toBeGreaterThanOrEqual(90);
    expect(lines('router heartbeat failed; trying the next replica')[0]).toMatchObject({ server: silent.url, reason: 'no reply within 100 ms', next: accepting.url });
  });

  it.each([
    ['a body that is not JSON', 'accepted'],
    ['a body without the interval', { router: 'gr-1', lease_ms: 15_000 }],
    ['an interval that is not a positive integer', { router: 'gr-1', lease_ms: 15_000, heartbeat_interval_ms: 0 }],
  ])('counts a 200 with %s as a failure and moves on', async (_, body) => {
    const broken = await scriptedReplica(() => ({ status: 200, body }));
    const accepting = await scriptedReplica(accept());
    const { beat, lines } = heartbeat([broken.url, accepting.url]);
    const reply = await beat.registered;
    expect(reply.heartbeat_interval_ms).toBe(60_000);
    expect(lines('router heartbeat failed; trying the next replica')).toEqual([
      expect.objectContaining({ server: broken.url, reason: 'POST /routers answered a body that breaks the contract' }),
    ]);
    expect(lines('router registered')[0]).toMatchObject({ server: accepting.url });
  });

  it('tries every replica once a round, then backs off before the next round; stays pending meanwhile', async () => {
    const a = await scriptedReplica(() => ({ status: 502, body: '<h1>502</h1>' }));
    const b = await scriptedReplica(() => ({ status: 500, body: '' }));
    const { beat, lines } = heartbeat([a.url, b.url], { backoff: { initialMs: 1000, maxMs: 1000, jitter: 0 } });
    let registered = false;
    void beat.registered.then(() => (registered = true));
    await waitFor(() => a.seen.length >= 2, { message: 'a second round' });
    // Round one: a then b at once; round two after the 1 s backoff, starting again at a.
    expect(b.seen[0]!.at - a.seen[0]!.at).toBeLessThan(900);
    expect(a.seen[1]!.at - b.seen[0]!.at).toBeGreaterThanOrEqual(950);
    expect(b.seen.length).toBeGreaterThanOrEqual(1);
    expect(registered).toBe(false);
    expect(beat.lastAcceptedAt).toBeUndefined();
    // A 5xx is the replica failing, never a refusal of the router.
    expect(lines('router registration refused')).toEqual([]);
    const failed = lines('router heartbeat failed; trying the next replica');
    expect(failed.slice(0, 2).map((line) => [line.server, line.reason, line.next])).toEqual([
      [a.url, 'POST /routers: answered 502', b.url],
      [b.url, 'POST /routers: answered 500', a.url],
    ]);
  });

  it('logs a refusal (4xx) once while it stays the same, again when it changes or after an acceptance', async () => {
    let answer: ScriptedReplica['answer'] = () => ({ status: 403, body: errorBody('forbidden', 'the token has no routers scope') });
    const replica = await scriptedReplica((seen) => answer(seen));
    const { beat, lines } = heartbeat([replica.url], { backoff: { initialMs: 10, maxMs: 10, jitter: 0 } });
    const refused = () => lines('router registration refused');
    await waitFor(() => replica.seen.length >= 4, { message: 'four refused heartbeats' });
    expect(refused()).toEqual([
      expect.objectContaining({ level: 50, router: 'gr-1', server: replica.url, status: 403, reason: 'POST /routers: 403 forbidden: the token has no routers scope' }),
    ]);
    answer = () => ({ status: 400, body: errorBody('invalid_registration', 'url: must be an http:// or https:// URL') });
    await waitFor(() => refused().length === 2, { message: 'the changed refusal logged' });
    expect(refused()[1]).toMatchObject({ status: 400, reason: 'POST /routers: 400 invalid_registration: url: must be an http:// or https:// URL' });
    answer = accept(10);
    await beat.registered;
    answer = () => ({ status: 400, body: errorBody('invalid_registration', 'url: must be an http:// or https:// URL') });
    await waitFor(() => refused().length === 3, { message: 'the same refusal logged again after an acceptance' });
    const seen = replica.seen.length;
    await waitFor(() => replica.seen.length >= seen + 3, { message: 'more refusals' });
    expect(refused()).toHaveLength(3);
    // Refusals are retried on the backoff alone, never counted as accepted.
    expect(lines('router registered')).toHaveLength(1);
  });

  it('stop() ends the loop while it backs off, sends nothing after, and logs that it stopped', async () => {
    const replica = await scriptedReplica(() => ({ status: 503, body: '' }));
    const { beat, lines } = heartbeat([replica.url], { backoff: { initialMs: 60_000, maxMs: 60_000, jitter: 0 } });
    await waitFor(() => replica.seen.length === 1, { message: 'the first heartbeat' });
    await waitFor(() => lines('router heartbeat failed; trying the next replica').length === 1, { message: 'its failure' });
    const started = Date.now();
    await beat.stop();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(lines('router heartbeat stopped')).toHaveLength(1);
    await throughout(100, 20, () => expect(replica.seen).toHaveLength(1));
  });

  it('stop() while a heartbeat waits for its reply aborts it and logs no failure for it', async () => {
    const replica = await scriptedReplica(() => 'never');
    const { beat, lines } = heartbeat([replica.url], { requestTimeoutMs: 60_000 });
    await waitFor(() => replica.seen.length === 1, { message: 'the heartbeat in flight' });
    const started = Date.now();
    await beat.stop();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(lines('router heartbeat failed; trying the next replica')).toEqual([]);
    expect(lines('router heartbeat stopped')).toHaveLength(1);
  });

  it('refuses a router that breaks a rule of POST /routers, and no servers, before sending anything', () => {
    expect(() => startRouterHeartbeat({ servers: ['http://127.0.0.1:1'], router: { id: 'gr-1', url: 'ftp://x' } })).toThrow(
      new TypeError('router: url: must be an http:// or https:// URL with a host'),
    );
    expect(() => startRouterHeartbeat({ servers: ['http://127.0.0.1:1'], router: { id: 'gr-1', url: 'http://x', extra: 1 } as never })).toThrow(/^router: /);
    expect(() => startRouterHeartbeat({ servers: [], router: { id: 'gr-1', url: 'http://10.0.0.1:1' } })).toThrow('at least one server URL is required');
  });

  it('registers with a real service, whose GET /routers then lists it', async () => {
    const service = await startService({ leaseMs: 60_000 });
    stopping.unshift(service);
    const { beat } = heartbeat([service.url]);
    const reply = await beat.registered;
    expect(reply.router).toBe('gr-1');
    const list = (await (await fetch(`${service.url}/routers`)).json()) as { routers: { id: string; url: string; source: string }[] };
    expect(list.routers).toEqual([expect.objectContaining({ id: 'gr-1', url: 'http://10.0.1.5:9100', source: 'registration' })]);
  });
});
