// /debug's Routers section in headless Chromium (docs/contract.md §10, docs/operations.md "The debug
// page"): static routers (--router) from the start, a router of the Global Router Service's slices (MCS,
// fed by hand) as it comes and goes, a router that registers with POST /routers shown under its region
// and source, grouped as GET /debug/routers groups them, and gone once its lease lapses; all without a
// reload, from the routers' watch stream, requesting nothing off-origin. Without routers the section
// says so, while the router list is incomplete it says why, and while --max-watchers refuses its
// routers stream it says they are not followed until a retry gets one.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DebugRouterList } from '../../src/contract/index.js';
import { REPO_ROOT } from '../support/process.js';
import { startService, type TestService } from '../support/service.js';
import { SseReader } from '../support/sse.js';
import { repeatEvery, waitFor } from '../support/wait.js';
import { postRouter } from '../routers/support.js';
import { launchChromium, openRecordedPage } from './support/chromium.js';
import { FedSlices } from './support/fed-slices.js';

const LEASE_MS = 1500;
const ARTIFACTS = join(REPO_ROOT, 'test-artifacts');

interface Row {
  region: string;
  source: string;
  id: string;
  url: string;
  text: string;
}

/** The Routers table's rows, in order, as the page shows them. */
function rows(page: Page): Promise<Row[]> {
  return page.$$eval('#routers tbody tr', (trs) =>
    trs.map((tr) => {
      const d = (tr as HTMLElement).dataset;
      return { region: d.region!, source: d.source!, id: d.router!, url: tr.querySelector('.router-url')?.textContent ?? '', text: tr.textContent ?? '' };
    }),
  );
}

/** GET /debug/routers flattened in its own order: what the page must show. */
async function served(url: string): Promise<Omit<Row, 'text'>[]> {
  const body = (await (await fetch(`${url}/debug/routers`)).json()) as DebugRouterList;
  return body.regions.flatMap(({ region, sources }) => sources.flatMap(({ source, routers }) => routers.map((r) => ({ region, source, id: r.id, url: r.url }))));
}

describe('GET /debug lists the routers, live', () => {
  let browser: Browser;
  let svc: TestService;
  let beats: { stop(): Promise<void> } | undefined;
  const slices = new FedSlices();

  beforeAll(async () => {
    browser = await launchChromium();
    svc = await startService({
      leaseMs: LEASE_MS,
      keepAliveMs: 1000,
      poolDiscovery: 'mcs',
      slices,
      staticRouters: [
        { id: 'gr-static-0', url: 'http://10.0.9.1:9100' },
        { id: 'gr-static-1', url: 'https://10.0.9.2:9100/relay' },
      ],
    });
  });
  afterAll(async () => {
    await beats?.stop();
    await browser?.close();
    await svc?.stop();
  });

  it('shows static routers, MCS ones as they come and go, a registered one under its region and source until its lease lapses', async () => {
    const recorded = await openRecordedPage(browser);
    const { page } = recorded;
    try {
      expect((await page.goto(`${svc.url}/debug`))?.status()).toBe(200);
      // Static routers: listed from the start, with no region.
      await page.waitForSelector('#routers tr[data-router="gr-static-1"][data-source="static"][data-region=""]', { timeout: 5000 });
      expect((await rows(page)).map(({ region, source, id, url }) => ({ region, source, id, url }))).toEqual([
        { region: '', source: 'static', id: 'gr-static-0', url: 'http://10.0.9.1:9100' },
        { region: '', source: 'static', id: 'gr-static-1', url: 'https://10.0.9.2:9100/relay' },
      ]);
      expect(await page.textContent('#routers tr[data-router="gr-static-0"] th')).toBe('no region');

      // The Global Router Service's slices list a router, then another, then lose the first.
      slices.resync(new Map());
      slices.routers([{ id: 'global-router-0', url: 'http://10.0.2.1:9100' }]);
      await page.waitForSelector('#routers tr[data-router="global-router-0"][data-source="mcs"][data-region=""]', { timeout: 5000 });
      slices.routers([
        { id: 'global-router-0', url: 'http://10.0.2.1:9100' },
        { id: 'global-router-1', url: 'https://10.0.2.2:9100' },
      ]);
      await page.waitForSelector('#routers tr[data-router="global-router-1"][data-source="mcs"]', { timeout: 5000 });
      slices.routers([{ id: 'global-router-1', url: 'https://10.0.2.2:9100' }]);
      await page.waitForSelector('#routers tr[data-router="global-router-0"]', { state: 'detached', timeout: 5000 });

      const east = { id: 'gr-east-0', url: 'http://10.0.1.5:9100', region: 'us-east-1', zone: 'us-east-1a' };
      const plain = { id: 'gr-plain', url: 'http://10.0.1.6:9100' };
      const beat = async () => {
        for (const router of [east, plain]) expect((await postRouter(svc.url, router)).status).toBe(200);
      };
      await beat();
      beats = repeatEvery(LEASE_MS / 5, beat);

      await page.waitForSelector('#routers tr[data-router="gr-east-0"][data-region="us-east-1"][data-source="registration"]', { timeout: 5000 });
      await page.waitForSelector('#routers tr[data-router="gr-plain"][data-region=""][data-source="registration"]', { timeout: 5000 });
      const shown = await rows(page);
      // Grouped exactly as GET /debug/routers groups them: by region ("" first), then by source.
      expect(shown.map(({ region, source, id, url }) => ({ region, source, id, url }))).toEqual(await served(svc.url));
      expect(shown.map((r) => `${r.region}|${r.source}|${r.id}`)).toEqual([
        '|mcs|global-router-1',
        '|registration|gr-plain',
        '|static|gr-static-0',
        '|static|gr-static-1',
        'us-east-1|registration|gr-east-0',
      ]);
      const eastRow = shown.find((r) => r.id === 'gr-east-0')!;
      expect(eastRow.url).toBe('http://10.0.1.5:9100');
      expect(eastRow.text).toContain('us-east-1');
      expect(eastRow.text).toContain('zone us-east-1a');
      expect(await page.getAttribute('#routers [data-router-count]', 'data-router-count')).toBe('5');
      // On a memory store the first lease after start is a warm-up (leases renewed before the replica started
      // may be missing), so the list turns complete when it ends: a new resync, and the page drops the note.
      await page.waitForSelector('#routers .routers-incomplete', { state: 'detached', timeout: LEASE_MS + 5000 });
      expect(await page.getAttribute('#routers', 'data-complete')).toBe('true');
      expect(await page.$('#routers .routers-incomplete')).toBeNull();
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'debug-routers.png'), fullPage: true });

      // Its heartbeats stop: gone from the page once the lease lapses; the static routers stay.
      await beats.stop();
      beats = undefined;
      await page.waitForSelector('#routers tr[data-router="gr-east-0"]', { state: 'detached', timeout: LEASE_MS + 5000 });
      await page.waitForSelector('#routers tr[data-router="gr-plain"]', { state: 'detached', timeout: LEASE_MS + 5000 });
      expect((await rows(page)).map((r) => r.id)).toEqual(['global-router-1', 'gr-static-0', 'gr-static-1']);
      expect((await served(svc.url)).map((r) => r.id)).toEqual(['global-router-1', 'gr-static-0', 'gr-static-1']);

      expect(recorded.loads()).toBe(1);
      const origin = new URL(svc.url).origin;
      expect(recorded.requests.some((url) => url === `${origin}/routers/watch`)).toBe(true);
      expect(recorded.requests.filter((url) => !url.startsWith('data:') && new URL(url).origin !== origin)).toEqual([]);
      expect(recorded.errors).toEqual([]);
    } finally {
      await page.close();
    }
  });
});

