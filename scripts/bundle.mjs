// Bundles the `poolscope` command (src/cli/main.ts and everything it imports, dependencies included)
// with esbuild into dist/bundle/: one ES module for what every command loads, and one chunk per
// dynamic import (the serve path, the Redis store, the Kubernetes client), so a command loads only what
// it runs. Node then reads a few files instead of hundreds and resolves no package, which is most of a
// replica's start-up (docs/operations.md "Start-up"). bin/poolscope.js runs it; the package's library
// exports (./client, ./relay) stay the tsc build in dist/src.
//
// dist/bundle/ sits two levels below the package root, as dist/src/<dir>/ does, so the files read at
// run time by a path relative to the module (package.json, dist/debug-page/) are found from either; the
// Redis scripts, read beside their module, are copied beside the chunks.
import { cpSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const outdir = join(root, 'dist', 'bundle');

rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: { poolscope: join(root, 'src', 'cli', 'main.ts') },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // No source maps: the package and the image ship no map whose sources they do not hold, and the bundle is
  // not minified, so a stack trace's file and line read as the code itself (docs/operations.md "Start-up").
  sourcemap: false,
  // The Kubernetes client is loaded only in mcs/karmada modes, and is left as the package it is (its
  // optional native WebSocket helpers cannot be bundled).
  external: ['@kubernetes/client-node'],
  // CommonJS dependencies (ioredis, pino, prom-client) call require() for Node's own modules.
  banner: { js: "import { createRequire as __poolscopeRequire } from 'node:module'; const require = __poolscopeRequire(import.meta.url);" },
  logLevel: 'warning',
});

const scripts = join(root, 'src', 'store', 'redis');
for (const name of readdirSync(scripts)) if (name.endsWith('.lua')) cpSync(join(scripts, name), join(outdir, name));
