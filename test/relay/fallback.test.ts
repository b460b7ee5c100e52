// Fallback replicas (docs/contract.md §7): startRelay's `fallbackServers` and `poolscope relay
// --fallback-servers`. Heartbeats go to a fallback only after every primary replica failed in a round (a
// warning names it); while on it, each round first tries one primary, and the relay goes back to a
// primary as soon as one answers (an info line). The flag parses like --servers, is refused with exit 2
// and one line when malformed, and `poolscope simulate` takes it too.
import { afterEach, describe, expect, it } from 'vitest';
import { main, type CliIo } from '../../src/cli/main.js';
import { parseRelayFlags } from '../../src/cli/commands/relay-flags.js';
import { startRelay, type HeartbeatOutcome } from '../../src/relay/index.js';
import { captureLogs } from '../support/logs.js';
import { waitFor } from '../support/wait.js';
import { listPools, relayRegistration, startService, type InProcessService } from './support.js';

const running: { stop(): Promise<void> }[] = [];
function track<T extends { stop(): Promise<void> }>(thing: T): T {
  running.push(thing);
  return thing;
}
afterEach(async () => {
  await Promise.all(running.splice(0).map((thing) => thing.stop()));
});

const SERVICE = { heartbeatIntervalMs: 100, leaseMs: 5000 };

function relayTo(servers: string[], fallbackServers: string[]) {
  const beats: HeartbeatOutcome[] = [];
  const logs = captureLogs();
  const relay = track(
    startRelay({
      servers,
      fallbackServers,
      registration: relayRegistration({ name: 'far' }),
      logger: logs.logger,
      random: () => 0,
      onHeartbeat: (outcome) => beats.push(outcome),
    }),
  );
  return { relay, beats, logs };
}

const accepted = (beats: HeartbeatOutcome[], from = 0) => beats.slice(from).filter((b) => b.ok).map((b) => b.server);

describe('startRelay with fallbackServers', () => {
  it('never uses a fallback while a primary answers', async () => {
    const primary = track(await startService(SERVICE));
    const fallback = track(await startService(SERVICE));
    const { relay, beats } = relayTo([primary.url], [fallback.url]);
    await relay.registered;
    await waitFor(() => beats.length >= 5);
    expect(beats.every((b) => b.ok && b.server === primary.url)).toBe(true);
    expect(relay.status).toMatchObject({ server: primary.url, fallback: false });
    expect((await listPools(fallback.url)).pools).toEqual([]);
  });

  it('moves to the fallback when every primary dies, and back to a primary as soon as one answers', async () => {
    let primaries: InProcessService[] = [await startService(SERVICE), await startService(SERVICE)];
    const ports = primaries.map((p) => p.port);
    const urls = primaries.map((p) => p.url);
    const fallback = track(await startService(SERVICE));
    const { relay, beats, logs } = relayTo(urls, [fallback.url]);
    try {
      await relay.registered;
      expect(beats[0]).toMatchObject({ ok: true, server: urls[0] });

      // Every primary dies: the next round tries both, then the fallback, and stays there.
      await Promise.all(primaries.map((p) => p.stop()));
      primaries = [];
      await waitFor(() => relay.status.fallback, { timeoutMs: 5000 });
      expect(relay.status.server).toBe(fallback.url);
      await waitFor(async () => (await listPools(fallback.url)).pools.some((p) => p.name === 'far'));
      const firstFallback = beats.findIndex((b) => b.ok && b.server === fallback.url);
      // Both primaries failed in that round before the fallback was tried.
      const before = beats.slice(firstFallback - 2, firstFallback);
      expect(before.every((b) => !b.ok)).toBe(true);
      expect(new Set(before.map((b) => b.server))).toEqual(new Set(urls));
      const failureWarnings = () => logs.warnings().filter((l) => l.msg === 'heartbeat failed; trying the next replica').length;
      const warnedBeforeFallback = failureWarnings();
      expect(warnedBeforeFallback).toBeGreaterThanOrEqual(2);
      const fellBack = logs.lines.find((l) => l.msg === 'every primary replica failed; heartbeating a fallback replica (another region)');
      expect(fellBack).toMatchObject({ level: 40, server: fallback.url, primaries: urls });

      // While on the fallback, each round tries one primary first (in turn), then the fallback.
      const onFallbackFrom = beats.length;
      await waitFor(() => accepted(beats, onFallbackFrom).length >= 4);
      const probes = beats.slice(onFallbackFrom).filter((b) => !b.ok).map((b) => b.server);
      expect(new Set(probes)).toEqual(new Set(urls));
      expect(accepted(beats, onFallbackFrom).every((server) => server === fallback.url)).toBe(true);
      // The failed tries of a primary while on the fallback are debug lines, not warnings.
      expect(failureWarnings()).toBe(warnedBeforeFallback);
      expect(logs.lines.filter((l) => l.msg === 'primary replica still failing; staying on the fallback replicas').length).toBe(
        beats.slice(firstFallback).filter((b) => !b.ok).length,
      );

      // The second primary comes back: the relay returns to it within a round per primary.
      const back = await startService(SERVICE, ports[1]);
      primaries.push(back);
      await waitFor(() => !relay.status.fallback, { timeoutMs: 5000 });
      expect(relay.status.server).toBe(urls[1]);
      const returned = logs.lines.find((l) => l.msg === 'a primary replica answered; heartbeating it again instead of the fallback');
      expect(returned).toMatchObject({ level: 30, server: urls[1], fallback: fallback.url });
      await waitFor(async () => (await listPools(back.url)).pools.some((p) => p.name === 'far'));
      const backFrom = beats.length;
      await waitFor(() => accepted(beats, backFrom).length >= 4);
      expect(accepted(beats, backFrom).every((server) => server === urls[1])).toBe(true);
      expect(beats.slice(backFrom).every((b) => b.ok)).toBe(true);
    } finally {
      await Promise.all(primaries.map((p) => p.stop()));
    }
  });

  it('refuses a fallback URL that is no http URL, or that is a primary too', () => {
    const registration = relayRegistration();
    expect(() => startRelay({ servers: ['http://a:8080'], fallbackServers: ['ftp://b'], registration })).toThrow(/"ftp:\/\/b" must be an http/);
    expect(() => startRelay({ servers: ['http://a:8080'], fallbackServers: ['http://a:8080/'], registration })).toThrow(
      /"http:\/\/a:8080" is both a server and a fallback server/,
    );
  });
});

