// The /debug page's files as debugPageRoutes serves them (src/http/debug.ts), from a bundle the test
// builds in memory: the headers of the page and of an asset, a file the bundle lacks, and a replica whose
// page was never built. test/debug/routes.test.ts serves the real build (dist/debug-page) through the app.
import { describe, expect, it } from 'vitest';
import type { DebugFeed } from '../../src/debug/feed.js';
import type { PageBundle } from '../../src/debug/page-bundle.js';
import { debugPageRoutes } from '../../src/http/debug.js';
import type { StreamGate } from '../../src/http/stream-gate.js';
import { errorBodySchema } from '../../src/contract/index.js';
import { withApiErrors } from '../support/api-errors.js';

const encoder = new TextEncoder();
const BUNDLE: PageBundle = {
  files: new Map([
    ['index.html', { body: encoder.encode('<!doctype html><title>poolscope</title>'), contentType: 'text/html; charset=utf-8' }],
    ['assets/page-1a2b.js', { body: encoder.encode('console.log(1)'), contentType: 'text/javascript; charset=utf-8' }],
  ]),
};

/** What the file routes read of the feed; its streams are not opened here. */
const FEED = { graph: { id: 'pool', states: [] }, detail: (key: string) => (key === 'c/n/p' ? { pool: key } : undefined) } as unknown as DebugFeed;

function page(bundle: PageBundle | undefined) {
  return withApiErrors(debugPageRoutes({ feed: FEED, bundle, streams: {} as StreamGate }));
}

const SAME_ORIGIN_ONLY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

describe('the /debug page files', () => {
  it('serves the page at /debug and /debug/, asked for again each time, same origin only, never sniffed', async () => {
    for (const path of ['/debug', '/debug/']) {
      const response = await page(BUNDLE).request(path);
      expect(response.status, path).toBe(200);
      expect(Object.fromEntries(response.headers)).toMatchObject({
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-cache',
        'content-security-policy': SAME_ORIGIN_ONLY,
        'x-content-type-options': 'nosniff',
      });
      expect(await response.text()).toBe('<!doctype html><title>poolscope</title>');
    }
  });

  it('serves an asset under its content-hashed name as immutable, with the same policy', async () => {
    const response = await page(BUNDLE).request('/debug/assets/page-1a2b.js');
    expect(response.status).toBe(200);
    expect(Object.fromEntries(response.headers)).toMatchObject({
      'content-type': 'text/javascript; charset=utf-8',
      'cache-control': 'public, max-age=31536000, immutable',
      'content-security-policy': SAME_ORIGIN_ONLY,
      'x-content-type-options': 'nosniff',
    });
    expect(await response.text()).toBe('console.log(1)');
  });

  it('answers a file the bundle lacks with 404 naming it', async () => {
    const response = await page(BUNDLE).request('/debug/assets/other.js');
    expect(response.status).toBe(404);
    expect(errorBodySchema.parse(await response.json()).error).toEqual({ code: 'not_found', message: 'no file assets/other.js in the /debug page' });
  });

  it('without a built page: 503 not_ready naming the build step, for the page and its assets', async () => {
    for (const path of ['/debug', '/debug/', '/debug/assets/page-1a2b.js']) {
      const response = await page(undefined).request(path);
      expect(response.status, path).toBe(503);
      expect(errorBodySchema.parse(await response.json()).error).toEqual({
        code: 'not_ready',
        message: 'the /debug page was not built: run `npm run build` (npm ci does it)',
      });
    }
  });

  it('serves the chart and one pool’s detail from the feed, and 404 for a pool it does not hold', async () => {
    const app = page(undefined);
    expect(await (await app.request('/debug/machine')).json()).toEqual({ id: 'pool', states: [] });
    expect(await (await app.request('/debug/pools/c%2Fn%2Fp')).json()).toEqual({ pool: 'c/n/p' });
    const missing = await app.request('/debug/pools/c%2Fn%2Fq');
    expect(missing.status).toBe(404);
    expect(errorBodySchema.parse(await missing.json()).error).toEqual({ code: 'not_found', message: 'no pool c/n/q on this replica' });
  });
});
