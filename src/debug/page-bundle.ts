// The /debug page as built by `npm run build` (scripts/build-debug-page.mjs → dist/debug-page/): read
// into memory once, then served from there, so a request can only ever name a file of the bundle.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface PageFile {
  body: Uint8Array;
  contentType: string;
}

export interface PageBundle {
  /** Files by path relative to the bundle root, with '/' separators (`index.html`, `assets/x.js`). */
  files: ReadonlyMap<string, PageFile>;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.map': 'application/json',
};

/**
 * Where the bundle is: dist/debug-page, seen from this module in dist/src/debug/ (the built service) or in
 * src/debug/ (tests run through tsx/vitest).
 */
export function defaultBundleDir(): string | undefined {
  const candidates = ['../../debug-page/', '../../dist/debug-page/'].map((p) => fileURLToPath(new URL(p, import.meta.url)));
  return candidates.find((dir) => existsSync(join(dir, 'index.html')));
}

/** Reads the bundle; undefined when it was not built. */
export function loadPageBundle(dir: string | undefined = defaultBundleDir()): PageBundle | undefined {
  if (!dir || !existsSync(join(dir, 'index.html'))) return undefined;
  const files = new Map<string, PageFile>();
  const walk = (at: string): void => {
    for (const name of readdirSync(at)) {
      const path = join(at, name);
      if (statSync(path).isDirectory()) walk(path);
      else {
        const type = CONTENT_TYPES[extname(name)] ?? 'application/octet-stream';
        files.set(relative(dir, path).split(sep).join('/'), { body: readFileSync(path), contentType: type });
      }
    }
  };
  walk(dir);
  return { files };
}
