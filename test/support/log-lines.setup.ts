// A setup file of every test file (vitest.config.ts): the file fails when a log line it made had a key
// twice in one object (test/support/log-lines.ts). Runs after the file's own afterAll hooks (vitest runs
// after-hooks in stack order), so lines logged while replicas stop are checked too.
import { afterAll, expect } from 'vitest';
import { takeLogLineProblems } from './log-lines.js';

afterAll(() => {
  expect(takeLogLineProblems(), 'log lines with a key twice in one object').toEqual([]);
});
