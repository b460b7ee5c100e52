// The heartbeat's header rules (src/http/heartbeat.ts), case by case: which Content-Types are JSON,
// which Content-Encodings are refused, and when a failed body read means the client left. The routes
// that apply them are driven over sockets in heartbeat.test.ts, http-rfc.test.ts and
// heartbeat-fast-path.test.ts.
import type { Context } from 'hono';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/http/errors.js';
import { bodyAborted, clientLeft, isEncoded, isJsonType } from '../../src/http/heartbeat.js';
import { captureLogs } from '../support/logs.js';

describe('isJsonType', () => {
  it.each([
    'application/json',
    'application/json; charset=utf-8',
    'Application/JSON',
    '  application/json  ;charset=utf-8',
    'application/problem+json',
    'application/vnd.poolscope.v1+json',
    'application/x-www-form-urlencoded',
    'application/x-www-form-urlencoded; charset=utf-8',
  ])('takes %j as JSON', (type) => {
    expect(isJsonType(type)).toBe(true);
  });

  it.each([undefined, '', 'text/plain', 'text/json', 'application/jsonx', 'application/+json', 'text/x+json', 'application/x+json+xml', 'xapplication/json', 'xapplication/vnd.x+json', 'text/application/x+json', 'multipart/form-data'])(
    'does not take %j',
    (type) => {
      expect(isJsonType(type)).toBe(false);
    },
  );
});

describe('isEncoded', () => {
  it.each([
    [undefined, false],
    ['identity', false],
    [' Identity ', false],
    ['gzip', true],
    ['br', true],
    ['gzip, identity', true],
  ] as const)('Content-Encoding %j: %s', (header, encoded) => {
    expect(isEncoded(header)).toBe(encoded);
  });
});

/** A context whose request signal is aborted or not: all clientLeft and bodyAborted read. */
function contextOf(aborted: boolean): Context {
  const controller = new AbortController();
  if (aborted) controller.abort();
  return { req: { raw: { signal: controller.signal }, method: 'POST', path: '/pools' } } as unknown as Context;
}

describe('clientLeft', () => {
  it('is the request aborted, or the read reset by the peer; never a contract error', () => {
    const reset = Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
    expect(clientLeft(contextOf(true), new Error('read failed'))).toBe(true);
    expect(clientLeft(contextOf(false), reset)).toBe(true);
    expect(clientLeft(contextOf(false), new Error('read failed'))).toBe(false);
    expect(clientLeft(contextOf(false), Object.assign(new Error('x'), { code: 'EPIPE' }))).toBe(false);
    expect(clientLeft(contextOf(false), undefined)).toBe(false);
    // A refusal raised while reading (413 from the body limit) is answered, even once the client left.
    expect(clientLeft(contextOf(true), new ApiError(413, 'payload_too_large', 'too large'))).toBe(false);
  });
});

describe('bodyAborted', () => {
  it('counts the request as aborted, logs one debug line with the reason, and gives the 400 the route answers', () => {
    const logs = captureLogs('debug');
    const outcomes: string[] = [];
    const error = bodyAborted({ logger: logs.logger, onOutcome: (o) => outcomes.push(o) }, contextOf(true), new Error('socket hang up'));
    expect(outcomes).toEqual(['aborted']);
    expect(logs.lines).toEqual([expect.objectContaining({ level: 20, msg: 'request body aborted by the client', method: 'POST', path: '/pools', reason: 'socket hang up' })]);
    expect(error.status).toBe(400);
    expect(error.body()).toEqual({ error: { code: 'invalid_json', message: 'the body ended before it was complete' } });
  });

  it('needs neither a counter nor a logger', () => {
    const error = bodyAborted({}, contextOf(true), new Error('socket hang up'));
    expect(error.body()).toEqual({ error: { code: 'invalid_json', message: 'the body ended before it was complete' } });
  });
});
