// startRelay() against scripted replicas over real sockets (support.ts): what it does with each kind of
// answer, on short timers. A refusal (4xx) is logged once per change of it, with the wait and, when every
// replica refused, the backoff's cap; a 429 and a reply that breaks the contract are failures like a 5xx;
// while the lease runs a failed round waits at most a third of what is left of it, and a lease that ran
// out is said once; accepted again, the relay says how many heartbeats failed, follows a changed
// interval, and logs a refusal it already logged again.
import { describe, expect, it } from 'vitest';
import { startRelay, type HeartbeatOutcome } from '../../src/relay/index.js';
import { stopAfterEach } from '../support/cleanup.js';
import { captureLogs } from '../support/logs.js';
import { registration } from '../support/registration.js';
import { waitFor } from '../support/wait.js';
import { errorBody, startScriptedReplica, type ScriptedReply } from './support.js';

const track = stopAfterEach();

const accept = (intervalMs: number, leaseMs: number): ScriptedReply => ({
  status: 200,
  body: { pool: 'us-east-1/llm/scripted', lease_ms: leaseMs, heartbeat_interval_ms: intervalMs },
});
const UNAUTHORIZED: ScriptedReply = { status: 401, body: errorBody('unauthorized', 'the bearer token is not valid') };
const FORBIDDEN: ScriptedReply = { status: 403, body: errorBody('forbidden', 'may not write pool us-east-1/llm/scripted') };
const UNAVAILABLE: ScriptedReply = { status: 503, body: errorBody('store_unavailable', 'the store does not answer') };

function relayTo(servers: string[], backoff: { initialMs: number; maxMs: number }) {
  const beats: HeartbeatOutcome[] = [];
  const logs = captureLogs();
  const relay = track(
    startRelay({
      servers,
      registration: registration({ name: 'scripted' }),
      logger: logs.logger,
      // The first server first, no jitter: every wait is the one the rules give.
      random: () => 0,
      // The scripted replica speaks heartbeats only: the router list is followed elsewhere (test/routers).
      followRouters: false,
      backoff,
      onHeartbeat: (outcome) => beats.push(outcome),
    }),
  );
  const lines = (msg: string) => logs.lines.filter((line) => line.msg === msg);
  return { relay, beats, logs, lines };
}

const ALL_REFUSED = 'heartbeat refused by every replica; retrying with a growing backoff';
const SOME_REFUSED = 'heartbeat refused; trying the other replicas';

