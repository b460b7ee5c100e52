// Copies the non-TypeScript files the service reads at run time (Redis scripts, debug page assets)
// from src/ into dist/src/, so `new URL('./x.lua', import.meta.url)` works from either tree.
import { cpSync, readdirSync, statSync } from 'node:fs';
import { join, extname } from 'node:path';

const ASSETS = new Set(['.lua', '.html', '.css', '.svg']);

function copy(dir) {
  for (const name of readdirSync(dir)) {
    const from = join(dir, name);
    if (statSync(from).isDirectory()) copy(from);
    else if (ASSETS.has(extname(name))) cpSync(from, join('dist', from));
  }
}
copy('src');
