// The Dockerfile, read without a Docker engine: multi-stage, the final stage non-root with production
// dependencies only (and those suffice: every package the built CLI imports is a production dependency),
// a HEALTHCHECK on serve's /healthz port that works (its command is run against a real service), SIGTERM
// as the stop signal, and every file it copies present and not excluded by .dockerignore.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/service/config.js';
import { startService } from '../support/service.js';
import { REPO_ROOT, readYamlDocuments } from './support.js';

interface Instruction {
  keyword: string;
  args: string;
}
interface Stage {
  name: string | undefined;
  from: string;
  instructions: Instruction[];
}

/** Instructions by stage: comments dropped, `\` continuations joined. */
function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    // Comment lines (the `# syntax` directive too), also between continued lines, as Docker reads them.
    if (/^\s*#/.test(raw)) continue;
    const line = raw.trimEnd();
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const whole = (pending + line).trim();
    pending = '';
    if (whole === '') continue;
    const [keyword, ...rest] = whole.split(/\s+/);
    const instruction = { keyword: keyword!.toUpperCase(), args: rest.join(' ') };
    if (instruction.keyword === 'FROM') {
      const [image, as, name] = rest;
      stages.push({ from: image!, name: as?.toUpperCase() === 'AS' ? name : undefined, instructions: [] });
    } else {
      stages.at(-1)!.instructions.push(instruction);
    }
  }
  return stages;
}

