// Builds the /debug page (src/debug/page) into dist/debug-page with vite: the script, its layout library
// (dagre) and the style bundled into hashed files the service serves itself, so the page loads nothing
// from any other origin. Run by `npm run build` (and so by `npm ci`, through `prepare`).
import { fileURLToPath } from 'node:url';
import { build } from 'vite';

const root = fileURLToPath(new URL('../src/debug/page/', import.meta.url));
const outDir = fileURLToPath(new URL('../dist/debug-page/', import.meta.url));

await build({
  configFile: false,
  root,
  base: '/debug/',
  logLevel: 'warn',
  publicDir: false,
  build: {
    outDir,
    emptyOutDir: true,
    target: 'es2022',
    // Everything in files under /debug/assets (no data: URLs for scripts or styles; the page's CSP is 'self').
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
});
