// The check every log line of the suite goes through (log-lines.ts): it finds a key given twice in one
// object at any depth, and nothing else.
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { duplicateKeys } from './log-lines.js';

describe('duplicateKeys', () => {
  it('finds a key twice in one object, at the top and deeper, with its path', () => {
    expect(duplicateKeys('{"level":40,"region":"r2","msg":"x","region":"r2"}')).toEqual(['region']);
    expect(duplicateKeys('{"a":{"b":1,"c":[{"d":1,"d":2}],"b":2}}')).toEqual(['a.c[0].d', 'a.b']);
  });

  it('finds none where keys repeat only across objects, or inside strings', () => {
    expect(duplicateKeys('{"a":{"x":1},"b":{"x":1},"c":"\\"a\\":1,\\"a\\":2","d":[1,2.5e3,true,false,null]}')).toEqual([]);
    expect(duplicateKeys('{"k\\u0061":1,"ka":2}')).toEqual(['ka']);
  });

  it('refuses text that is not JSON', () => {
    expect(() => duplicateKeys('{"a":1')).toThrow(SyntaxError);
    expect(() => duplicateKeys('{"a":1} trailing')).toThrow(SyntaxError);
  });

  it('sees what pino writes for a child binding given again as a field', () => {
    const lines: string[] = [];
    const logger = pino({}, { write: (line: string) => void lines.push(line) }).child({ region: 'r2' });
    logger.warn({ region: 'r2', hold_ms: 1 }, 'twice');
    logger.warn({ hold_ms: 1 }, 'once');
    expect(lines.map((line) => duplicateKeys(line))).toEqual([['region'], []]);
  });
});
