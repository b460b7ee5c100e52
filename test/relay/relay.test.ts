// startRelay() against the real service in-process: it registers and renews at the interval the reply
// names (and follows a changed one), fails over on a 503 and on a replica that never answers, sends a
// changed registration at once, carries a bearer token over TLS with a custom CA, and stops.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRelay, type HeartbeatOutcome } from '../../src/relay/index.js';
import { RegistrationError } from '../../src/relay/registration.js';
import { stopAfterEach } from '../support/cleanup.js';
import { listPools } from '../support/http.js';
import { captureLogs } from '../support/logs.js';
import { registration } from '../support/registration.js';
import { startService, type TestService } from '../support/service.js';
import { useRedis } from '../support/use-redis.js';
import { waitFor } from '../support/wait.js';
import { hasOpenssl, makeTlsFiles, startSilentServer } from './support.js';

const track = stopAfterEach();

function relayTo(servers: string[], overrides: Partial<Parameters<typeof startRelay>[0]> = {}) {
  const beats: HeartbeatOutcome[] = [];
  const logs = captureLogs();
  const relay = track(
    startRelay({
      servers,
      registration: registration({ name: 'relayed' }),
      logger: logs.logger,
      random: () => 0,
      onHeartbeat: (outcome) => beats.push(outcome),
      ...overrides,
    }),
  );
  return { relay, beats, logs };
}

/** Gaps between consecutive accepted heartbeats sent to `server`. */
function gaps(beats: HeartbeatOutcome[], server: string): number[] {
  const times = beats.filter((b) => b.ok && b.server === server).map((b) => b.at);
  return times.slice(1).map((t, i) => t - times[i]!);
}

const listed = async (url: string, name = 'relayed') => (await listPools(url)).pools.some((p) => p.name === name);

