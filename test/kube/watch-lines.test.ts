// One line of an EndpointSlice watch stream (docs/design.md "Watch loops"): an event with its slice, a
// bookmark, an in-stream Status, or unparsable with the reason the loop logs before it relists.
import { describe, expect, it } from 'vitest';
import { parseEndpointSlice } from '../../src/kube/slice.js';
import { parseWatchLine } from '../../src/kube/watch-event.js';
import { fixtureLines, fixtureSlice } from './helpers.js';

const SLICE = fixtureSlice('mcs/relay-ready.json');
const line = (value: unknown) => JSON.stringify(value);

describe('watch lines', () => {
  it.each(['ADDED', 'MODIFIED', 'DELETED'] as const)('%s carries the slice as the cache reads it', (type) => {
    expect(parseWatchLine(line({ type, object: SLICE }))).toEqual({ kind: 'event', type, slice: SLICE });
  });

  it('an event whose object is not a slice is unparsable, naming the type and the field', () => {
    const noName = structuredClone(SLICE) as { metadata: { name?: string } };
    delete noName.metadata.name;
    const parsed = parseWatchLine(line({ type: 'MODIFIED', object: noName }));
    expect(parsed.kind).toBe('unparsable');
    expect(parsed.kind === 'unparsable' && parsed.why).toMatch(/^MODIFIED object: metadata\.name: /);
    expect(parseWatchLine(line({ type: 'ADDED' }))).toEqual({ kind: 'unparsable', why: 'ADDED object: (object): Invalid input: expected object, received undefined' });
  });

  it('a bookmark gives its resourceVersion', () => {
    expect(parseWatchLine(line({ type: 'BOOKMARK', object: { kind: 'EndpointSlice', metadata: { resourceVersion: '48213377' } } }))).toEqual({
      kind: 'bookmark',
      resourceVersion: '48213377',
    });
  });

  it.each([
    ['no object', { type: 'BOOKMARK' }],
    ['an object that is a list', { type: 'BOOKMARK', object: [] }],
    ['no metadata', { type: 'BOOKMARK', object: {} }],
    ['metadata that is a string', { type: 'BOOKMARK', object: { metadata: 'x' } }],
    ['no resourceVersion', { type: 'BOOKMARK', object: { metadata: {} } }],
    ['an empty resourceVersion', { type: 'BOOKMARK', object: { metadata: { resourceVersion: '' } } }],
    ['a numeric resourceVersion', { type: 'BOOKMARK', object: { metadata: { resourceVersion: 7 } } }],
  ])('a bookmark with %s is unparsable', (_what, value) => {
    expect(parseWatchLine(line(value))).toEqual({ kind: 'unparsable', why: 'BOOKMARK without metadata.resourceVersion' });
  });

  it('an in-stream Status gives its code, reason and message (the recorded 410)', () => {
    const [expired] = fixtureLines('watch-expired.jsonl');
    expect(parseWatchLine(expired!)).toEqual({
      kind: 'error',
      code: 410,
      reason: 'Expired',
      message: 'too old resource version: 48213377 (48219883)',
    });
  });

  it('a Status without those fields, or of the wrong types, leaves them undefined', () => {
    const none = { kind: 'error', code: undefined, reason: undefined, message: undefined };
    expect(parseWatchLine(line({ type: 'ERROR' }))).toEqual(none);
    expect(parseWatchLine(line({ type: 'ERROR', object: 'gone' }))).toEqual(none);
    expect(parseWatchLine(line({ type: 'ERROR', object: { code: '410', reason: 410, message: ['x'] } }))).toEqual(none);
  });

  it('a line that is not JSON is unparsable, with the parser message', () => {
    const parsed = parseWatchLine('{"type":"ADDED",');
    expect(parsed.kind).toBe('unparsable');
    expect(parsed.kind === 'unparsable' && parsed.why).toMatch(/^not JSON \(.+\)$/);
  });

  it.each([
    ['a list', '[]'],
    ['a string', '"ADDED"'],
    ['null', 'null'],
    ['no type', line({ object: SLICE })],
    ['a numeric type', line({ type: 1, object: SLICE })],
  ])('%s has no event type', (_what, text) => {
    expect(parseWatchLine(text)).toEqual({ kind: 'unparsable', why: 'no event type' });
  });

  it('an unknown type is unparsable, quoting at most 40 characters of it', () => {
    expect(parseWatchLine(line({ type: 'PATCHED', object: SLICE }))).toEqual({ kind: 'unparsable', why: 'unknown event type "PATCHED"' });
    const long = 'X'.repeat(100);
    expect(parseWatchLine(line({ type: long }))).toEqual({ kind: 'unparsable', why: `unknown event type ${JSON.stringify(long).slice(0, 40)}` });
  });
});

describe('slices as read', () => {
  it('name the first field that does not fit', () => {
    expect(parseEndpointSlice({ metadata: { name: 'a', namespace: 'b' } })).toEqual({
      error: 'addressType: Invalid input: expected string, received undefined',
    });
    expect(parseEndpointSlice({ ...SLICE, endpoints: [{ addresses: [7] }] })).toEqual({
      error: 'endpoints.0.addresses.0: Invalid input: expected string, received number',
    });
    expect(parseEndpointSlice('x')).toEqual({ error: '(object): Invalid input: expected object, received string' });
  });

  it('keep only what poolscope reads, the targetRef that tells pods apart included', () => {
    const targetRef = { kind: 'Pod', namespace: 'dynamo', name: 'frontend-0', uid: 'u1' };
    const parsed = parseEndpointSlice({ ...SLICE, extra: 1, endpoints: [{ addresses: ['10.0.0.1'], targetRef: { ...targetRef, resourceVersion: '5' } }] });
    expect('slice' in parsed && 'extra' in parsed.slice).toBe(false);
    expect('slice' in parsed && parsed.slice.endpoints?.[0]?.targetRef).toEqual(targetRef);
  });
});
