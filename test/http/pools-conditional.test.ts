// GET /pools as a polling router reads it (docs/contract.md §5): a strong ETag, 304 without a body while
// If-None-Match holds it, a new tag (and 200) after a change; gzip and br negotiated from Accept-Encoding,
// the same bytes as identity once decoded, compressed once per revision however many ask.
import { promisify } from 'node:util';
import { brotliDecompress, gunzip } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { poolListSchema } from '../../src/contract/index.js';
import { postJson, request } from '../support/http.js';
import { registration } from '../support/registration.js';
import { startService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

const get = (svc: TestService, headers: Record<string, string> = {}, query = '') => request(svc.app, `/pools${query}`, { headers });
const bytesOf = async (response: Response) => Buffer.from(await response.arrayBuffer());

describe('GET /pools: entity tags and compression', () => {
  let svc: TestService;
  beforeAll(async () => {
    // A long lease: nothing lapses while a test reads, and the warm-up ends only when the test waits for it.
    svc = await startService({ leaseMs: 60_000, socket: false });
    for (const name of ['a', 'b', 'c']) expect((await postJson(svc.app, registration({ name, model: `model-${name}` }))).status).toBe(200);
    await waitFor(async () => poolListSchema.parse(await (await get(svc)).json()).pools.length === 3, { message: 'three pools listed' });
  });
  afterAll(() => svc.stop());

  it('answers 304 with the tag and no body while If-None-Match holds it, and 200 with a new tag after a change', async () => {
    const first = await get(svc);
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[^"]+"$/); // strong
    expect(first.headers.get('vary')).toBe('Accept-Encoding');
    expect(first.headers.get('cache-control')).toBe('no-cache');
    expect(first.headers.get('content-encoding')).toBeNull();
    const body = await bytesOf(first);

    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const again = await get(svc, { 'if-none-match': header });
      expect(again.status, header).toBe(304);
      expect(again.headers.get('etag')).toBe(etag);
      expect(again.headers.get('vary')).toBe('Accept-Encoding');
      expect((await bytesOf(again)).byteLength).toBe(0);
    }
    const other = await get(svc, { 'if-none-match': '"other"' });
    expect(other.status).toBe(200);
    expect((await bytesOf(other)).equals(body)).toBe(true);

    expect((await postJson(svc.app, registration({ name: 'd', model: 'model-d' }))).status).toBe(200);
    const changed = await waitFor(async () => {
      const reply = await get(svc, { 'if-none-match': etag });
      return reply.status === 200 && reply;
    }, { message: 'a 200 after the change' });
    const list = poolListSchema.parse(await changed.json());
    expect(list.pools.map((p) => p.name)).toContain('d');
    expect(changed.headers.get('etag')).not.toBe(etag);
    expect(changed.headers.get('etag')).toContain(list.revision);
    expect((await get(svc, { 'if-none-match': changed.headers.get('etag')! })).status).toBe(304);
  });

  it('gives a filter its own tag', async () => {
    const all = await get(svc);
    const some = await get(svc, {}, '?model=model-a');
    const other = await get(svc, {}, '?model=model-b');
    const tags = [all, some, other].map((r) => r.headers.get('etag'));
    expect(new Set(tags).size).toBe(3);
    expect(poolListSchema.parse(await some.json()).pools.map((p) => p.name)).toEqual(['a']);
    expect((await get(svc, { 'if-none-match': tags[1]! }, '?model=model-a')).status).toBe(304);
    expect((await get(svc, { 'if-none-match': tags[1]! })).status).toBe(200);
    expect((await get(svc, { 'if-none-match': tags[0]! }, '?model=model-a')).status).toBe(200);
  });

  it('sends gzip and br that decode to the identity bytes, each with its own tag; q=0 refuses a coding', async () => {
    const identity = await get(svc);
    const plain = await bytesOf(identity);
    const tag = identity.headers.get('etag')!;
    const decoders = { gzip: promisify(gunzip), br: promisify(brotliDecompress) };
    for (const coding of ['gzip', 'br'] as const) {
      const reply = await get(svc, { 'accept-encoding': coding });
      expect(reply.status).toBe(200);
      expect(reply.headers.get('content-encoding')).toBe(coding);
      expect(reply.headers.get('vary')).toBe('Accept-Encoding');
      expect(reply.headers.get('content-type')).toBe('application/json');
      const coded = reply.headers.get('etag')!;
      expect(coded).toBe(`${tag.slice(0, -1)}+${coding}"`);
      const decoded = await decoders[coding](await bytesOf(reply));
      expect(decoded.equals(plain)).toBe(true);
      // Each coding's tag holds for that coding only.
      expect((await get(svc, { 'accept-encoding': coding, 'if-none-match': coded })).status).toBe(304);
      expect((await get(svc, { 'accept-encoding': coding, 'if-none-match': tag })).status).toBe(200);
    }
    expect((await get(svc, { 'accept-encoding': 'gzip, br' })).headers.get('content-encoding')).toBe('br');
    expect((await get(svc, { 'accept-encoding': 'br;q=0, gzip' })).headers.get('content-encoding')).toBe('gzip');
    const refused = await get(svc, { 'accept-encoding': 'gzip;q=0, br;q=0' });
    expect(refused.headers.get('content-encoding')).toBeNull();
    expect((await bytesOf(refused)).equals(plain)).toBe(true);
  });

  it('compresses once per revision and coding, however many requests ask at once', async () => {
    const view = svc.join.view;
    // A new revision, whose bodies nobody has asked for yet.
    const revision = view.revision;
    expect((await postJson(svc.app, registration({ name: 'e', model: 'model-e' }))).status).toBe(200);
    await waitFor(() => view.revision !== revision, { message: 'a new revision' });
    const before = view.compressions;
    const replies = await Promise.all(Array.from({ length: 10 }, () => get(svc, { 'accept-encoding': 'gzip' })));
    const bodies = await Promise.all(replies.map(bytesOf));
    expect(new Set(replies.map((r) => r.headers.get('etag'))).size).toBe(1);
    for (const body of bodies) expect(body.equals(bodies[0]!)).toBe(true);
    expect(view.compressions - before).toBe(1);
    await get(svc, { 'accept-encoding': 'gzip' });
    await get(svc, { 'accept-encoding': 'gzip' }, '?model=model-e');
    await get(svc, { 'accept-encoding': 'br' });
    expect(view.compressions - before).toBe(3);
    // A 304 compresses nothing.
    const tag = replies[0]!.headers.get('etag')!;
    expect((await get(svc, { 'accept-encoding': 'gzip', 'if-none-match': tag })).status).toBe(304);
    expect(view.compressions - before).toBe(3);
  });

  it('answers HEAD with the headers of GET, and 304 to a conditional HEAD', async () => {
    const head = await request(svc.app, '/pools', { method: 'HEAD', headers: { 'accept-encoding': 'gzip' } });
    expect(head.status).toBe(200);
    const etag = head.headers.get('etag')!;
    expect(etag).toMatch(/\+gzip"$/);
    const conditional = await request(svc.app, '/pools', { method: 'HEAD', headers: { 'accept-encoding': 'gzip', 'if-none-match': etag } });
    expect(conditional.status).toBe(304);
  });

  it('is described so in /openapi.json: the request headers, the 304 and the ETag', async () => {
    const doc = (await (await request(svc.app, '/openapi.json')).json()) as any;
    const list = doc.paths['/pools'].get;
    expect(list.parameters.map((p: { name: string }) => p.name)).toEqual(['model', 'If-None-Match', 'Accept-Encoding']);
    // Its own statuses, then those of every route read with a token (docs/contract.md §11).
    expect(Object.keys(list.responses)).toEqual(['200', '304', '400', '401', '408', '414', '417', '431', '500']);
    expect(Object.keys(list.responses['200'].headers).sort()).toEqual(['Cache-Control', 'Content-Encoding', 'ETag', 'Vary']);
    expect(list.responses['200'].headers['Content-Encoding'].required).not.toBe(true);
    expect(list.responses['304'].headers.ETag.required).toBe(true);
    expect(doc.paths['/pools/watch'].get.parameters.map((p: { name: string }) => p.name)).toEqual(['Last-Event-ID', 'Accept']);
  });
});
