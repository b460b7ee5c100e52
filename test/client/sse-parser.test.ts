// The SSE parser against the event-stream rules, fed in every split a network may produce.
import { describe, expect, it } from 'vitest';
import { SseParser, type SseMessage } from '../../src/client/sse-parser.js';

function parseAll(chunks: string[]): SseMessage[] {
  const parser = new SseParser();
  return chunks.flatMap((chunk) => parser.push(chunk));
}

describe('SseParser', () => {
  const stream = 'event: resync\nid: 7-0\ndata: {"a":1}\n\n: keep-alive\n\nevent: upsert\ndata: {"b":2}\n\n';
  const expected = [
    { event: 'resync', data: '{"a":1}', id: '7-0' },
    { event: 'upsert', data: '{"b":2}', id: '7-0' },
  ];

  it('parses events, skips comments, keeps the last id', () => {
    expect(parseAll([stream])).toEqual(expected);
  });

  it('gives the same events whatever the chunk boundaries', () => {
    for (let size = 1; size <= 7; size++) {
      const chunks = stream.match(new RegExp(`[\\s\\S]{1,${size}}`, 'g'))!;
      expect(parseAll(chunks)).toEqual(expected);
    }
  });

  it('accepts \\r\\n and \\r line ends, also when a \\r\\n is split across chunks', () => {
    expect(parseAll(['event: resync\r\ndata: x\r', '\n\r\n'])).toEqual([{ event: 'resync', data: 'x', id: undefined }]);
    expect(parseAll(['event: resync\rdata: x\r\r'])).toEqual([{ event: 'resync', data: 'x', id: undefined }]);
  });

  it('joins data lines with \\n, defaults the event to message, strips one leading space and a BOM', () => {
    expect(parseAll(['\ufeffdata:  a\ndata:b\n\n'])).toEqual([{ event: 'message', data: ' a\nb', id: undefined }]);
  });

  it('dispatches nothing for an event without data, and nothing before the blank line', () => {
    expect(parseAll(['event: resync\n\n', 'event: upsert\ndata: x\n'])).toEqual([]);
  });
  it('joins a \r at the end of one chunk with a \n at the start of the next as one line end, and only there', () => {
    expect(parseAll(['data: a\r', '\ndata: b', '\n\n'])).toEqual([{ event: 'message', data: 'a\nb', id: undefined }]);
    // A \r inside a chunk is a whole line end: a \n opening the next chunk is a line end of its own.
    expect(parseAll(['data: a\rdata: b', '\n\n'])).toEqual([{ event: 'message', data: 'a\nb', id: undefined }]);
  });

  it('strips a BOM only at the very start of the stream', () => {
    expect(parseAll(['data: a', '\ufeffb\n\n'])).toEqual([{ event: 'message', data: 'a\ufeffb', id: undefined }]);
    expect(parseAll(['\ufeff', '\ufeffdata: a\n\n'])).toEqual([]);
  });

  it('reads a line without a colon as a field with an empty value', () => {
    expect(parseAll(['data\ndata\n\n'])).toEqual([{ event: 'message', data: '\n', id: undefined }]);
    expect(parseAll(['event\ndata: x\n\n'])).toEqual([{ event: 'message', data: 'x', id: undefined }]);
  });

  it('ignores an id holding NUL, and retry and unknown fields', () => {
    expect(parseAll(['id: 1\ndata: a\n\n', 'id: 2\u00003\nretry: 3000\nfoo: bar\ndata: b\n\n'])).toEqual([
      { event: 'message', data: 'a', id: '1' },
      { event: 'message', data: 'b', id: '1' },
    ]);
  });

  it('is idle only between whole events: not within a line, nor after an event or data line', () => {
    const parser = new SseParser();
    expect(parser.idle).toBe(true);
    parser.push('event: up');
    expect(parser.idle).toBe(false);
    parser.push('sert\n');
    expect(parser.idle).toBe(false);
    parser.push('\n');
    expect(parser.idle).toBe(true);
    parser.push('data: x\n');
    expect(parser.idle).toBe(false);
    parser.push('\n: keep-alive\n');
    expect(parser.idle).toBe(true);
  });
});
