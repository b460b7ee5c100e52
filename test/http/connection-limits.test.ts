// Connection limits of the real binary (docs/contract.md §8): --max-connections closes the next
// connection at once and counts it; a connection that never finishes its headers is closed after 10 s;
// idle keep-alive connections are kept 65 s; running out of file descriptors (EMFILE) is logged, counted
// and survived.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkLogStream, freePort, REPO_ROOT, startPoolscope, type PoolscopeProcess } from '../support/process.js';
import { waitFor } from '../support/wait.js';
import { metricSample, rawConnect, WATCH_REQUEST, type RawConnection } from './raw-client.js';

describe('--max-connections, header and keep-alive timeouts', () => {
  let replica: PoolscopeProcess;
  beforeAll(async () => {
    replica = await startPoolscope(['--max-connections=20'], { env: { POOLSCOPE_LOG_LEVEL: 'info' } });
  });
  afterAll(() => replica?.stop());

  it('closes connections beyond --max-connections at once, counts them, and serves again below it', async () => {
    // Watch streams hold their connections open; fetch's own keep-alive connections may hold a few more.
    const opened: RawConnection[] = [];
    try {
      for (let i = 0; i < 25; i++) {
        const connection = await rawConnect(replica.port, WATCH_REQUEST);
        opened.push(connection);
        await waitFor(() => connection.count('event: resync') === 1 || connection.closed, { message: `connection ${i} answered or closed` });
      }
      const served = opened.filter((c) => !c.closed);
      const refused = opened.filter((c) => c.closed);
      expect(served.length).toBeLessThanOrEqual(20);
      expect(served.length).toBeGreaterThanOrEqual(15);
      expect(refused.length).toBe(25 - served.length);
      expect(refused.every((c) => c.bytes === 0)).toBe(true);
      for (const c of served.slice(0, 5)) c.socket.destroy();
      await waitFor(async () => (await metricSample(replica.url, 'poolscope_connections_refused_total', { reason: 'max_connections' })) === refused.length, {
        message: 'the refusals counted',
      });
      expect((await fetch(`${replica.url}/healthz`)).status).toBe(200);
      expect(served.slice(5).every((c) => !c.closed)).toBe(true);
      expect(replica.logs.some((line) => line.msg === 'connection refused: --max-connections connections are open')).toBe(true);
    } finally {
      for (const c of opened) c.socket.destroy();
    }
  });

  it('keeps an idle keep-alive connection 65 s (as its Keep-Alive header says)', async () => {
    const reply = await rawConnect(replica.port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await waitFor(() => reply.received.includes('\r\n\r\n'), { message: 'reply headers' });
    expect(reply.received).toMatch(/\r\nKeep-Alive: timeout=65\r\n/i);
    reply.socket.destroy();
  });

  it('closes a connection that has not sent its request headers within 10 s', async () => {
    const started = Date.now();
    const slow = await rawConnect(replica.port, 'GET /pools HTTP/1.1\r\nHost: x\r\n');
    await waitFor(() => slow.closed, { timeoutMs: 25_000, intervalMs: 100, message: 'the unfinished request closed' });
    // Node checks open connections every second (connectionsCheckingInterval) and closes one whose headers
    // are older than the 10 s headers timeout: between 10 and 11 s, plus this poll's 100 ms and some slack.
    const closedAfterMs = Date.now() - started;
    expect(closedAfterMs).toBeGreaterThanOrEqual(9_000);
    expect(closedAfterMs).toBeLessThanOrEqual(11_500);
    expect(slow.status()).toBe(408);
    expect((await fetch(`${replica.url}/healthz`)).status).toBe(200);
  }, 40_000);
});

describe('running out of file descriptors', () => {
  let child: ReturnType<typeof spawn> | undefined;
  afterAll(() => {
    if (child?.pid) process.kill(-child.pid, 'SIGKILL');
  });

  it('logs and counts EMFILE, never exits, and serves again once descriptors free up', async () => {
    const port = await freePort();
    // 128, not fewer: Node opens the ES modules in parallel at start (zod's locales alone are dozens), and
    // under 64 descriptors the start itself fails. At rest the replica holds about 20.
    const command = `ulimit -n 128; exec ${JSON.stringify(process.execPath)} bin/poolscope.js serve --listen=127.0.0.1:${port}`;
    child = spawn('bash', ['-c', command], {
      cwd: REPO_ROOT,
      env: { ...process.env, POOLSCOPE_LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    checkLogStream(child.stdout!, 'poolscope serve stdout');
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    let exited = false;
    child.once('exit', () => (exited = true));
    const url = `http://127.0.0.1:${port}`;
    await waitFor(async () => !exited && (await fetch(`${url}/healthz`)).status === 200, { timeoutMs: 15_000, message: 'serving' });

    // More watch streams than the process has descriptors.
    const held: RawConnection[] = [];
    for (let i = 0; i < 160; i++) held.push(await rawConnect(port, WATCH_REQUEST));
    await waitFor(() => stdout.includes('"reason":"emfile"'), { timeoutMs: 10_000, message: `the EMFILE line; stderr: ${stderr}` });
    expect(exited).toBe(false);
    for (const c of held) c.socket.destroy();

    await waitFor(async () => !exited && (await fetch(`${url}/healthz`)).status === 200, { timeoutMs: 10_000, message: 'serving again' });
    const emfile = await metricSample(url, 'poolscope_connections_refused_total', { reason: 'emfile' });
    expect(emfile).toBeGreaterThan(0);
    const line = stdout.split('\n').find((l) => l.includes('"reason":"emfile"'))!;
    expect(JSON.parse(line)).toMatchObject({ level: 40 });
    expect(line).not.toContain('"stack"');
    expect(exited).toBe(false);
    expect(stderr).toBe('');
  }, 60_000);
});
