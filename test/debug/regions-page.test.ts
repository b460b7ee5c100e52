// /debug with regions in headless Chromium (docs/contract.md §7): the regions strip shows every region
// (home marked) and follows one that is cut off from reading to unreachable (held) to dropped; the fleet
// overview counts pools by region and state, and by model, and moves with them; the selected pool shows
// its leases by region and which one's registration is shown. All without a reload, and nothing is
// requested from another origin. Without regions the strip is hidden and the overview has one row.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Registration } from '../../src/contract/index.js';
import type { PoolEndpoints } from '../../src/kube/types.js';
import { createMemoryStore } from '../../src/store/memory.js';
import { DelegatingStore } from '../support/delegating-store.js';
import { postJson } from '../support/http.js';
import { REPO_ROOT } from '../support/process.js';
import { registration } from '../support/registration.js';
import { startService, type TestService } from '../support/service.js';
import { repeatEvery, waitFor } from '../support/wait.js';
import { launchChromium, openRecordedPage } from './support/chromium.js';
import { FedSlices } from './support/fed-slices.js';

const LEASE_MS = 1500;
const HOLD_MS = 2500;
const ARTIFACTS = join(REPO_ROOT, 'test-artifacts');

const LLAMA = 'meta-llama/Llama-3.1-70B-Instruct';
const MIXTRAL = 'mistralai/Mixtral-8x7B-Instruct-v0.1';
const QWEN = 'Qwen/Qwen2.5-72B-Instruct';
const GEMMA = 'google/gemma-2-27b-it';

const pool = (key: string, model: string, overrides: Partial<Registration> = {}): Registration => {
  const [cluster_id, namespace, name] = key.split('/');
  return registration({ cluster_id, namespace, name, model, ...overrides });
};
const served = (ip: string): PoolEndpoints => ({ relays: [`${ip}:9000`], frontends: [`http://${ip.replace(/\d+$/, '7')}:8000`], frontendSlicesWithPort: true });
const relayOnly = (ip: string): PoolEndpoints => ({ relays: [`${ip}:9000`], frontends: [], frontendSlicesWithPort: false });

/** What a row of an overview table counts, by state (with `total`). */
async function rowCounts(page: Page, table: 'region' | 'model', selector: string): Promise<Record<string, number>> {
  return page.$eval(`table[data-overview="${table}"] tbody tr${selector}`, (row) =>
    Object.fromEntries(
      [...row.querySelectorAll('td[data-state], td[data-total]')].map((cell) => {
        const d = (cell as HTMLElement).dataset;
        return [d.state ?? 'total', Number(d.count ?? d.total)];
      }),
    ),
  );
}

const counts = (c: Partial<Record<'live' | 'frontendless' | 'one-sided' | 'unregistered' | 'lapsed', number>>) => {
  const all = { live: 0, frontendless: 0, 'one-sided': 0, unregistered: 0, lapsed: 0, ...c };
  return { ...all, total: Object.values(all).reduce((a, b) => a + b, 0) };
};

