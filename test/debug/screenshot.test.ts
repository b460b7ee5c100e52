// /debug with pools in every state of the chart (MCS mode, the Kubernetes side fed by hand), one lapsed
// pool selected, and a router of each source: checks the groups and counts, and saves the screenshot
// README shows. `npm run debug:screenshot` writes it to docs/debug.png; a plain test run writes
// test-artifacts/debug-states.png.
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PoolEndpoints } from '../../src/kube/types.js';
import { postJson } from '../support/http.js';
import { postRouter } from '../routers/support.js';
import { REPO_ROOT } from '../support/process.js';
import { registration } from '../support/registration.js';
import { startService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';
import { launchChromium, openRecordedPage } from './support/chromium.js';
import { FedSlices } from './support/fed-slices.js';

const LEASE_MS = 1500;
const OUTPUT = process.env.POOLSCOPE_SCREENSHOT_TO
  ? resolve(REPO_ROOT, process.env.POOLSCOPE_SCREENSHOT_TO)
  : join(REPO_ROOT, 'test-artifacts', 'debug-states.png');

const relay = (ip: string): PoolEndpoints => ({ relays: [`${ip}:9000`], frontends: [], frontendSlicesWithPort: false });
const served = (ip: string, frontend: string): PoolEndpoints => ({
  relays: [`${ip}:9000`],
  frontends: [`http://${frontend}:8000`],
  frontendSlicesWithPort: true,
});

const id = (key: string) => {
  const [cluster_id, namespace, name] = key.split('/');
  return { cluster_id, namespace, name };
};

describe('GET /debug with pools in every state', () => {
  let browser: Browser;
  let svc: TestService;
  const slices = new FedSlices();
  let heartbeats: NodeJS.Timeout | undefined;

  beforeAll(async () => {
    browser = await launchChromium();
    svc = await startService({ leaseMs: LEASE_MS, poolDiscovery: 'mcs', slices, staticRouters: [{ id: 'gr-fallback', url: 'http://10.9.0.5:9100' }] });
  });
  afterAll(async () => {
    if (heartbeats) clearInterval(heartbeats);
    await browser?.close();
    await svc?.stop();
  });

  it('groups them by state, and draws the selected one', async () => {
    const beat = (key: string, model: string) => postJson(svc.url, registration({ ...id(key), model }));
    const kept: [string, string][] = [
      ['us-east-1/llm/llama-70b', 'meta-llama/Llama-3.1-70B-Instruct'],
      ['eu-west-1/llm/llama-70b', 'meta-llama/Llama-3.1-70B-Instruct'],
      ['us-west-2/llm/mixtral-8x7b', 'mistralai/Mixtral-8x7B-Instruct-v0.1'],
      ['ap-south-1/llm/qwen-72b', 'Qwen/Qwen2.5-72B-Instruct'],
    ];
    slices.resync(
      new Map([
        ['us-east-1/llm/llama-70b', served('10.1.0.9', '10.1.0.7')],
        ['eu-west-1/llm/llama-70b', served('10.2.0.9', '10.2.0.7')],
        ['us-west-2/llm/mixtral-8x7b', relay('10.3.0.9')],
        ['us-east-1/llm/gemma-27b', relay('10.4.0.9')],
        ['eu-central-1/llm/phi-4', relay('10.5.0.9')],
      ]),
    );
    const router = { id: 'gr-us-east-1-0', url: 'http://10.1.0.5:9100', region: 'us-east-1', zone: 'us-east-1a' };
    for (const [key, model] of kept) expect((await beat(key, model)).status).toBe(200);
    expect((await postRouter(svc.url, router)).status).toBe(200);
    slices.routers([{ id: 'global-router-7d9f-0', url: 'http://10.1.0.6:9100' }]);
    heartbeats = setInterval(() => {
      kept.forEach(([key, model]) => void beat(key, model));
      void postRouter(svc.url, router);
    }, LEASE_MS / 5);
    // phi-4: registered while MCS shows only its relay, then its frontend comes, then its heartbeats stop.
    expect((await beat('eu-central-1/llm/phi-4', 'microsoft/phi-4')).status).toBe(200);
    slices.update('eu-central-1/llm/phi-4', served('10.5.0.9', '10.5.0.7'));

    const { page } = await openRecordedPage(browser, { width: 1400, height: 1000 });
    try {
      await page.goto(`${svc.url}/debug#pool=${encodeURIComponent('eu-central-1/llm/phi-4')}`);
      const counts = async () =>
        Object.fromEntries(
          await page.$$eval('[data-group]', (groups) =>
            groups.map((g) => [(g as HTMLElement).dataset.group!, Number(g.querySelector('[data-count]')?.getAttribute('data-count'))]),
          ),
        );
      await waitFor(
        async () => {
          const c = await counts();
          return c.live === 2 && c.frontendless === 1 && c['one-sided'] === 1 && c.unregistered === 1 && c.lapsed === 1 && c;
        },
        { timeoutMs: LEASE_MS + 5000, message: 'pools in every state' },
      );
      await page.waitForSelector('svg.machine g.state.current[data-state="lapsed"]');
      await page.waitForSelector('#banner', { state: 'hidden', timeout: LEASE_MS + 3000 });
      const timeline = await page.$$eval('.timeline tbody tr', (rows) => rows.map((r) => `${(r as HTMLElement).dataset.from}→${(r as HTMLElement).dataset.to}`));
      expect(timeline).toEqual(['live→lapsed', 'frontendless→live', 'unregistered→frontendless', 'absent→unregistered']);
      await page.waitForSelector('#routers tr[data-router="gr-us-east-1-0"][data-region="us-east-1"][data-source="registration"]');
      await page.waitForSelector('#routers tr[data-router="gr-fallback"][data-region=""][data-source="static"]');
      await page.waitForSelector('#routers tr[data-router="global-router-7d9f-0"][data-region=""][data-source="mcs"]');

      mkdirSync(dirname(OUTPUT), { recursive: true });
      await page.screenshot({ path: OUTPUT, fullPage: true });
    } finally {
      await page.close();
    }
  });
});