function capture(env: Record<string, string> = {}) {
  let out = '';
  let err = '';
  const shutdown = new AbortController();
  const io: CliIo = { stdout: (t) => void (out += t), stderr: (t) => void (err += t), env, shutdown: shutdown.signal };
  return { io, out: () => out, err: () => err, stop: () => shutdown.abort() };
}

const FIELDS = ['--cluster-id', 'us-east-1', '--namespace', 'llm', '--name', 'cli-far', '--model', 'm'];

describe('--fallback-servers', () => {
  it('parses a comma-separated list like --servers (trailing slashes dropped)', async () => {
    const parsed = await parseRelayFlags(['--servers', 'http://a:8080', '--fallback-servers', 'http://b:8080/,https://c.example', ...FIELDS], {});
    expect(parsed).toMatchObject({ ok: true, config: { servers: ['http://a:8080'], fallbackServers: ['http://b:8080', 'https://c.example'] } });
    const none = await parseRelayFlags(FIELDS, {});
    expect(none).toMatchObject({ ok: true, config: { fallbackServers: [] } });
    const fromEnv = await parseRelayFlags(FIELDS, { POOLSCOPE_RELAY_FALLBACK_SERVERS: 'http://b:8080' });
    expect(fromEnv).toMatchObject({ ok: true, config: { fallbackServers: ['http://b:8080'] } });
  });

  it.each([
    { name: 'no http URL', args: ['--fallback-servers', 'ftp://x'], line: /^poolscope: --fallback-servers: "ftp:\/\/x" must be an http:\/\/ or https:\/\/ URL$/ },
    { name: 'no URL at all', args: ['--fallback-servers', 'http://b:8080,not a url'], line: /^poolscope: --fallback-servers: "not a url" is not a URL/ },
    { name: 'an empty value', args: ['--fallback-servers='], line: /^poolscope: --fallback-servers: must not be empty$/ },
    { name: 'a missing value', args: ['--fallback-servers', '--name', 'x'], line: /^poolscope: --fallback-servers: needs a value/ },
    {
      name: 'a replica also in --servers',
      args: ['--servers', 'http://a:8080', '--fallback-servers', 'http://a:8080/'],
      line: /^poolscope: --fallback-servers: "http:\/\/a:8080" is in --servers too; a fallback is a replica of another region$/,
    },
    { name: 'given twice', args: ['--fallback-servers', 'http://b:1', '--fallback-servers', 'http://c:1'], line: /^poolscope: --fallback-servers: given more than once$/ },
    { name: 'a bad env value', args: [], env: { POOLSCOPE_RELAY_FALLBACK_SERVERS: 'x' }, line: /^poolscope: --fallback-servers: "x" is not a URL.* \(from POOLSCOPE_RELAY_FALLBACK_SERVERS\)$/ },
  ])('poolscope relay refuses $name with exit 2 and one line', async ({ args, env, line }) => {
    const c = capture(env);
    const code = await main(['relay', ...args, ...FIELDS], c.io);
    expect(code).toBe(2);
    expect(c.out()).toBe('');
    expect(c.err()).toMatch(/^[^\n]*\n$/);
    expect(c.err().trimEnd()).toMatch(line);
  });

  it('poolscope simulate takes it too, and refuses a bad one the same way', async () => {
    const c = capture();
    expect(await main(['simulate', '--fallback-servers', 'ftp://x'], c.io)).toBe(2);
    expect(c.err()).toBe('poolscope: --fallback-servers: "ftp://x" must be an http:// or https:// URL\n');
    const help = capture();
    expect(await main(['simulate', '--help'], help.io)).toBe(0);
    expect(help.out()).toContain('--fallback-servers ');
  });

  it('poolscope relay heartbeats the fallback when no --servers replica answers, and logs it', async () => {
    const fallback = track(await startService(SERVICE));
    const c = capture();
    const exited = main(['relay', '--servers', 'http://127.0.0.1:1', '--fallback-servers', fallback.url, ...FIELDS], c.io);
    try {
      await waitFor(async () => (await listPools(fallback.url)).pools.some((p) => p.name === 'cli-far'), { timeoutMs: 5000 });
      await waitFor(() => c.out().includes('heartbeating a fallback replica'));
    } finally {
      c.stop();
    }
    expect(await exited).toBe(0);
    const lines = c.out().trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.find((l) => l.msg === 'relay starting')).toMatchObject({ servers: ['http://127.0.0.1:1'], fallback_servers: [fallback.url] });
    expect(lines.find((l) => l.level === 40 && String(l.msg).includes('fallback'))).toMatchObject({ server: fallback.url, primaries: ['http://127.0.0.1:1'] });
    expect(c.err()).toBe('');
  });
});
