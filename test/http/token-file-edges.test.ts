// TokenFile at its edges, in process on short polls: a file missing at start is refused naming the flag and
// the error code; a followed file that disappears keeps the last good tokens with one warning, and comes
// back without a reload line when its text is the same (a later problem is news again); the file's first
// token is what a client sends, and follows the file; duplicate lines count once; after close() nothing
// is read any more.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TokenFile, TokenFileError } from '../../src/http/token-file.js';
import { captureLogs } from '../support/logs.js';
import { eventually, throughout } from '../support/wait.js';

const root = mkdtempSync(join(tmpdir(), 'poolscope-token-file-edges-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let count = 0;
const freshPath = () => join(root, `tokens-${count++}`);

const KEEPING = 'token file not used: keeping the last good tokens';

describe('TokenFile at its edges', () => {
  it('refuses a file it cannot read at start, naming the flag and the error code', async () => {
    const path = freshPath();
    const error = await TokenFile.open({ flag: 'read-token-file', path, logger: captureLogs().logger }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TokenFileError);
    expect(error).toMatchObject({ name: 'TokenFileError', flag: 'read-token-file', message: `--read-token-file: cannot read ${JSON.stringify(path)} (ENOENT)` });
  });

  it('a file that disappears keeps its tokens with one warning; back as it was, it is taken without a reload line', async () => {
    const path = freshPath();
    writeFileSync(path, 'one\ntwo\none\n');
    const logs = captureLogs();
    const file = await TokenFile.open({ flag: 'auth-token-file', path, logger: logs.logger, watchDirectory: false, pollMs: 20 });
    try {
      expect(file.first).toBe('one');
      expect(file.tokens.size).toBe(2);
      rmSync(path);
      await eventually(() => expect(logs.warnings()).toHaveLength(1));
      expect(logs.warnings()[0]).toMatchObject({ msg: KEEPING, flag: 'auth-token-file', path, reason: 'cannot read it (ENOENT)', tokens: 2 });
      await throughout(120, 20, () => expect(logs.warnings()).toHaveLength(1));
      expect(file.tokens.matches('two')).toBe(true);

      // The same text again: nothing to reload, but the problem is over, so the next one is logged again.
      writeFileSync(path, 'one\ntwo\none\n');
      await throughout(120, 20, () => expect(logs.warnings()).toHaveLength(1));
      rmSync(path);
      await eventually(() => expect(logs.warnings()).toHaveLength(2));
      expect(logs.lines.filter((line) => line.msg === 'token file reloaded')).toEqual([]);

      writeFileSync(path, 'three\nfour\nthree\n');
      await eventually(() => expect(file.first).toBe('three'));
      expect(logs.lines.find((line) => line.msg === 'token file reloaded')).toMatchObject({ level: 30, flag: 'auth-token-file', path, tokens: 2 });
      expect(file.tokens.matches('one')).toBe(false);
      expect(logs.lines.filter((line) => line.level === 50)).toEqual([]);
    } finally {
      file.close();
    }
  });

  it('reads nothing after close()', async () => {
    const path = freshPath();
    writeFileSync(path, 'one\n');
    const file = await TokenFile.open({ flag: 'auth-token-file', path, logger: captureLogs().logger, pollMs: 20 });
    file.close();
    writeFileSync(path, 'two\n');
    await file.reload();
    await throughout(150, 20, () => expect(file.tokens.matches('one')).toBe(true));
    expect(file.first).toBe('one');
  });

  it('follows a change of the directory it sees, without waiting for the poll', async () => {
    const path = freshPath();
    writeFileSync(path, 'one\n');
    const file = await TokenFile.open({ flag: 'auth-token-file', path, logger: captureLogs().logger, pollMs: 60_000 });
    try {
      writeFileSync(path, 'two\n');
      await eventually(() => expect(file.tokens.matches('two')).toBe(true), { timeoutMs: 2000 });
    } finally {
      file.close();
    }
  });
});
