// Bundles the `poolscope` command (src/cli/main.ts and everything it imports, dependencies included)
// with esbuild into dist/bundle/poolscope.cjs: one CommonJS script, which bin/poolscope.js compiles with
// V8's code cache (Node 20 keeps no compiled code of an ES module between starts; docs/operations.md
// "Start-up"). Node then reads one file instead of hundreds, resolves no package, and compiles only what
// the cache does not hold. What only MCS modes run, the Kubernetes client with its caller, is a script of
// its own (kube.cjs, required when the configuration names it), so a replica in registrations mode never
// reads it. The serve path and the Redis store are in the one script, but their modules run only when a
// command imports them. The package's library exports (./client, ./relay) stay the tsc build in dist/src.
//
// dist/bundle/ sits two levels below the package root, as dist/src/<dir>/ does, so the files read at
// run time by a path relative to the module (package.json, dist/debug-page/) are found from either; the
// Redis scripts, read beside their module, are copied beside the bundle.
//
// Last, the built command is started once (serve, memory store, asked what a router asks first) and
// stopped, so the code cache of a start with Node's default flags is made here, not by the first replica.
import { spawn } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, transform } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const outdir = join(root, 'dist', 'bundle');

/** What both scripts share: CommonJS for Node 20, `import.meta.url` the script's own URL. */
const common = {
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  // import() of a module in the bundle becomes a require(): a script compiled with vm.Script may not
  // import() (Node 20 asks for --experimental-vm-modules), and every module it loads is in a bundle.
  supported: { 'dynamic-import': false },
  // No source maps: the package and the image ship no map whose sources they do not hold, and the bundle is
  // not minified, so a stack trace's file and line read as the code itself (docs/operations.md "Start-up").
  sourcemap: false,
  define: { 'import.meta.url': '__poolscopeModuleUrl' },
  // Strict, as the ES modules it is made of were (esbuild's own "use strict" comes after this line).
  banner: { js: `"use strict";\nconst __poolscopeModuleUrl = require('node:url').pathToFileURL(__filename).href;` },
  logLevel: 'warning',
};

/** The Kubernetes modules, as the main script imports them, left to kube.cjs. */
const kubeApart = {
  name: 'kube-apart',
  setup(builder) {
    builder.onResolve({ filter: /^\.\.\/kube\/index\.js$/ }, () => ({ path: './kube.cjs', external: true }));
  },
};

rmSync(outdir, { recursive: true, force: true });
// The main script is written as the function bin/poolscope.js calls (CommonJS's wrapper, written here so
// the binary compiles the file as read, with no second copy of it made to wrap it).
await build({
  ...common,
  entryPoints: [join(root, 'src', 'cli', 'main.ts')],
  outfile: join(outdir, 'poolscope.cjs'),
  plugins: [kubeApart],
  banner: { js: `(function (exports, require, module, __filename, __dirname) {\n${common.banner.js}` },
  footer: { js: '})' },
});
// The Kubernetes client bundled too; ws's optional native helpers are not installed, and ws runs without them.
await build({ ...common, entryPoints: [join(root, 'src', 'kube', 'index.ts')], outfile: join(outdir, 'kube.cjs'), external: ['bufferutil', 'utf-8-validate'] });
for (const name of ['poolscope.cjs', 'kube.cjs']) await asciiOnly(join(outdir, name));

const scripts = join(root, 'src', 'store', 'redis');
for (const name of readdirSync(scripts)) if (name.endsWith('.lua')) cpSync(join(scripts, name), join(outdir, name));

await warmCodeCache();

/**
 * Node holds a script's source while it runs, as V8 reads it: one byte a character when every character is
 * ASCII, two bytes for all 2.6 MB when a single one is not. esbuild escapes every other character in code
 * (strings, regular expressions, names) but copies comments as written, and some of ours and of the
 * dependencies hold `§`, `→`, `’`. Those are written as `\u{…}` instead. That this changes no code is
 * checked, not assumed: esbuild, printing both without comments, must print the same program.
 */
async function asciiOnly(file) {
  const text = readFileSync(file, 'utf8');
  const outsideAscii = /[^\x00-\x7f]/gu;
  if (!outsideAscii.test(text)) return;
  const ascii = text.replace(outsideAscii, (char) => `\\u{${char.codePointAt(0).toString(16)}}`);
  const program = async (source) => (await transform(source, { minifyWhitespace: true, logLevel: 'silent' })).code;
  if ((await program(ascii)) !== (await program(text))) throw new Error(`bundle: ${file}: writing its characters outside ASCII as escapes would change its code`);
  writeFileSync(file, ascii);
}

/**
 * Serve once (memory store, on a free loopback port) until it answers what a router asks first, then stop
 * it: bin/poolscope.js writes the code cache as it exits. Failing here fails the build: a bundle that
 * cannot serve should not ship.
 */
async function warmCodeCache() {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [join(root, 'bin', 'poolscope.js'), 'serve', '--registration-storage=memory', `--listen=127.0.0.1:${port}`], {
    cwd: root,
    // Node's own flags and hooks of the caller (npm's, a test runner's) would make a cache for them, not the default.
    env: { ...process.env, NODE_OPTIONS: '', POOLSCOPE_LOG_LEVEL: 'error' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
  const deadline = Date.now() + 30_000;
  try {
    for (;;) {
      const answered = await fetch(`${base}/healthz`).then((reply) => reply.ok, () => false);
      if (answered) break;
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`bundle: the built command did not serve ${base}/healthz`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    for (const path of ['/readyz', '/pools', '/pools?model=warm']) await (await fetch(base + path)).arrayBuffer();
  } finally {
    child.kill('SIGTERM');
  }
  const ended = await exited;
  if (ended !== 0) throw new Error(`bundle: the built command ended with ${ended} after SIGTERM`);
  if (!readdirSync(outdir).some((name) => name.endsWith('.v8cache'))) throw new Error('bundle: no code cache was written');
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer().once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}
