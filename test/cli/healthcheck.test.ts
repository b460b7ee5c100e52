// `poolscope healthcheck` (the image's HEALTHCHECK), the real binary against a real `serve`: it probes
// /livez where serve serves — serve's --listen and --tls-cert-path, from flags or serve's own environment
// names — passes while serve runs and fails once it is gone; over TLS it accepts only the server holding
// the given certificate, so another server on the port never passes for this one.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { nonServingCommand, probeUrl } from '../../src/cli/commands/healthcheck.js';
import { freePort, REPO_ROOT, runPoolscope, startPoolscope } from '../support/process.js';
import { waitFor } from '../support/wait.js';
import { makeCertificates } from '../tls/certificates.js';

const certificates = makeCertificates();
afterAll(() => certificates.cleanup());
beforeAll(() => {
  const buildError = inject('buildError');
  if (buildError !== null) throw new Error(buildError);
});

describe('poolscope healthcheck', () => {
  it('probes serve on a non-default --listen given by POOLSCOPE_SERVE_LISTEN, and fails once serve is gone', async () => {
    const port = await freePort();
    const env = { POOLSCOPE_SERVE_LISTEN: `0.0.0.0:${port}` };
    const svc = await startPoolscope([], { env, port });
    try {
      const healthy = await runPoolscope(['healthcheck'], { env });
      expect(healthy).toMatchObject({ code: 0, stderr: '' });
      // Where the image's old probe looked: nothing there.
      const elsewhere = await runPoolscope(['healthcheck', `--listen=127.0.0.1:${await freePort()}`]);
      expect(elsewhere.code).toBe(1);
      expect(elsewhere.stderr).toMatch(/^poolscope: healthcheck: http:\/\/127\.0\.0\.1:\d+\/livez: connect ECONNREFUSED/);
    } finally {
      expect(await svc.stop()).toBe(0);
    }
    const gone = await runPoolscope(['healthcheck'], { env });
    expect(gone.code).toBe(1);
  });

  it('probes serve over TLS with its certificate, and refuses a server that holds another', async () => {
    const port = await freePort();
    const tls = [`--tls-cert-path=${certificates.server.cert}`, `--tls-key-path=${certificates.server.key}`];
    const serve = spawn(process.execPath, ['bin/poolscope.js', 'serve', ...tls, `--listen=127.0.0.1:${port}`], { cwd: REPO_ROOT, stdio: 'ignore' });
    const exited = new Promise<number | null>((resolve) => serve.once('exit', resolve));
    try {
      const env = { POOLSCOPE_SERVE_LISTEN: `127.0.0.1:${port}`, POOLSCOPE_SERVE_TLS_CERT_PATH: certificates.server.cert };
      // The probe itself says when serve is up: it fails until then.
      await waitFor(async () => (await runPoolscope(['healthcheck'], { env })).code === 0, { timeoutMs: 15_000, message: 'healthcheck over TLS' });
      expect(await runPoolscope(['healthcheck'], { env })).toMatchObject({ code: 0, stderr: '' });
      // The same server, but the probe expects another certificate.
      const other = await runPoolscope(['healthcheck', `--listen=127.0.0.1:${port}`, `--tls-cert-path=${certificates.client.cert}`]);
      expect(other.code).toBe(1);
      expect(other.stderr).toContain("the server's certificate is not --tls-cert-path's");
      // Plain HTTP to a TLS listener is no answer.
      expect((await runPoolscope(['healthcheck', `--listen=127.0.0.1:${port}`, '--timeout-ms=1500'])).code).toBe(1);
    } finally {
      serve.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  });

  it('another server answering 200 on the port does not pass for a TLS replica', async () => {
    const impostor = createServer((_req, res) => res.end('{"status":"ok"}'));
    await new Promise<void>((resolve) => impostor.listen(0, '127.0.0.1', resolve));
    const { port } = impostor.address() as { port: number };
    try {
      // Without TLS the probe cannot tell (README "Container image" says so) ...
      expect((await runPoolscope(['healthcheck', `--listen=127.0.0.1:${port}`])).code).toBe(0);
      // ... with it, the impostor fails the handshake.
      const result = await runPoolscope(['healthcheck', `--listen=127.0.0.1:${port}`, `--tls-cert-path=${certificates.server.cert}`]);
      expect(result.code).toBe(1);
    } finally {
      await new Promise((resolve) => impostor.close(resolve));
    }
  });

  it('refuses a bad flag with the one-line refusal, exit 2', async () => {
    const result = await runPoolscope(['healthcheck', '--listen=nope']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^poolscope: --listen: must be HOST:PORT/);
    expect((await runPoolscope(['healthcheck', '--timeout-ms=0'])).stderr).toMatch(/^poolscope: --timeout-ms: must be a positive integer/);
  });

  it('reaches a wildcard listener over loopback', () => {
    expect(probeUrl({ host: '0.0.0.0', port: 9 }, false)).toBe('http://127.0.0.1:9/livez');
    expect(probeUrl({ host: '::', port: 9 }, true)).toBe('https://[::1]:9/livez');
    expect(probeUrl({ host: '127.0.0.2', port: 9 }, false)).toBe('http://127.0.0.2:9/livez');
  });

  it('passes in a container whose main process is a command that serves nothing (relay, simulate)', () => {
    expect(nonServingCommand(['node', 'bin/poolscope.js', 'relay', '--name=x'])).toBe('relay');
    expect(nonServingCommand(['node', '/app/bin/poolscope.js', 'simulate'])).toBe('simulate');
    expect(nonServingCommand(['node', 'bin/poolscope.js', 'serve'])).toBeUndefined();
    expect(nonServingCommand(['/sbin/init'])).toBeUndefined();
  });
});
