// startRelay() at its edges, against scripted replicas over real sockets (support.ts): the pace of its
// heartbeats and retries with a random source other than 0; the `next` replica of a failure, across to the
// fallbacks; a round while on a fallback (one primary probed, the fallbacks, the other primaries); which
// statuses are refusals (400 to 499 but 429); the next step for a token the replica does not take; a
// listener that throws; stop() closing its own connections and never a shared transport's; an update
// that sends at once and then keeps the interval.
import { describe, expect, it } from 'vitest';
import { HttpTransport } from '../../src/client/http-transport.js';
import { startRelay, type HeartbeatOutcome, type RelayOptions } from '../../src/relay/index.js';
import { RegistrationError, validateRegistration } from '../../src/relay/registration.js';
import { stopAfterEach } from '../support/cleanup.js';
import { captureLogs } from '../support/logs.js';
import { registration } from '../support/registration.js';
import { throughout, waitFor } from '../support/wait.js';
import { errorBody, startScriptedReplica, type ScriptedReply } from './support.js';

const track = stopAfterEach();

const accept = (intervalMs: number, leaseMs = 60_000): ScriptedReply => ({
  status: 200,
  body: { pool: 'us-east-1/llm/edges', lease_ms: leaseMs, heartbeat_interval_ms: intervalMs },
});
const UNAVAILABLE: ScriptedReply = { status: 503, body: errorBody('store_unavailable', 'the store does not answer') };

function relayTo(options: Partial<RelayOptions> & { servers: string[] }) {
  const beats: HeartbeatOutcome[] = [];
  const logs = captureLogs();
  const relay = track(
    startRelay({
      registration: registration({ name: 'edges' }),
      logger: logs.logger,
      random: () => 0,
      // The scripted replica speaks heartbeats only: the router list is followed elsewhere (test/routers).
      followRouters: false,
      onHeartbeat: (outcome) => beats.push(outcome),
      ...options,
    }),
  );
  const lines = (msg: string) => logs.lines.filter((line) => line.msg === msg);
  return { relay, beats, logs, lines };
}

const okTimes = (beats: HeartbeatOutcome[]) => beats.filter((beat) => beat.ok).map((beat) => beat.at);

