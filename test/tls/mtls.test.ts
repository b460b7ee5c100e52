// Mutual TLS (docs/contract.md §8): with --tls-client-ca-path the service takes only connections that
// present a client certificate signed by that CA. Through the real relay and router clients (the library
// and the `poolscope relay` / `poolscope pools` commands): no certificate is refused, a certificate of
// another CA is refused, the right one works.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { getPools, watchPools } from '../../src/client/index.js';
import { startRelay } from '../../src/relay/index.js';
import { captureCliIo } from '../support/logs.js';
import { registration } from '../support/registration.js';
import { startService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';
import { makeCertificates, type CertificateFiles } from './certificates.js';

let certs: CertificateFiles;
let svc: TestService;
const read = (path: string) => readFileSync(path, 'utf8');

/** A client's TLS options: it trusts the CA and, given a certificate and key pair, presents it. */
const clientTls = (pair?: { cert: string; key: string }) => ({ ca: read(certs.ca), ...(pair && { cert: read(pair.cert), key: read(pair.key) }) });
/** The same as the commands' flags. */
const tlsFlags = (pair?: { cert: string; key: string }) => ['--ca-file', certs.ca, ...(pair ? ['--cert-file', pair.cert, '--key-file', pair.key] : [])];

beforeAll(async () => {
  certs = makeCertificates();
  svc = await startService({
    tlsCertPath: certs.server.cert,
    tlsKeyPath: certs.server.key,
    tlsClientCaPath: certs.ca,
    leaseMs: 30_000,
  });
});
afterAll(async () => {
  await svc?.stop();
  certs?.cleanup();
});

const listed = async (name: string) => {
  const list = await getPools({ servers: [svc.url], ...clientTls(certs.client) });
  return list.pools.some((pool) => pool.name === name);
};

describe('the router client (getPools, watchPools)', () => {
  it('without a client certificate: refused, saying one is required and which flags give it', async () => {
    expect(svc.url).toMatch(/^https:/);
    const refused = getPools({ servers: [svc.url], ...clientTls(), timeoutMs: 5000 });
    await expect(refused).rejects.toThrow(/^no poolscope replica listed the pools \(https:\/\/[^ ]+: TLS: the replica requires a client certificate \(mutual TLS\) \([^)]*\)\); next: pass a client certificate with --cert-file and --key-file$/);
    await expect(refused).rejects.toMatchObject({ failures: [{ tls: 'client-certificate-required' }] });
  });

  it('with a client certificate of another CA: refused', async () => {
    await expect(getPools({ servers: [svc.url], ...clientTls(certs.stranger), timeoutMs: 5000 })).rejects.toThrow(/^no poolscope replica listed the pools/);
  });

  it('with a client certificate of the CA: served', async () => {
    const list = await getPools({ servers: [svc.url], ...clientTls(certs.client) });
    expect(list.pools).toBeInstanceOf(Array);
  });

  it('with a client certificate of the CA, a watch follows the pools over Server-Sent Events', async () => {
    const watch = watchPools({ servers: [svc.url], ...clientTls(certs.client) });
    try {
      await watch.ready;
      expect(watch.status.transport).toBe('sse');
    } finally {
      await watch.close();
    }
  });
});

describe('the relay (startRelay)', () => {
  it('registers with the CA\'s client certificate; without one, or with another CA\'s, it never does', async () => {
    const good = startRelay({ servers: [svc.url], registration: registration({ name: 'mtls-good' }), ...clientTls(certs.client) });
    const none = startRelay({ servers: [svc.url], registration: registration({ name: 'mtls-none' }), ...clientTls(), requestTimeoutMs: 1000 });
    const stranger = startRelay({ servers: [svc.url], registration: registration({ name: 'mtls-stranger' }), ...clientTls(certs.stranger), requestTimeoutMs: 1000 });
    try {
      await good.registered;
      await waitFor(() => listed('mtls-good'), { message: 'the pool of the relay with the right certificate' });
      await waitFor(() => none.status.failuresInRow >= 1 && stranger.status.failuresInRow >= 1, { message: 'both refused relays failing' });
      expect(none.status.lastAcceptedAt).toBeUndefined();
      expect(stranger.status.lastAcceptedAt).toBeUndefined();
      expect(await listed('mtls-none')).toBe(false);
      expect(await listed('mtls-stranger')).toBe(false);
    } finally {
      await Promise.all([good.stop(), none.stop(), stranger.stop()]);
    }
  });
});

describe('the commands (poolscope relay, poolscope pools)', () => {
  const fields = ['--cluster-id=us-east-1', '--namespace=llm', '--model=m'];

  it('poolscope relay --cert-file/--key-file registers; poolscope pools with them lists it, without them fails', async () => {
    const tls = tlsFlags(certs.client);
    const relay = captureCliIo();
    const running = main(['relay', '--servers', svc.url, ...tls, ...fields, '--name=mtls-cli'], relay.io);
    try {
      await waitFor(() => listed('mtls-cli'), { message: 'the pool of poolscope relay' });
    } finally {
      relay.stop();
      expect(await running).toBe(0);
    }

    const pools = captureCliIo();
    expect(await main(['pools', '-o', 'json', '--servers', svc.url, ...tls], pools.io)).toBe(0);
    expect((JSON.parse(pools.out()) as { pools: { name: string }[] }).pools.map((pool) => pool.name)).toContain('mtls-cli');

    const without = captureCliIo();
    expect(await main(['pools', '--servers', svc.url, ...tlsFlags()], without.io)).toBe(1);
    expect(without.err()).toMatch(/^poolscope: no poolscope replica listed the pools \([^\n]*\); next: pass a client certificate with --cert-file and --key-file\n$/);

    const stranger = captureCliIo();
    expect(await main(['pools', '--servers', svc.url, ...tlsFlags(certs.stranger)], stranger.io)).toBe(1);
  });
});
