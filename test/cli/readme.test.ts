// README.md documents every flag the parser knows, and starts with the two commands CI and users run.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SERVE_FLAGS } from '../../src/cli/flag-table.js';
import { REPO_ROOT } from '../support/process.js';

const readme = readFileSync(`${REPO_ROOT}/README.md`, 'utf8');

describe('README.md', () => {
  it.each(SERVE_FLAGS.map((f) => [f.name]))('documents --%s in the flags table', (name) => {
    expect(readme).toMatch(new RegExp(`^\\|[^\\n]*\`--${name}\``, 'm'));
  });

  it('starts with the install-and-run and the test commands, and .ci/run runs the same test command', () => {
    const firstBlock = readme.slice(readme.indexOf('```sh'), readme.indexOf('```', readme.indexOf('```sh') + 5));
    expect(firstBlock).toContain('npm ci && npm start');
    const scripts = JSON.parse(readFileSync(`${REPO_ROOT}/package.json`, 'utf8')).scripts as Record<string, string>;
    expect(scripts.start).toBe('node bin/poolscope.js serve');
    expect(firstBlock).toContain('npm ci && npm test');
    const ci = readFileSync(`${REPO_ROOT}/.ci/run`, 'utf8');
    expect(ci).toMatch(/^npm ci && npm test$/m);
  });
});