describe('startRelay against scripted replicas', () => {
  it('logs a refusal by every replica once per change, with its wait and the cap, and waits the whole growing backoff', async () => {
    const a = track(await startScriptedReplica(() => UNAUTHORIZED));
    const b = track(await startScriptedReplica(() => UNAUTHORIZED));
    const { relay, beats, logs, lines } = relayTo([a.url, b.url], { initialMs: 40, maxMs: 5000 });
    await waitFor(() => beats.length >= 6, { message: 'three rounds' });
    expect(beats.slice(0, 6).map((beat) => [beat.server, beat.ok, !beat.ok && beat.status])).toEqual([
      [a.url, false, 401],
      [b.url, false, 401],
      [a.url, false, 401],
      [b.url, false, 401],
      [a.url, false, 401],
      [b.url, false, 401],
    ]);
    expect((beats[0] as { reason: string }).reason).toBe('401 unauthorized: the bearer token is not valid');
    // The full backoff between rounds (40, then 80 ms), never less: nothing would be accepted sooner.
    expect(beats[2]!.at - beats[1]!.at).toBeGreaterThanOrEqual(40 - 2);
    expect(beats[4]!.at - beats[3]!.at).toBeGreaterThanOrEqual(80 - 2);
    expect(lines(ALL_REFUSED)).toHaveLength(1);
    expect(lines(ALL_REFUSED)[0]).toMatchObject({
      level: 50,
      server: b.url,
      status: 401,
      reason: '401 unauthorized: the bearer token is not valid',
      next_step: "pass a write token (one of the replica's --auth-token-file) with --token-file",
      retry_in_ms: 40,
      backoff_max_ms: 5000,
    });
    // Each refusal of a round is a debug line naming the next replica, never a warning.
    expect(lines('heartbeat refused; trying the next replica')[0]).toMatchObject({ level: 20, server: a.url, status: 401, next: b.url });
    expect(logs.warnings()).toEqual([]);
    expect(relay.status.failuresInRow).toBeGreaterThanOrEqual(6);
    expect(relay.status.lastAcceptedAt).toBeUndefined();

    // Another refusal is logged again, once.
    a.answer = () => FORBIDDEN;
    b.answer = () => FORBIDDEN;
    await waitFor(() => lines(ALL_REFUSED).length === 2, { message: 'the 403 logged' });
    expect(lines(ALL_REFUSED)[1]).toMatchObject({ status: 403, next_step: 'the token of --token-file lacks the scope of a write: give a write token (one of the replica\'s --auth-token-file)' });
    expect(lines(ALL_REFUSED)[1]!.retry_in_ms).toBeGreaterThan(40);
    const count = beats.length;
    await waitFor(() => beats.length >= count + 2, { message: 'another round' });
    expect(lines(ALL_REFUSED)).toHaveLength(2);
  });

  it('counts a 429 and a reply that breaks the contract as failures, not refusals', async () => {
    const busy = track(await startScriptedReplica(() => ({ status: 429, body: errorBody('too_many_requests', 'slow down') })));
    const garbled = track(await startScriptedReplica(() => ({ status: 200, body: { pool: 'us-east-1/llm/scripted' } })));
    const { relay, beats, logs, lines } = relayTo([busy.url, garbled.url], { initialMs: 40, maxMs: 100 });
    await waitFor(() => beats.length >= 4, { message: 'two rounds' });
    expect(beats[0]).toMatchObject({ ok: false, server: busy.url, status: 429, reason: '429 too_many_requests: slow down' });
    expect(beats[1]).toMatchObject({ ok: false, server: garbled.url, status: 200, reason: 'the reply breaks the contract' });
    expect(logs.warnings()[0]).toMatchObject({ msg: 'heartbeat failed; trying the next replica', server: busy.url, status: 429, next: garbled.url });
    expect(logs.warnings()[0]).not.toHaveProperty('next_step');
    expect(logs.warnings()[1]).toMatchObject({ server: garbled.url, status: 200, reason: 'the reply breaks the contract', next: busy.url });
    expect(lines(ALL_REFUSED)).toEqual([]);
    expect(lines(SOME_REFUSED)).toEqual([]);
    expect(relay.status.lastAcceptedAt).toBeUndefined();
  });

  it('while the lease runs waits at most a third of what is left of it; says once that it lapsed; says when it is accepted again', async () => {
    const LEASE = 900;
    let refuse = false;
    const a = track(await startScriptedReplica(() => (refuse ? UNAUTHORIZED : accept(5000, LEASE))));
    const b = track(await startScriptedReplica(() => UNAVAILABLE));
    const { relay, beats, logs, lines } = relayTo([a.url, b.url], { initialMs: 5000, maxMs: 5000 });
    const reply = await relay.registered;
    expect(reply).toEqual({ pool: 'us-east-1/llm/scripted', lease_ms: LEASE, heartbeat_interval_ms: 5000 });
    expect(lines('registered')[0]).toMatchObject({ server: a.url, lease_ms: LEASE, heartbeat_interval_ms: 5000 });
    expect(relay.status).toMatchObject({ server: a.url, fallback: false, heartbeatIntervalMs: 5000, leaseMs: LEASE, failuresInRow: 0 });
    const acceptedAt = relay.status.lastAcceptedAt!;
    expect(acceptedAt).toBe(beats[0]!.at);

    // One replica refuses and the other fails: not every one refused, so the wait is capped by the lease.
    refuse = true;
    relay.update(registration({ name: 'scripted', capacity: [{ name: 'gpus', value: 4 }] }));
    await waitFor(() => lines(SOME_REFUSED).length === 1, { message: 'the refusal' });
    const refusal = lines(SOME_REFUSED)[0]!;
    expect(refusal).toMatchObject({ level: 50, server: a.url, status: 401 });
    expect(refusal).not.toHaveProperty('backoff_max_ms');
    // A third of what is left of the lease (at most 300 ms), less a quarter at random 0: not the 5 s backoff.
    expect(refusal.retry_in_ms).toBeGreaterThan(150);
    expect(refusal.retry_in_ms).toBeLessThanOrEqual(225);
    expect(logs.warnings()[0]).toMatchObject({ msg: 'heartbeat failed; trying the next replica', server: b.url, status: 503, next: a.url });

    // Rounds go on well within the lease; after it, the lapse is said once.
    const lapsed = 'no replica accepted a heartbeat for a whole lease: the pool has lapsed';
    await waitFor(() => lines(lapsed).length > 0, { timeoutMs: 3000, message: 'the lapse' });
    expect(lines(lapsed)[0]).toMatchObject({ level: 50, lease_ms: LEASE, last_accepted: new Date(acceptedAt).toISOString() });
    const lapseBeat = beats.findIndex((beat) => beat.at >= acceptedAt + LEASE);
    expect(lapseBeat).toBeGreaterThan(2);
    const count = beats.length;
    relay.update(registration({ name: 'scripted', capacity: [{ name: 'gpus', value: 5 }] }));
    await waitFor(() => beats.length >= count + 2, { message: 'a round after the lapse' });
    expect(lines(lapsed)).toHaveLength(1);
    expect(lines(SOME_REFUSED)).toHaveLength(1);

    // Accepted again, at another interval.
    const failures = relay.status.failuresInRow;
    expect(failures).toBeGreaterThanOrEqual(4);
    refuse = false;
    a.answer = () => accept(4000, LEASE);
    relay.update(registration({ name: 'scripted', capacity: [{ name: 'gpus', value: 6 }] }));
    await waitFor(() => relay.status.failuresInRow === 0, { message: 'accepted again' });
    expect(lines('heartbeat interval changed')[0]).toMatchObject({ from_ms: 5000, to_ms: 4000, server: a.url });
    expect(lines('heartbeat accepted again')[0]).toMatchObject({ level: 30, server: a.url });
    expect(lines('heartbeat accepted again')[0]!.failures).toBeGreaterThanOrEqual(failures);
    expect(lines('registered')).toHaveLength(1);
    expect(relay.status).toMatchObject({ heartbeatIntervalMs: 4000, failuresInRow: 0 });
    expect(a.bodies.at(-1)).toMatchObject({ name: 'scripted', capacity: [{ name: 'gpus', value: 6 }] });

    // The same refusal after an accepted heartbeat is news again; so is a lapse.
    a.answer = () => UNAUTHORIZED;
    relay.update(registration({ name: 'scripted', capacity: [{ name: 'gpus', value: 7 }] }));
    await waitFor(() => lines(SOME_REFUSED).length === 2, { message: 'the refusal again' });
    await waitFor(() => lines(lapsed).length === 2, { timeoutMs: 3000, message: 'the second lapse' });
  });
});
