// The benchmarks' SSE reader (bench/lib/timed-sse.ts): events split across chunks anywhere (a blank
// line cut in two included), their ids, the bytes up to each, and the request headers it sends.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { TimedSse, type TimedEvent } from '../../bench/lib/timed-sse.js';

const servers: http.Server[] = [];
afterEach(async () => {
  for (const server of servers) server.closeAllConnections();
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A server that writes `chunks` one by one, a few ms apart, and records the request's headers. */
async function serve(chunks: Buffer[]): Promise<{ url: string; headers: Promise<http.IncomingHttpHeaders> }> {
  let gotHeaders!: (headers: http.IncomingHttpHeaders) => void;
  const headers = new Promise<http.IncomingHttpHeaders>((resolve) => (gotHeaders = resolve));
  const server = http.createServer(async (request, response) => {
    gotHeaders(request.headers);
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const chunk of chunks) {
      response.write(chunk);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, headers };
}

describe('TimedSse', () => {
  it('keeps what came with the headers for the first subscriber', async () => {
    const { url } = await serve([Buffer.from('event: upsert\nid: 9-3\ndata: {"n":1}\n\n')]);
    const sse = await TimedSse.open(url);
    try {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const event = await sse.next(() => true, 5000);
      expect([event.event, event.id, event.data]).toEqual(['upsert', '9-3', { n: 1 }]);
    } finally {
      sse.close();
    }
  });

  it('parses events cut anywhere, with their ids and the bytes received up to each', async () => {
    const first = 'event: resync\nid: 7-1\ndata: {"pools":[1,2,3]}\n\n';
    const second = ': keep-alive\n\nevent: upsert\ndata: {"n":"é"}\n\n';
    const whole = first + second;
    const bytes = Buffer.from(whole);
    // Cut inside the first event, between the two newlines that end it, and inside a multi-byte character.
    const cuts = [0, 10, first.length - 1, first.length, bytes.indexOf(Buffer.from('é')) + 1, bytes.length];
    const { url, headers } = await serve(cuts.slice(1).map((end, i) => bytes.subarray(cuts[i], end)));
    const events: TimedEvent[] = [];
    const sse = await TimedSse.open(url, { 'last-event-id': '7-0' });
    try {
      sse.subscribe((event) => events.push(event));
      await sse.next((event) => event.event === 'upsert', 5000);
    } finally {
      sse.close();
    }
    expect((await headers)['last-event-id']).toBe('7-0');
    expect(events.map((e) => [e.event, e.id, e.data])).toEqual([
      ['resync', '7-1', { pools: [1, 2, 3] }],
      ['upsert', undefined, { n: 'é' }],
    ]);
    expect(events[0]!.bytes).toBe(Buffer.byteLength(first));
    expect(events[1]!.bytes).toBe(Buffer.byteLength(whole));
  });
});
