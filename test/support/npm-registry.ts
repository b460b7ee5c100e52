// An npm registry on loopback that holds one package, from a tarball `npm pack` made, and sends every
// other request on to the registry npm is configured with (a redirect: npm itself fetches them, the
// test relays no bytes). A user's `npm install <name>` against it resolves as against the public
// registry, which a local tarball does not: npm reads a dependency's npm-shrinkwrap.json only when the
// registry's version document says `_hasShrinkwrap` (the public registry sets it when the published
// tarball holds one), so `npm install ./package.tgz` resolves every dependency afresh.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface NpmRegistry {
  /** The registry's address, ending in `/`, for `npm install --registry`. */
  url: string;
  /** Each path asked of it, in order (the package's own and those sent on). */
  requests: string[];
  close(): Promise<void>;
}

/**
 * `manifest` is the package.json inside the tarball; `files` the paths `npm pack --json` listed.
 * `upstream` is the registry to send everything else to (`npm config get registry`).
 */
export async function startNpmRegistry(options: {
  tarball: string;
  manifest: { name: string; version: string } & Record<string, unknown>;
  files: string[];
  upstream: string;
}): Promise<NpmRegistry> {
  const { manifest, files } = options;
  const bytes = readFileSync(options.tarball);
  const upstream = options.upstream.endsWith('/') ? options.upstream : `${options.upstream}/`;
  const requests: string[] = [];
  const ownPath = `/${manifest.name}`;
  const tarballPath = `/${manifest.name}/-/${manifest.name}-${manifest.version}.tgz`;
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent(req.url ?? '/');
    requests.push(path);
    if (path === ownPath) {
      const { port } = server.address() as AddressInfo;
      const version = {
        ...manifest,
        _id: `${manifest.name}@${manifest.version}`,
        _hasShrinkwrap: files.includes('npm-shrinkwrap.json'),
        dist: {
          tarball: `http://127.0.0.1:${port}${tarballPath}`,
          shasum: createHash('sha1').update(bytes).digest('hex'),
          integrity: `sha512-${createHash('sha512').update(bytes).digest('base64')}`,
        },
      };
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ name: manifest.name, 'dist-tags': { latest: manifest.version }, versions: { [manifest.version]: version } }));
      return;
    }
    if (path === tarballPath) {
      res.setHeader('content-type', 'application/octet-stream');
      res.end(bytes);
      return;
    }
    res.statusCode = 302;
    res.setHeader('location', upstream + (req.url ?? '/').replace(/^\//, ''));
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