describe('startRelay at its edges', () => {
  it('beats at 0.9 to 1 of the interval, spread by the random source', async () => {
    const replica = track(await startScriptedReplica(() => accept(1000)));
    const low = relayTo({ servers: [replica.url], random: () => 0 });
    const mid = relayTo({ servers: [replica.url], random: () => 0.5, registration: registration({ name: 'mid' }) });
    await waitFor(() => okTimes(low.beats).length >= 2 && okTimes(mid.beats).length >= 2, { timeoutMs: 4000, message: 'two beats each' });
    const [l0, l1] = okTimes(low.beats);
    const [m0, m1] = okTimes(mid.beats);
    // Timers are never early; late by a loaded machine at most a little.
    expect(l1! - l0!).toBeGreaterThanOrEqual(900 - 2);
    expect(l1! - l0!).toBeLessThan(1100);
    expect(m1! - m0!).toBeGreaterThanOrEqual(950 - 2);
    // The first reply's interval differs from the default: that is no change of interval.
    expect(low.lines('heartbeat interval changed')).toEqual([]);
    expect(low.lines('heartbeat accepted')[0]).toMatchObject({ level: 20, server: replica.url, pool: 'us-east-1/llm/edges' });
  });

  it('spreads a capped retry by the random source too', async () => {
    let refuse = false;
    const a = track(await startScriptedReplica(() => (refuse ? { status: 401, body: errorBody('unauthorized', 'no') } : accept(400))));
    const b = track(await startScriptedReplica(() => UNAVAILABLE));
    const { relay, lines } = relayTo({ servers: [a.url, b.url], random: () => 0.5, backoff: { initialMs: 5000, maxMs: 5000, jitter: 0 } });
    await relay.registered;
    refuse = true;
    // Starting at index floor(0.5 × 2) = 1: b fails, a refuses; capped by the interval, 400 × (0.75 + 0.25 × 0.5).
    await waitFor(() => lines('heartbeat refused; trying the other replicas').length === 1, { message: 'the refusal' });
    expect(lines('heartbeat refused; trying the other replicas')[0]).toMatchObject({ retry_in_ms: 350, pool: 'us-east-1/llm/edges' });
  });

  it('a failure names the next replica, across to the fallbacks; fallbacks failing are warned and counted', async () => {
    const primary = track(await startScriptedReplica(() => UNAVAILABLE));
    const fallback = track(await startScriptedReplica(() => UNAVAILABLE));
    const { relay, beats, logs } = relayTo({ servers: [primary.url], fallbackServers: [fallback.url], backoff: { initialMs: 5000, maxMs: 5000 } });
    await waitFor(() => beats.length >= 2, { message: 'one round' });
    expect(logs.warnings().map((line) => [line.server, line.next])).toEqual([
      [primary.url, fallback.url],
      [fallback.url, primary.url],
    ]);
    expect(relay.status).toMatchObject({ failuresInRow: 2, fallback: false, server: primary.url });
  });

  it('on a fallback, a round probes one primary, then the fallbacks, then the other primaries, once each', async () => {
    let primariesDown = true;
    let fallbackDown = false;
    const p1 = track(await startScriptedReplica(() => (primariesDown ? UNAVAILABLE : accept(100))));
    const p2 = track(await startScriptedReplica(() => (primariesDown ? UNAVAILABLE : accept(100))));
    const f = track(await startScriptedReplica(() => (fallbackDown ? UNAVAILABLE : accept(100))));
    const { relay, beats, logs, lines } = relayTo({ servers: [p1.url, p2.url], fallbackServers: [f.url], backoff: { initialMs: 5000, maxMs: 5000 } });
    await relay.registered;
    expect(relay.status).toMatchObject({ fallback: true, server: f.url });
    await waitFor(() => beats.filter((beat) => beat.ok).length >= 3, { message: 'beats on the fallback' });
    expect(lines('every primary replica failed; heartbeating a fallback replica (another region)')).toHaveLength(1);
    fallbackDown = true;
    const from = beats.length;
    await waitFor(() => beats.length >= from + 6, { timeoutMs: 3000, message: 'two failed rounds on the fallback' });
    // A round: a primary probed (debug only), the fallback, the other primary; then a wait (the next round
    // is the same, the lease still running: a wait capped by the interval).
    const [one, two] = [beats.slice(from, from + 3), beats.slice(from + 3, from + 6)];
    expect(one.map((beat) => beat.server)).toEqual([p1.url, f.url, p2.url]);
    expect(two.map((beat) => beat.server)).toEqual([p1.url, f.url, p2.url]);
    expect(two[0]!.at - one[2]!.at).toBeGreaterThanOrEqual(75 - 2);
    expect(lines('primary replica still failing; staying on the fallback replicas')[0]).toMatchObject({ level: 20, server: p1.url, next: f.url });
    expect(logs.warnings().slice(-2).map((line) => line.server)).toEqual([f.url, p2.url]);
    expect(relay.status.fallback).toBe(true);
    primariesDown = false;
    relay.update(registration({ name: 'edges', capacity: [{ name: 'gpus', value: 2 }] }));
    await waitFor(() => relay.status.fallback === false, { message: 'back on a primary' });
    expect(lines('a primary replica answered; heartbeating it again instead of the fallback')[0]).toMatchObject({ fallback: f.url });
  });

  it('a 400 is a refusal; a 500 is a failure', async () => {
    const bad = track(await startScriptedReplica(() => ({ status: 400, body: errorBody('invalid_registration', 'name: required') })));
    const refused = relayTo({ servers: [bad.url], backoff: { initialMs: 5000, maxMs: 5000 } });
    await waitFor(() => refused.lines('heartbeat refused by every replica; retrying with a growing backoff').length === 1, { message: 'the 400' });
    expect(refused.logs.warnings()).toEqual([]);
    const broken = track(await startScriptedReplica(() => ({ status: 500, body: errorBody('internal', 'oops') })));
    const failed = relayTo({ servers: [broken.url], backoff: { initialMs: 5000, maxMs: 5000 } });
    await waitFor(() => failed.logs.warnings().length === 1, { message: 'the 500' });
    expect(failed.logs.warnings()[0]).toMatchObject({ msg: 'heartbeat failed; trying the next replica', status: 500 });
    expect(failed.lines('heartbeat refused by every replica; retrying with a growing backoff')).toEqual([]);
  });

  it('a 401 with a token says the replica does not take it', async () => {
    const replica = track(await startScriptedReplica(() => ({ status: 401, body: errorBody('unauthorized', 'the bearer token is not valid') })));
    const { lines } = relayTo({ servers: [replica.url], token: 'wrong-token', backoff: { initialMs: 5000, maxMs: 5000 } });
    await waitFor(() => lines('heartbeat refused by every replica; retrying with a growing backoff').length === 1, { message: 'the refusal' });
    expect(lines('heartbeat refused by every replica; retrying with a growing backoff')[0]!.next_step).toBe(
      "the replica does not accept the token of --token-file: give a write token (one of the replica's --auth-token-file)",
    );
  });

  it('a listener that throws stops the relay with an error line, and stop() still resolves', async () => {
    const replica = track(await startScriptedReplica(() => accept(100)));
    const { relay, lines } = relayTo({
      servers: [replica.url],
      onHeartbeat: () => {
        throw new Error('listener broke');
      },
    });
    await waitFor(() => lines('relay stopped on an unexpected error').length === 1, { message: 'the error line' });
    expect(lines('relay stopped on an unexpected error')[0]).toMatchObject({ level: 50, err: expect.objectContaining({ message: 'listener broke' }) });
    await relay.stop();
  });

  it('stop() closes its own connections and says so; a shared transport is its owner\'s to close', async () => {
    const replica = track(await startScriptedReplica(() => accept(100)));
    const own = relayTo({ servers: [replica.url] });
    await own.relay.registered;
    expect(replica.connections).toBe(1);
    await own.relay.stop();
    expect(own.lines('relay stopped')).toHaveLength(1);
    await waitFor(() => replica.connections === 0, { message: 'its connection closed' });

    // A relay on a shared transport, stopped while another's heartbeat hangs: the other's request stays.
    const hanging = track(await startScriptedReplica(() => 'hang'));
    const transport = new HttpTransport();
    track({ stop: () => transport.close() });
    const waiting = relayTo({ servers: [hanging.url], transport, requestTimeoutMs: 5000, registration: registration({ name: 'waiting' }) });
    const shared = relayTo({ servers: [replica.url], transport, registration: registration({ name: 'shared' }) });
    await shared.relay.registered;
    await waitFor(() => hanging.bodies.length === 1, { message: 'the hung heartbeat' });
    await shared.relay.stop();
    await throughout(300, 20, () => expect(waiting.beats).toEqual([]));
    // Stopped while its own heartbeat hangs: no outcome is reported for it.
    await waiting.relay.stop();
    expect(waiting.beats).toEqual([]);
  });

  it('an update sends at once, then keeps to the interval', async () => {
    const replica = track(await startScriptedReplica(() => accept(400)));
    const { relay, beats } = relayTo({ servers: [replica.url] });
    await relay.registered;
    relay.update(registration({ name: 'edges', capacity: [{ name: 'gpus', value: 3 }] }));
    await waitFor(() => beats.length >= 2, { message: 'the update sent' });
    const sent = beats.length;
    await throughout(500, 20, () => expect(beats.length).toBeLessThanOrEqual(sent + 2));
    expect(relay.registration).toEqual(validateRegistration(registration({ name: 'edges', capacity: [{ name: 'gpus', value: 3 }] })));
  });

  it('names its errors', () => {
    const error = (() => {
      try {
        validateRegistration(registration({ name: 'Bad_Name' }));
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(RegistrationError);
    expect((error as Error).name).toBe('RegistrationError');
  });

  it('once the lease ran out, a failed round waits the backoff again (the lease no longer caps it)', async () => {
    let failing = false;
    const replica = track(await startScriptedReplica(() => (failing ? UNAVAILABLE : accept(2000, 200))));
    const { relay, beats } = relayTo({ servers: [replica.url], backoff: { initialMs: 400, maxMs: 400, jitter: 0 } });
    await relay.registered;
    const acceptedAt = relay.status.lastAcceptedAt!;
    failing = true;
    relay.update(registration({ name: 'edges', capacity: [{ name: 'gpus', value: 9 }] }));
    await waitFor(() => beats.filter((beat) => !beat.ok && beat.at > acceptedAt + 200).length >= 3, { timeoutMs: 4000, message: 'failures after the lease' });
    const after = beats.filter((beat) => !beat.ok && beat.at > acceptedAt + 200).map((beat) => beat.at);
    // Within the lease the waits were a third of what was left (tens of ms); after it, the 400 ms backoff.
    expect(after[2]! - after[1]!).toBeGreaterThanOrEqual(400 - 2);
  });
});
