// The pools routes (src/http/pools.ts, poolsRoutes) built per test: the size check of POST /pools at its
// very edge, declared and chunked, how a refusal there is counted, and the watch streams ended when the
// server drains (docs/contract.md §5, §8). Each test builds its own routes, so what it pins is traced to it.
import { describe, expect, it } from 'vitest';
import { errorBodySchema, MAX_BODY_BYTES } from '../../src/contract/index.js';
import { ListedView } from '../../src/join/listed-view.js';
import { poolsRoutes } from '../../src/http/pools.js';
import { createMemoryStore } from '../../src/store/memory.js';
import { withApiErrors } from '../support/api-errors.js';
import { registration } from '../support/registration.js';
import { SseReader } from '../support/sse.js';
import { waitFor } from '../support/wait.js';

function routes(shutdown?: AbortSignal, { counted = true } = {}) {
  const store = createMemoryStore({ leaseMs: 15_000 });
  const outcomes: string[] = [];
  const app = withApiErrors(
    poolsRoutes({
      view: new ListedView({ epoch: 1 }),
      store,
      leaseMs: 15_000,
      heartbeatIntervalMs: 5000,
      keepAliveMs: 60_000,
      onOutcome: counted ? (outcome) => outcomes.push(outcome) : undefined,
      shutdown,
    }),
  );
  return { app, store, outcomes };
}

/** A valid registration, padded with trailing white space (valid JSON) to exactly `bytes`. */
function bodyOf(bytes: number): string {
  const json = JSON.stringify(registration());
  return json + ' '.repeat(bytes - Buffer.byteLength(json));
}

/** `body` sent without a Content-Length, in chunks of 16 KiB. */
function chunked(body: string): RequestInit {
  const bytes = new TextEncoder().encode(body);
  let offset = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.byteLength) return controller.close();
      controller.enqueue(bytes.subarray(offset, offset + 16 * 1024));
      offset += 16 * 1024;
    },
  });
  return { method: 'POST', headers: { 'content-type': 'application/json' }, body: stream, duplex: 'half' } as RequestInit;
}

const declared = (body: string): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
  body,
});

describe('POST /pools at the size limit', () => {
  it.each([
    ['declared', declared],
    ['chunked', chunked],
  ])('%s: a body of exactly the limit is taken; one byte more is 413, counted invalid, nothing stored', async (_how, send) => {
    const exact = routes();
    const taken = await exact.app.request('/pools', send(bodyOf(MAX_BODY_BYTES)));
    expect(taken.status).toBe(200);
    expect(exact.outcomes).toEqual(['ok']);
    expect((await exact.store.snapshot()).records).toHaveLength(1);

    const over = routes();
    const refused = await over.app.request('/pools', send(bodyOf(MAX_BODY_BYTES + 1)));
    expect(refused.status).toBe(413);
    const { error } = errorBodySchema.parse(await refused.json());
    expect(error.code).toBe('payload_too_large');
    expect(error.message).toBe(`the body must be at most ${MAX_BODY_BYTES} bytes`);
    expect(over.outcomes).toEqual(['invalid']);
    expect((await over.store.snapshot()).records).toEqual([]);
  });

  it('a declared length over the limit is refused before the body is read', async () => {
    const { app, outcomes } = routes();
    // Twice the limit, in KiB: read whole, it would be answered as JSON (400), not as too large.
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulled++ === (2 * MAX_BODY_BYTES) / 1024) return controller.close();
        controller.enqueue(new TextEncoder().encode(' '.repeat(1024)));
      },
    });
    const response = await app.request('/pools', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(MAX_BODY_BYTES + 1) },
      body,
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(outcomes).toEqual(['invalid']);
    // At most what the request constructor buffers ahead; never the whole declared body.
    expect(pulled * 1024).toBeLessThan(MAX_BODY_BYTES);
  });

  it('a chunked body that also states a length is held to the limit by its chunks, not by the header', async () => {
    const { app, store, outcomes } = routes();
    const send = chunked(bodyOf(MAX_BODY_BYTES + 1));
    const response = await app.request('/pools', { ...send, headers: { 'content-type': 'application/json', 'content-length': '10', 'transfer-encoding': 'chunked' } });
    expect(response.status).toBe(413);
    expect(outcomes).toEqual(['invalid']);
    expect((await store.snapshot()).records).toEqual([]);
  });

  it.each([
    ['declared', declared],
    ['chunked', chunked],
  ])('%s: the same 413 from routes without a counter', async (_how, send) => {
    const { app, store } = routes(undefined, { counted: false });
    const response = await app.request('/pools', send(bodyOf(MAX_BODY_BYTES + 1)));
    expect(response.status).toBe(413);
    expect(errorBodySchema.parse(await response.json()).error.code).toBe('payload_too_large');
    expect((await store.snapshot()).records).toEqual([]);
  });
});

describe('GET /pools/watch when the server drains', () => {
  it('ends every stream with `closing` when the shutdown signal aborts', async () => {
    const drain = new AbortController();
    const { app } = routes(drain.signal);
    const reader = await SseReader.open(app, '/pools/watch');
    await waitFor(() => reader.of('resync').length === 1, { message: 'the first resync' });
    expect(reader.of('closing')).toEqual([]);
    drain.abort();
    await waitFor(() => reader.of('closing').length === 1 && reader.ended, { message: 'closing, then the end of the stream' });
    await reader.close();
  });

  it('a stream opened after the signal aborted ends at once, with no resync', async () => {
    const drain = new AbortController();
    drain.abort();
    const { app } = routes(drain.signal);
    const reader = await SseReader.open(app, '/pools/watch');
    await waitFor(() => reader.ended, { message: 'the stream ended' });
    expect(reader.of('resync')).toEqual([]);
    await reader.close();
  });

  it('without a shutdown signal, a stream stays open', async () => {
    const { app } = routes();
    const reader = await SseReader.open(app, '/pools/watch');
    await waitFor(() => reader.of('resync').length === 1, { message: 'the first resync' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(reader.ended).toBe(false);
    await reader.close();
  });
});