describe('GET /debug with regions, in a browser', () => {
  let browser: Browser;
  let svc: TestService;
  let beats: { stop(): Promise<void> } | undefined;
  const slices = new FedSlices();
  const euWest = new DelegatingStore(createMemoryStore({ leaseMs: LEASE_MS }), { forgetsOnRestart: false });
  const apSouth = new DelegatingStore(createMemoryStore({ leaseMs: LEASE_MS }), { forgetsOnRestart: false });

  // us-east-1/llm/llama-70b failed over to eu-west-1 with a new relay: both leases live, eu-west-1's shown.
  const failedOver = pool('us-east-1/llm/llama-70b', LLAMA);
  const failedOverEu = { ...failedOver, relay: 'http://10.1.0.19:9000' };
  const byRegion: [string, Registration][] = [
    ['home', failedOver],
    ['home', pool('us-west-2/llm/mixtral-8x7b', MIXTRAL)], // MCS: relay only → frontendless
    ['eu-west-1', failedOverEu],
    ['eu-west-1', pool('eu-west-1/llm/llama-70b', LLAMA)],
    ['eu-west-1', pool('eu-west-1/llm/gemma-27b', GEMMA)], // MCS shows nothing → one-sided
    ['ap-south-1', pool('ap-south-1/llm/qwen-72b', QWEN)], // lapsed once ap-south-1 is dropped
  ];

  beforeAll(async () => {
    browser = await launchChromium();
    svc = await startService({
      leaseMs: LEASE_MS,
      poolDiscovery: 'mcs',
      slices,
      store: createMemoryStore({ leaseMs: LEASE_MS }),
      join: {
        regions: {
          home: 'us-east-1',
          followed: [
            { name: 'eu-west-1', store: euWest },
            { name: 'ap-south-1', store: apSouth },
          ],
          holdMs: HOLD_MS,
        },
        storeBackoff: { initialMs: 50, maxMs: 200 },
      },
    });
    slices.resync(
      new Map([
        ['us-east-1/llm/llama-70b', served('10.1.0.9')],
        ['us-west-2/llm/mixtral-8x7b', relayOnly('10.3.0.9')],
        ['eu-west-1/llm/llama-70b', served('10.2.0.9')],
        ['ap-south-1/llm/qwen-72b', served('10.4.0.9')],
        ['us-east-1/llm/phi-4', relayOnly('10.5.0.9')], // never registered → unregistered
      ]),
    );
    const beat = async ([region, registration]: [string, Registration]) => {
      if (region === 'home') expect((await postJson(svc.url, registration)).status).toBe(200);
      else await (region === 'eu-west-1' ? euWest : apSouth).inner.heartbeat(registration);
    };
    for (const entry of byRegion) await beat(entry);
    beats = repeatEvery(LEASE_MS / 5, () => Promise.all(byRegion.map(beat)));
  });
  afterAll(async () => {
    await beats?.stop();
    await browser?.close();
    await svc?.stop();
  });

  it('shows every region and the fleet by region and model, and follows a region cut off until dropped', async () => {
    const recorded = await openRecordedPage(browser, { width: 1400, height: 1100 });
    const { page } = recorded;
    try {
      await page.goto(`${svc.url}/debug#pool=${encodeURIComponent('us-east-1/llm/llama-70b')}`);
      const chip = (name: string) => `#regions .region[data-region="${name}"]`;
      // The strip: every region, sorted, the home one marked, all read.
      await page.waitForSelector(`${chip('ap-south-1')}[data-status="reading"]`, { timeout: 5000 });
      await page.waitForSelector(`${chip('eu-west-1')}[data-status="reading"]`, { timeout: 5000 });
      expect(await page.isVisible('#regions')).toBe(true);
      expect(await page.$$eval('#regions .region', (chips) => chips.map((c) => `${(c as HTMLElement).dataset.region}:${(c as HTMLElement).dataset.home}`))).toEqual([
        'ap-south-1:false',
        'eu-west-1:false',
        'us-east-1:true',
      ]);
      expect(await page.textContent(`${chip('us-east-1')} .home-mark`)).toBe('home');

      // The overview: a pool once per region holding its lease; pools holding none in "no lease".
      const regionRow = (name: string) => rowCounts(page, 'region', `[data-region="${name}"]`);
      await waitFor(async () => (await regionRow('eu-west-1'))['one-sided'] === 1 && (await rowCounts(page, 'region', '[data-no-lease]')).unregistered === 1, {
        timeoutMs: LEASE_MS + 5000,
        message: 'overview of every pool',
      });
      expect(await regionRow('us-east-1')).toEqual(counts({ live: 1, frontendless: 1 }));
      expect(await regionRow('eu-west-1')).toEqual(counts({ live: 2, 'one-sided': 1 }));
      expect(await regionRow('ap-south-1')).toEqual(counts({ live: 1 }));
      expect(await rowCounts(page, 'region', '[data-no-lease]')).toEqual(counts({ unregistered: 1 }));
      const modelRows = await page.$$eval('table[data-overview="model"] tbody tr', (rows) =>
        rows.map((r) => `${(r as HTMLElement).dataset.model}@${(r as HTMLElement).dataset.region ?? 'no lease'}`),
      );
      // Models by name (code units: upper case first), then pools with no registration; regions by name.
      expect(modelRows).toEqual([
        `${QWEN}@ap-south-1`,
        `${GEMMA}@eu-west-1`,
        `${LLAMA}@eu-west-1`,
        `${LLAMA}@us-east-1`,
        `${MIXTRAL}@us-east-1`,
        '@no lease',
      ]);
      expect(await rowCounts(page, 'model', `[data-model="${LLAMA}"][data-region="eu-west-1"]`)).toEqual(counts({ live: 2 }));

      // The selected pool's leases: both regions, the one shown marked; the list names its regions.
      await page.waitForSelector('[data-fact="leases"] tr[data-lease-region="us-east-1"]', { timeout: 5000 });
      const leases = await page.$$eval('[data-fact="leases"] tbody tr', (rows) =>
        rows.map((r) => `${(r as HTMLElement).dataset.leaseRegion}:${(r as HTMLElement).dataset.shown}`),
      );
      expect(leases).toEqual(['eu-west-1:true', 'us-east-1:false']);
      expect(await page.getAttribute('[data-shown-from]', 'data-shown-from')).toBe('eu-west-1');
      expect(await page.textContent('[data-fact="relays"]')).toContain('10.1.0.9');
      expect(await page.textContent('li[data-pool="us-east-1/llm/llama-70b"] .meta')).toContain('eu-west-1 + us-east-1');

      // ap-south-1 is cut off: unreachable since T, its pools held and still counted …
      apSouth.setCut(true);
      await page.waitForSelector(`${chip('ap-south-1')}[data-status="unreachable"]`, { timeout: 5000 });
      expect(await page.textContent(`${chip('ap-south-1')} .status-text`)).toMatch(/unreachable since \d\d:\d\d:\d\d\.\d{3} \(\d+\.\d s\) · pools held/);
      expect(await regionRow('ap-south-1')).toEqual(counts({ live: 1 }));
      // … until the hold runs out: dropped, and its pool (MCS still shows its relay) lapses.
      await page.waitForSelector(`${chip('ap-south-1')}[data-status="dropped"]`, { timeout: HOLD_MS + 3000 });
      await waitFor(async () => (await regionRow('ap-south-1')).total === 0, { message: 'ap-south-1 emptied' });
      expect(await rowCounts(page, 'region', '[data-no-lease]')).toEqual(counts({ unregistered: 1, lapsed: 1 }));
      expect(await rowCounts(page, 'model', `[data-model="${QWEN}"][data-no-lease]`)).toEqual(counts({ lapsed: 1 }));
      expect(await page.textContent('table[data-overview="region"] tr[data-region="ap-south-1"] th')).toContain('dropped');
      await page.waitForSelector('[data-group="lapsed"] li[data-pool="ap-south-1/llm/qwen-72b"]');
      await page.waitForSelector('#banner:not([hidden])');
      expect(await page.textContent('#banner')).toContain('region ap-south-1');

      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'debug-regions.png'), fullPage: true });

      expect(recorded.loads()).toBe(1);
      const origin = new URL(svc.url).origin;
      expect(recorded.requests.filter((url) => !url.startsWith('data:') && new URL(url).origin !== origin)).toEqual([]);
      expect(recorded.errors).toEqual([]);
    } finally {
      await page.close();
    }
  });
});

