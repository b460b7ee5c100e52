#!/usr/bin/env node
// The `poolscope` command: runs the bundled CLI (dist/bundle/poolscope.cjs, built by `npm ci` / `npm run
// build`: scripts/bundle.mjs) with V8's code cache (docs/operations.md "Start-up"). Compiling the bundle
// was a fifth of a replica's start, and Node 20 keeps no compiled code between starts of an ES module, so
// the bundle is one CommonJS script compiled here with `vm.Script` and the cache V8 made of it after a
// start: the functions that start ran, compiled already. V8 refuses a cache made by another Node, another
// bundle or other V8 flags (then it compiles as without one), so a cache is kept per Node version and
// flags, written when this process ends if there was none that fit: by the build's own start, and by a
// replica started with other flags where the bundle's folder is writable (a read-only one is left alone).
import { randomBytes, createHash } from 'node:crypto';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import module from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';

// Node 22.1 and later: kept for the chunk loaded with require() (the Kubernetes client, in MCS modes).
module.enableCompileCache?.();

const bundle = fileURLToPath(new URL('../dist/bundle/poolscope.cjs', import.meta.url));
const flags = createHash('sha256')
  .update(JSON.stringify([process.version, process.arch, process.execArgv, process.env.NODE_OPTIONS ?? '']))
  .digest('hex')
  .slice(0, 16);
const cacheFile = `${bundle}.${flags}.v8cache`;

const cli = { exports: {} };
compile().runInThisContext()(cli.exports, module.createRequire(bundle), cli, bundle, dirname(bundle));
process.exitCode = await cli.exports.main(process.argv.slice(2));

/** The bundle as a script, with its cache when one fits (the cache's bytes are not kept past this). */
function compile() {
  let cachedData;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    // None yet for this Node and these flags: compiled in full, and cached when this process ends.
  }
  // The file is one function expression (CommonJS's wrapper: scripts/bundle.mjs).
  const script = new vm.Script(readFileSync(bundle, 'utf8'), { filename: bundle, cachedData });
  if (cachedData === undefined || script.cachedDataRejected) process.once('exit', () => writeCache(script.createCachedData()));
  return script;
}

/** Written whole or not at all (a temporary file renamed), so a start never reads half a cache. */
function writeCache(data) {
  const temporary = `${cacheFile}.${randomBytes(6).toString('hex')}`;
  try {
    writeFileSync(temporary, data);
    renameSync(temporary, cacheFile);
  } catch {
    // A read-only install starts as it would without a cache.
    rmSync(temporary, { force: true });
  }
}
