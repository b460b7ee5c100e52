// Prints an .npmrc that carries this machine's npm configuration into an image build (the BuildKit secret
// `npmrc`, scripts/build-image.sh): the registry, a proxy, and the CA certificates npm trusts here. A CA
// file is a path on this machine, which the build cannot read, so its certificates are written inline
// (`ca[]=`, one PEM each, newlines as \n as npm's config reads them). Nothing is printed for a setting
// left at npm's default.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const get = (key) => {
  const value = execFileSync('npm', ['config', 'get', key], { encoding: 'utf8' }).trim();
  return value === '' || value === 'null' || value === 'undefined' ? undefined : value;
};

const lines = [];
for (const key of ['registry', 'proxy', 'https-proxy', 'noproxy', 'strict-ssl']) {
  const value = get(key);
  if (value !== undefined) lines.push(`${key}=${value}`);
}
const cafile = get('cafile');
if (cafile !== undefined) {
  const pems = readFileSync(cafile, 'utf8').match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  for (const pem of pems) lines.push(`ca[]="${pem.replaceAll('\r', '').split('\n').join('\\n')}"`);
}
process.stdout.write(lines.map((line) => `${line}\n`).join(''));
