// README's quick start, Clients, Compose and Kubernetes parts: the quick start fills the service with
// `poolscope simulate`, points at /debug and `poolscope pools --watch`; and every poolscope command line
// in README's shell blocks uses only flags its command's --help lists.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { helpFlags, REPO_ROOT } from './support.js';

const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
const section = (title: string) => {
  const start = readme.indexOf(`\n## ${title}\n`);
  if (start === -1) throw new Error(`README has no "## ${title}"`);
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end === -1 ? undefined : end);
};

beforeAll(() => {
  const buildError = inject('buildError');
  if (buildError !== null) throw new Error(buildError);
});

describe('README.md', () => {
  it('quick start: the service, simulate filling it, /debug, pools --watch', () => {
    const quickStart = section('Quick start');
    for (const text of ['bin/poolscope.js serve', 'bin/poolscope.js simulate --pools', 'http://localhost:8080/debug', 'bin/poolscope.js pools --watch']) {
      expect(quickStart).toContain(text);
    }
  });

  it('has the Clients, Compose and Kubernetes sections, each with its commands', () => {
    expect(section('Clients')).toMatch(/from 'poolscope\/relay'[\s\S]*from 'poolscope\/client'/);
    expect(section('Compose')).toContain('docker compose up --build');
    expect(section('Kubernetes')).toContain('kubectl apply -k deploy');
  });

  it('uses only flags the commands have, in every poolscope command line', async () => {
    const blocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!.replace(/\\\n/g, ' '));
    const lines = blocks.flatMap((b) => b.split('\n')).filter((l) => /poolscope(?:\.js)? (serve|relay|pools|simulate)\b/.test(l));
    expect(lines.length).toBeGreaterThanOrEqual(8);
    const known = new Map<string, Set<string>>();
    for (const line of lines) {
      const [, command, rest] = /poolscope(?:\.js)? (serve|relay|pools|simulate)\b([^#]*)/.exec(line)!;
      if (!known.has(command!)) known.set(command!, await helpFlags(command!));
      for (const flag of rest!.matchAll(/(?:^|\s)--([a-z0-9-]+)/g)) expect(known.get(command!)!.has(flag[1]!), `${line}: --${flag[1]}`).toBe(true);
    }
  });
});