describe('GET /debug without regions, in a browser', () => {
  let browser: Browser;
  let svc: TestService;
  beforeAll(async () => {
    browser = await launchChromium();
    svc = await startService({ leaseMs: 2000 });
  });
  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
  });

  it('hides the strip and counts every pool in one overview row, live', async () => {
    const recorded = await openRecordedPage(browser);
    const { page } = recorded;
    try {
      await page.goto(`${svc.url}/debug`);
      await page.waitForSelector('table[data-overview="region"]');
      expect(await page.isHidden('#regions')).toBe(true);
      expect(await page.getAttribute('body', 'data-regions')).toBe('none');
      expect(await page.$$eval('table[data-overview="region"] tbody tr', (rows) => rows.length)).toBe(1);
      expect(await rowCounts(page, 'region', '[data-region=""]')).toEqual(counts({}));
      expect((await postJson(svc.url, registration())).status).toBe(200);
      await waitFor(async () => (await rowCounts(page, 'region', '[data-region=""]')).live === 1, { message: 'the pool counted' });
      expect(await page.$$eval('table[data-overview="region"] tbody tr', (rows) => rows.length)).toBe(1);
      expect(await page.textContent('table[data-overview="region"] tbody th')).toBe('all pools');
      expect(await rowCounts(page, 'model', `[data-model="${LLAMA}"]`)).toEqual(counts({ live: 1 }));
      expect(await page.$('table[data-overview="model"] td.region-name')).toBeNull();
      expect(recorded.errors).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