describe('startRelay', () => {
  it('registers at once, then renews at the interval the reply names, and follows a changed interval', async () => {
    let service: TestService = await startService({ heartbeatIntervalMs: 150, leaseMs: 3000 });
    const port = service.port;
    try {
      const { relay, beats } = relayTo([service.url]);
      const reply = await relay.registered;
      expect(reply).toMatchObject({ pool: 'us-east-1/llm/relayed', lease_ms: 3000, heartbeat_interval_ms: 150 });
      expect(await listed(service.url)).toBe(true);
      await waitFor(() => beats.filter((b) => b.ok).length >= 6, { timeoutMs: 5000 });
      for (const gap of gaps(beats, service.url)) {
        expect(gap).toBeGreaterThanOrEqual(150 * 0.9 - 5);
        expect(gap).toBeLessThan(150 + 120);
      }
      // The same replica restarted with another interval: the relay takes the new one from the reply.
      await service.stop();
      service = await startService({ heartbeatIntervalMs: 600, leaseMs: 3000 }, port);
      await waitFor(() => relay.status.heartbeatIntervalMs === 600, { timeoutMs: 5000 });
      const from = beats.length;
      await waitFor(() => beats.slice(from).filter((b) => b.ok).length >= 4, { timeoutMs: 5000 });
      const slow = gaps(beats.slice(from), service.url);
      expect(slow.length).toBeGreaterThanOrEqual(3);
      for (const gap of slow) {
        expect(gap).toBeGreaterThanOrEqual(600 * 0.9 - 5);
        expect(gap).toBeLessThan(600 + 150);
      }
    } finally {
      await service.stop();
    }
  });

  describe('fails over', () => {
    const redis = useRedis('relay');

    it('to the next replica on a 503 (its store unreachable) and stays there', async () => {
      const frozen = track(
        await startService({
          registrationStorage: 'redis',
          redisUrl: redis.url,
          redisPrefix: redis.prefix,
          redisCommandTimeoutMs: 200,
        }),
      );
      const healthy = track(await startService({ heartbeatIntervalMs: 100 }));
      redis.pause();
      try {
        const { relay, beats, logs } = relayTo([frozen.url, healthy.url]);
        await relay.registered;
        expect(beats[0]).toMatchObject({ ok: false, server: frozen.url, status: 503 });
        expect(beats[1]).toMatchObject({ ok: true, server: healthy.url });
        await waitFor(() => beats.length >= 5);
        expect(beats.slice(1).every((b) => b.ok && b.server === healthy.url)).toBe(true);
        expect(relay.status.server).toBe(healthy.url);
        expect(logs.warnings()[0]).toMatchObject({ server: frozen.url, status: 503, next: healthy.url });
        expect(String(logs.warnings()[0]!.reason)).toMatch(/^503 store_unavailable/);
      } finally {
        redis.resume();
      }
    });

    it('retries at least every half interval once its lease has run out, so it renews within a renewal window', async () => {
      // A store outage longer than the lease: the lease is held only for one renewal window after it
      // (interval + command timeout, docs/contract.md §9). Retrying at the full interval after each
      // failed attempt (a 503 after the command timeout) would put the first renewal at the window's end.
      const intervalMs = 1000;
      const commandTimeoutMs = 200;
      const service = track(
        await startService({ registrationStorage: 'redis', redisUrl: redis.url, redisPrefix: redis.prefix, redisCommandTimeoutMs: commandTimeoutMs, heartbeatIntervalMs: intervalMs, leaseMs: 2000 }),
      );
      const { relay, beats } = relayTo([service.url], { random: () => 1 });
      await relay.registered;
      redis.pause();
      try {
        const leaseEnd = relay.status.lastAcceptedAt! + 2000;
        await waitFor(() => beats.filter((b) => !b.ok && b.at > leaseEnd).length >= 4, { timeoutMs: 10_000 });
        const attempts = beats.filter((b) => b.at > leaseEnd).map((b) => b.at);
        const spacing = attempts.slice(1).map((at, i) => at - attempts[i]!);
        for (const gap of spacing) expect(gap).toBeLessThan(intervalMs / 2 + commandTimeoutMs + 150);
      } finally {
        redis.resume();
      }
      await waitFor(() => beats.at(-1)?.ok === true, { timeoutMs: 5000 });
    });

    it('to the next replica when one never answers, within the request timeout', async () => {
      const silent = track(await startSilentServer());
      const healthy = track(await startService({ heartbeatIntervalMs: 1000 }));
      const { relay, beats } = relayTo([silent.url, healthy.url]);
      const startedAt = Date.now();
      await relay.registered;
      // Half the contract's default interval (5 s) until a reply names one.
      expect(Date.now() - startedAt).toBeLessThan(2500 + 1000);
      expect(beats[0]).toMatchObject({ ok: false, server: silent.url, reason: 'no reply within 2500 ms' });
    });

    it('backs off after a round in which no replica answered, with a warning per failure', async () => {
      const { relay, beats, logs } = relayTo(['http://127.0.0.1:1']);
      await waitFor(() => beats.length >= 3);
      const times = beats.map((b) => b.at);
      expect(times[2]! - times[1]!).toBeGreaterThan(times[1]! - times[0]!);
      expect(relay.status.failuresInRow).toBeGreaterThanOrEqual(3);
      expect(beats[0]).toMatchObject({ ok: false, status: undefined });
      expect(String((beats[0] as { reason: string }).reason)).toMatch(/ECONNREFUSED/);
      expect(logs.warnings().length).toBeGreaterThanOrEqual(3);
    });
  });

  it('sends a changed registration at once, not at the next interval', async () => {
    const service = track(await startService({ heartbeatIntervalMs: 10_000, leaseMs: 30_000 }));
    const { relay } = relayTo([service.url]);
    await relay.registered;
    relay.update(registration({ name: 'relayed', capacity: [{ name: 'gpus', value: 16 }] }));
    const pool = await waitFor(async () => (await listPools(service.url)).pools.find((p) => p.capacity[0]?.value === 16), {
      timeoutMs: 2000,
    });
    expect(pool.name).toBe('relayed');
    expect(() => relay.update(registration({ name: 'relayed', capacity: [{ name: 'gpus', value: 'x' }] }))).toThrow(RegistrationError);
    expect(() => relay.update(registration({ name: 'another' }))).toThrow(/keeps its pool/);
  });

  it('refuses a registration that breaks the contract at start, naming the field', () => {
    try {
      startRelay({ servers: ['http://127.0.0.1:1'], registration: registration({ capacity: [{ name: 'gpus', value: 'eight' }] }) });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(RegistrationError);
      expect((error as RegistrationError).field).toBe('capacity.0.value');
    }
    expect(() => startRelay({ servers: ['http://127.0.0.1:1'], registration: registration({ extra: 1 }) })).toThrow(/extra: unknown field/);
    expect(() => startRelay({ servers: [], registration: registration() })).toThrow(/at least one server/);
  });

  it('stops: no heartbeat after stop() resolves', async () => {
    const service = track(await startService({ heartbeatIntervalMs: 50, leaseMs: 2000 }));
    const { relay, beats } = relayTo([service.url]);
    await waitFor(() => beats.length >= 2);
    await relay.stop();
    const count = beats.length;
    // Wait for the service to see a later heartbeat of another pool: the stopped relay's count stands.
    const other = relayTo([service.url], { registration: registration({ name: 'other' }) });
    await waitFor(() => other.beats.filter((b) => b.ok).length >= 4);
    expect(beats.length).toBe(count);
  });

  describe.skipIf(!hasOpenssl)('over TLS with a bearer token', () => {
    const files = hasOpenssl ? makeTlsFiles() : undefined;
    let service: TestService;
    beforeAll(async () => {
      service = await startService({ tlsCertPath: files!.cert, tlsKeyPath: files!.key, authTokenFile: files!.tokenFile });
    });
    afterAll(async () => {
      await service?.stop();
      files?.cleanup();
    });

    it('registers with the CA and the token', async () => {
      const { readFileSync } = await import('node:fs');
      const { relay } = relayTo([service.url], { ca: readFileSync(files!.cert), token: 'secret-token' });
      expect(service.url).toMatch(/^https:/);
      await expect(relay.registered).resolves.toMatchObject({ pool: 'us-east-1/llm/relayed' });
    });

    it('is refused without the token (an error line naming --token-file, 401), and cannot connect without the CA (a warning naming --ca-file)', async () => {
      const { readFileSync } = await import('node:fs');
      const noToken = relayTo([service.url], { ca: readFileSync(files!.cert) });
      await waitFor(() => noToken.beats.length >= 1);
      expect(noToken.beats[0]).toMatchObject({ ok: false, status: 401 });
      const refusal = await waitFor(() =>
        noToken.logs.lines.find((l) => l.level === 50 && l.msg === 'heartbeat refused by every replica; retrying with a growing backoff'),
      );
      expect(refusal).toMatchObject({ status: 401, next_step: expect.stringMatching(/^pass a write token .* with --token-file$/) });
      const noCa = relayTo([service.url], { token: 'secret-token' });
      await waitFor(() => noCa.beats.length >= 1);
      expect(noCa.beats[0]).toMatchObject({ ok: false, status: undefined });
      expect((noCa.beats[0] as { reason: string }).reason).toMatch(/certificate/i);
      const warning = await waitFor(() => noCa.logs.lines.find((l) => l.level === 40 && l.msg === 'heartbeat failed; trying the next replica'));
      expect(warning).toMatchObject({ next_step: "pass the CA that signed the replica's certificate with --ca-file" });
    });
  });
});
