// /debug in headless Chromium: the page draws the chart from the machine definition, shows a pool
// appear in `live` without a reload, follows it to `lapsed` when its heartbeats stop (drawing, list and
// timeline), and makes no request to any origin but the service's own.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { poolMachine } from '../../machines/pool.machine.js';
import { postJson } from '../support/http.js';
import { REPO_ROOT } from '../support/process.js';
import { registration } from '../support/registration.js';
import { startService, type TestService } from '../support/service.js';
import { chartFromConfig, transitionString } from './support/chart-config.js';
import { launchChromium, openRecordedPage, type RecordedPage } from './support/chromium.js';

const LEASE_MS = 1500;
const ARTIFACTS = join(REPO_ROOT, 'test-artifacts');
const KEY = 'us-east-1/llm/llama-70b';

describe('GET /debug in a browser', () => {
  let browser: Browser;
  let svc: TestService;
  let heartbeats: NodeJS.Timeout | undefined;

  beforeAll(async () => {
    browser = await launchChromium();
    svc = await startService({ leaseMs: LEASE_MS, keepAliveMs: 1000 });
  });
  afterAll(async () => {
    if (heartbeats) clearInterval(heartbeats);
    await browser?.close();
    await svc?.stop();
  });

  const open = async (): Promise<RecordedPage> => {
    const recorded = await openRecordedPage(browser);
    const response = await recorded.page.goto(`${svc.url}/debug`);
    expect(response?.status()).toBe(200);
    await recorded.page.waitForSelector('svg.machine g.state');
    return recorded;
  };

  it('draws exactly the states and transitions of the machine definition', async () => {
    const { page, errors } = await open();
    try {
      const drawn = await page.$$eval('svg.machine [data-transition-id]', (elements) =>
        elements.map((e) => {
          const d = (e as SVGElement).dataset;
          return { source: d.source!, target: d.target!, kind: d.kind!, event: d.event!, guard: d.guard!, delay: d.delay! };
        }),
      );
      const key = (id: string) => (id === poolMachine.id ? '' : id.slice(id.lastIndexOf('.') + 1));
      const drawnTransitions = drawn.map((t) =>
        transitionString(key(t.source), t.target ? key(t.target) : '', t.kind === 'always' ? 'always' : t.kind === 'after' ? `after:${t.delay}` : t.event, t.guard),
      );
      const drawnStates = await page.$$eval('svg.machine g.state', (nodes) => nodes.map((n) => (n as SVGGElement).dataset.state!));
      const expected = chartFromConfig(poolMachine);

      expect(new Set(drawnStates)).toEqual(expected.states);
      expect(drawnStates).toHaveLength(expected.states.size);
      expect(new Set(drawnTransitions)).toEqual(expected.transitions);
      expect(drawnTransitions).toHaveLength(expected.transitions.size);
      // Targeted transitions are arrows (a path each), targetless ones are listed as text.
      const arrows = await page.$$eval('svg.machine g.transition path', (paths) => paths.length);
      expect(arrows).toBe(expected.targeted);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('follows a pool from live to lapsed without a reload, and requests nothing off-origin', async () => {
    const recorded = await open();
    const { page } = recorded;
    try {
      const beat = () => postJson(svc.url, registration()).then((r) => expect(r.status).toBe(200));
      await beat();
      heartbeats = setInterval(() => void beat(), LEASE_MS / 5);

      const inGroup = (state: string) => `[data-group="${state}"] li[data-pool="${KEY}"]`;
      await page.waitForSelector(inGroup('live'), { timeout: 5000 });
      await page.click(`${inGroup('live')} button`);
      await page.waitForSelector('svg.machine g.state.current[data-state="live"]', { timeout: 5000 });
      const debugState = async () =>
        ((await (await fetch(`${svc.url}/debug/pools/${encodeURIComponent(KEY)}`)).json()) as { state: string }).state;
      expect(await debugState()).toBe('live');
      expect(await page.textContent('[data-fact="frontends"]')).toContain('http://10.0.0.7:8000');
      // The last transition (absent → live) is marked on the drawing.
      expect(await page.getAttribute('svg.machine g.transition.last', 'data-target')).toBe('pool.live');
      // The lease countdown runs while heartbeats come.
      await page.waitForFunction(() => /^in \d/.test(document.querySelector('.countdown')?.textContent ?? ''));

      clearInterval(heartbeats);
      heartbeats = undefined;
      await page.waitForSelector(inGroup('lapsed'), { timeout: LEASE_MS + 5000 });
      await page.waitForSelector('svg.machine g.state.current[data-state="lapsed"]', { timeout: 5000 });
      const highlighted = await page.$$eval('svg.machine g.state.current', (nodes) => nodes.map((n) => (n as SVGGElement).dataset.state));
      expect(highlighted).toEqual([await debugState()]);
      expect(highlighted).toEqual(['lapsed']);
      const lastEdge = await page.$eval('svg.machine g.transition.last', (e) => ({ ...(e as SVGGElement).dataset }));
      expect(lastEdge).toMatchObject({ source: 'pool.live', target: 'pool.lapsed', guard: 'isLapsed' });
      const newest = await page.$eval('.timeline tbody tr', (row) => ({ ...(row as HTMLElement).dataset, text: row.textContent }));
      expect(newest).toMatchObject({ from: 'live', to: 'lapsed', event: 'LEASE_LAPSED' });
      expect(newest.text).toContain('no heartbeat within the lease');
      expect(await page.$(inGroup('live'))).toBeNull();

      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'debug-page.png'), fullPage: true });

      expect(recorded.loads()).toBe(1);
      const origin = new URL(svc.url).origin;
      expect(recorded.requests.length).toBeGreaterThanOrEqual(4); // page, script, style, machine, stream
      expect(recorded.requests.filter((url) => !url.startsWith('data:') && new URL(url).origin !== origin)).toEqual([]);
      expect(recorded.errors).toEqual([]);
    } finally {
      await page.close();
    }
  });
});

describe('GET /debug while the view is incomplete', () => {
  let browser: Browser;
  let svc: TestService;
  beforeAll(async () => {
    browser = await launchChromium();
    // The memory store is incomplete for one lease after start: long enough to load the page in, even
    // on a loaded machine (a 4 s lease was not, once).
    svc = await startService({ leaseMs: 12_000 });
  });
  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
  });

  it('shows a banner naming why, and hides it once complete', async () => {
    const { page } = await openRecordedPage(browser);
    try {
      await page.goto(`${svc.url}/debug`);
      await page.waitForSelector('#banner:not([hidden])', { timeout: 3000 });
      expect(await page.textContent('#banner')).toContain('memory store: leases renewed before this replica started may be missing');
      await page.waitForSelector('#banner', { state: 'hidden', timeout: 20_000 });
      expect(await page.getAttribute('body', 'data-complete')).toBe('true');
    } finally {
      await page.close();
    }
  });
});
