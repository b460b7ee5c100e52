#!/usr/bin/env node
// The `poolscope` command: runs the compiled CLI (built by `npm ci` / `npm run build`).
import { main } from '../dist/src/cli/main.js';

process.exitCode = await main(process.argv.slice(2));