describe('GET /debug with no routers, and while the router list is incomplete', () => {
  let browser: Browser;
  let svc: TestService;
  beforeAll(async () => {
    browser = await launchChromium();
    // The memory store's router leases are incomplete for one lease after start (docs/contract.md §10):
    // long enough to load the page in (as in page.test.ts).
    svc = await startService({ leaseMs: 12_000 });
  });
  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
  });

  it('says no routers are listed, names why the list is incomplete, and drops that once complete', async () => {
    const { page, errors } = await openRecordedPage(browser);
    try {
      await page.goto(`${svc.url}/debug`);
      await page.waitForSelector('#routers .routers-incomplete li', { timeout: 5000 });
      const reasons = ((await (await fetch(`${svc.url}/debug/routers`)).json()) as DebugRouterList).reasons;
      expect(reasons.length).toBeGreaterThan(0);
      const shown = await page.$$eval('#routers .routers-incomplete li', (items) => items.map((li) => li.textContent));
      expect(shown).toEqual(reasons);
      expect(await page.textContent('#routers .routers-incomplete strong')).toBe('Incomplete list: routers may be missing.');
      expect(await page.textContent('#routers .routers-empty')).toBe('No routers listed.');
      expect(await page.getAttribute('#routers', 'data-complete')).toBe('false');

      await page.waitForSelector('#routers[data-complete="true"]', { timeout: 20_000 });
      expect(await page.$('#routers .routers-incomplete')).toBeNull();
      expect(await page.textContent('#routers .routers-empty')).toBe('No routers listed.');
      expect(await page.$('#routers table')).toBeNull();
      await waitFor(async () => (await page.getAttribute('#routers', 'data-connection')) === 'live', { timeoutMs: 5000, message: 'router stream live' });
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });
});

describe('GET /debug when --max-watchers router streams are open', () => {
  let browser: Browser;
  let svc: TestService;
  beforeAll(async () => {
    browser = await launchChromium();
    svc = await startService({ leaseMs: LEASE_MS, maxWatchers: 1, staticRouters: [{ id: 'gr-static-0', url: 'http://10.0.9.1:9100' }] });
  });
  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
  });

  it('says the routers are not followed while refused, and lists them once a stream is free', async () => {
    const holder = await SseReader.open(svc.url, '/routers/watch');
    const { page, errors } = await openRecordedPage(browser);
    try {
      await page.goto(`${svc.url}/debug`);
      await page.waitForSelector('#routers[data-connection="refused"]', { timeout: 5000 });
      expect(await page.textContent('#routers .router-stream')).toMatch(/^not followed: .+ \(retrying\)$/);
      // The page's own pool stream is counted apart (stream="debug"): the pools still come.
      await page.waitForSelector('#connection[data-connection="live"]', { timeout: 5000 });

      await holder.close();
      // EventSource retries after the stream's `retry:` (5 s).
      await page.waitForSelector('#routers tr[data-router="gr-static-0"][data-source="static"]', { timeout: 15_000 });
      expect(await page.getAttribute('#routers', 'data-connection')).toBe('live');
      expect(errors).toEqual([]);
    } finally {
      await holder.close();
      await page.close();
    }
  });
});