const stages = parseDockerfile(readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8'));
const final = stages.at(-1)!;
const get = (stage: Stage, keyword: string) => stage.instructions.filter((i) => i.keyword === keyword);
const one = (stage: Stage, keyword: string) => {
  const found = get(stage, keyword);
  expect(found, keyword).toHaveLength(1);
  return found[0]!.args;
};
const port = DEFAULT_CONFIG.listen.port;

/**
 * .dockerignore patterns: a name matches that path and everything under it; `*` within one segment; a
 * `!` pattern lets a path back in; the last pattern that matches decides. The pattern that leaves the
 * path out, or undefined when it enters the context.
 */
function ignoredBy(patterns: string[], path: string): string | undefined {
  let decided: string | undefined;
  for (const pattern of patterns) {
    const negated = pattern.startsWith('!');
    const body = negated ? pattern.slice(1) : pattern;
    const regex = new RegExp(`^${body.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('[^/]*')}(/.*)?$`);
    if (regex.test(path)) decided = negated ? undefined : pattern;
  }
  return decided;
}

describe('Dockerfile', () => {
  it('builds in stages and runs the final one as a non-root user, the one the manifests name', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const user = one(final, 'USER');
    const uid = Number(user.split(':')[0]);
    expect(Number.isInteger(uid) && uid > 0).toBe(true);
    const deployment = readYamlDocuments('deploy/deployment.yaml')[0] as { spec: { template: { spec: { securityContext: { runAsUser: number } } } } };
    expect(deployment.spec.template.spec.securityContext.runAsUser).toBe(uid);
  });

  it('holds production dependencies only in the final stage', () => {
    const copies = get(final, 'COPY').map((i) => i.args);
    const modules = copies.find((args) => / \.\/node_modules$/.test(args))!;
    const from = /--from=(\S+)/.exec(modules)?.[1];
    const depsStage = stages.find((s) => s.name === from)!;
    const installs = get(depsStage, 'RUN').map((i) => i.args).filter((args) => args.includes('npm ci'));
    expect(installs).toHaveLength(1);
    expect(installs[0]).toMatch(/npm ci --omit=dev/);
    expect(final.instructions.some((i) => i.keyword === 'RUN' && /npm (ci|install)/.test(i.args))).toBe(false);
    expect(get(final, 'ENV').map((i) => i.args)).toContain('NODE_ENV=production');
  });

  it('runs on a Node.js that package.json allows', () => {
    const engines = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
    for (const stage of stages) {
      const major = Number(/^node:(\d+)/.exec(stage.from)?.[1]);
      expect(major, stage.from).toBe(20);
    }
    expect(engines).toMatch(/>=20\.\d+ <21/);
  });

  it('checks health with `poolscope healthcheck`, exposes serve\'s default port, stops on SIGTERM, runs the CLI', () => {
    expect(JSON.parse(one(final, 'HEALTHCHECK').replace(/^.*?CMD\s+/, ''))).toEqual(['node', 'bin/poolscope.js', 'healthcheck']);
    expect(one(final, 'EXPOSE')).toBe(String(port));
    expect(one(final, 'STOPSIGNAL')).toBe('SIGTERM');
    expect(JSON.parse(one(final, 'ENTRYPOINT'))).toEqual(['node', 'bin/poolscope.js']);
    expect(JSON.parse(one(final, 'CMD'))).toEqual(['serve']);
  });

  it("the HEALTHCHECK's command passes against a serving replica where serve's environment says it serves, and fails where nothing serves", async () => {
    const argv = JSON.parse(one(final, 'HEALTHCHECK').replace(/^.*?CMD\s+/, '')) as string[];
    expect(argv[0]).toBe('node');
    const service = await startService();
    const run = (url: string) =>
      new Promise<number | null>((resolve) => {
        const env = { ...process.env, POOLSCOPE_SERVE_LISTEN: new URL(url).host };
        const child = execFile(process.execPath, argv.slice(1), { cwd: REPO_ROOT, env, timeout: 10_000 }, () => resolve(child.exitCode));
      });
    try {
      expect(await run(service.url)).toBe(0);
    } finally {
      await service.stop();
    }
    expect(await run(service.url)).toBe(1);
  });

  it('copies only files that exist and that .dockerignore lets into the build context', () => {
    const patterns = readFileSync(join(REPO_ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
    const sources = stages
      .flatMap((s) => get(s, 'COPY'))
      .filter((i) => !i.args.includes('--from='))
      .flatMap((i) => i.args.split(/\s+/).slice(0, -1));
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) {
      const path = source.replace(/^\.\//, '').replace(/\/$/, '');
      expect(existsSync(join(REPO_ROOT, path)), path).toBe(true);
      expect(ignoredBy(patterns, path), path).toBeUndefined();
    }
    // The build stage copies everything the build reads.
    const build = stages[0]!;
    const copied = get(build, 'COPY').flatMap((i) => i.args.split(/\s+/).slice(0, -1));
    const tsconfig = JSON.parse(readFileSync(join(REPO_ROOT, 'tsconfig.build.json'), 'utf8')) as { include: string[] };
    for (const needed of [...tsconfig.include, 'tsconfig.json', 'tsconfig.build.json', 'npm-shrinkwrap.json', '.npmrc']) {
      expect(copied.some((c) => c.replace(/^\.\//, '') === needed), needed).toBe(true);
    }
    // The scripts `npm run build` runs.
    const npmScripts = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    const scripts = [...`${npmScripts.build} ${npmScripts['build:debug-page']}`.matchAll(/scripts\/[\w-]+\.mjs/g)].map((m) => m[0]);
    expect(scripts.length).toBeGreaterThan(0);
    for (const script of scripts) expect(copied, script).toContain(script);
  });

  describe('production dependencies', () => {
    beforeAll(() => {
      const buildError = inject('buildError');
      if (buildError !== null) throw new Error(buildError);
    });

    it('hold every package the built CLI imports, statically or dynamically', () => {
      const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
      const builtins = new Set(builtinModules);
      const seen = new Set<string>();
      const packages = new Set<string>();
      const visit = (file: string) => {
        if (seen.has(file)) return;
        seen.add(file);
        const text = readFileSync(file, 'utf8');
        for (const match of text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)['"]([^'"]+)['"]/g)) {
          const specifier = match[1]!;
          if (specifier.startsWith('.')) visit(join(dirname(file), specifier));
          else if (!specifier.startsWith('node:') && !builtins.has(specifier)) {
            const parts = specifier.split('/');
            packages.add(specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!);
          }
        }
      };
      visit(join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js'));
      expect(seen.size).toBeGreaterThan(50);
      expect([...seen].map((f) => relative(REPO_ROOT, f))).toEqual(expect.arrayContaining(['dist/src/cli/serve.js', 'dist/src/relay/relay.js']));
      for (const name of packages) expect(Object.keys(pkg.dependencies), name).toContain(name);
      expect(packages).toContain('yaml');
    });
  });
});
