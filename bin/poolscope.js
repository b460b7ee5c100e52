#!/usr/bin/env node
// The `poolscope` command: runs the bundled CLI (dist/bundle, built by `npm ci` / `npm run build`:
// scripts/bundle.mjs). Where Node has a compile cache (22.1 and later), it is turned on first, so a
// restarted replica reuses the compiled code of the last start (docs/operations.md "Start-up").
import module from 'node:module';

module.enableCompileCache?.();
const { main } = await import('../dist/bundle/poolscope.js');

process.exitCode = await main(process.argv.slice(2));
