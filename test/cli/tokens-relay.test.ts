// `poolscope relay` follows its `--token-file` (docs/operations.md "Tokens"): a token rotated on the
// service and on the relay, each by rewriting its file, keeps the pool listed with no restart.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { listPools, postJson } from '../support/http.js';
import { captureCliIo } from '../support/logs.js';
import { registration } from '../support/registration.js';
import { startService, type TestService } from '../support/service.js';
import { eventually, throughout, waitFor } from '../support/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'poolscope-relay-token-'));
function file(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('poolscope relay follows its --token-file', () => {
  let svc: TestService | undefined;
  afterEach(async () => {
    await svc?.stop();
    svc = undefined;
  });

  it('a token rotated on both sides keeps the pool listed, with no restart of the relay', async () => {
    const serverTokens = file('rotate-server', 'old-token\n');
    const relayToken = file('rotate-relay', 'old-token\n');
    svc = await startService({ authTokenFile: serverTokens, leaseMs: 1500 });
    const relay = captureCliIo();
    const running = main(['relay', '--servers', svc.url, '--token-file', relayToken, '--cluster-id=c1', '--namespace=llm', '--name=rotated', '--model=m'], relay.io);
    try {
      const isListed = async () => (await listPools(svc!.url)).pools.some((pool) => pool.name === 'rotated');
      await waitFor(isListed, { message: 'the relay registered' });
      // The rotation: the server takes both, the relay moves to the new one, the server drops the old one.
      writeFileSync(serverTokens, 'old-token\nnew-token\n');
      await eventually(async () => expect((await postJson(svc!.url, registration(), { authorization: 'Bearer new-token' })).status).toBe(200));
      writeFileSync(relayToken, 'new-token\n');
      await waitFor(() => relay.lines().some((line) => line.msg === 'token file reloaded' && line.flag === 'token-file'), { message: "the relay's reload" });
      writeFileSync(serverTokens, 'new-token\n');
      await eventually(async () => expect((await postJson(svc!.url, registration(), { authorization: 'Bearer old-token' })).status).toBe(401));
      // Two leases: a relay still sending the old token would be refused and its pool would lapse.
      await throughout(3000, 100, async () => expect(await isListed()).toBe(true));
      expect(relay.lines().filter((line) => line.msg === 'heartbeat refused; trying the next replica')).toEqual([]);
      expect(relay.out()).not.toMatch(/old-token|new-token/);
    } finally {
      relay.stop();
      expect(await running).toBe(0);
    }
  });
});
