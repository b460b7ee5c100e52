// Certificates for the mutual TLS tests, made with `openssl` in a temp dir: a CA, a server certificate for
// 127.0.0.1 and client certificates it signed (CN `relay`; CN `unlisted`; CN `named-by-dns` with the
// subjectAltName DNS name `relay-b.example`), and a second CA with a client certificate of its own (one
// the server must refuse).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface CertificateFiles {
  dir: string;
  /** The CA that signs the server's and the good client's certificates. */
  ca: string;
  server: { cert: string; key: string };
  client: { cert: string; key: string };
  /** Signed by `ca`, CN `unlisted`. */
  unlisted: { cert: string; key: string };
  /** Signed by `ca`, CN `named-by-dns`, subjectAltName DNS:relay-b.example. */
  dnsNamed: { cert: string; key: string };
  /** A client certificate of another CA (`otherCa`). */
  stranger: { cert: string; key: string };
  otherCa: string;
  cleanup(): void;
}

export function makeCertificates(): CertificateFiles {
  const dir = mkdtempSync(join(tmpdir(), 'poolscope-mtls-'));
  const at = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const newKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

  const makeCa = (name: string) => {
    openssl('req', '-x509', ...newKey, '-keyout', at(`${name}.key`), '-out', at(`${name}.crt`), '-days', '1', '-subj', `/CN=${name}`);
    return at(`${name}.crt`);
  };
  const issue = (name: string, ca: string, extensions: string) => {
    writeFileSync(at(`${name}.ext`), extensions);
    openssl('req', ...newKey, '-keyout', at(`${name}.key`), '-out', at(`${name}.csr`), '-subj', `/CN=${name}`);
    openssl('x509', '-req', '-in', at(`${name}.csr`), '-CA', at(`${ca}.crt`), '-CAkey', at(`${ca}.key`), '-CAcreateserial',
      '-out', at(`${name}.crt`), '-days', '1', '-extfile', at(`${name}.ext`));
    return { cert: at(`${name}.crt`), key: at(`${name}.key`) };
  };

  const ca = makeCa('poolscope-ca');
  const otherCa = makeCa('other-ca');
  return {
    dir,
    ca,
    otherCa,
    server: issue('server', 'poolscope-ca', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n'),
    client: issue('relay', 'poolscope-ca', 'extendedKeyUsage=clientAuth\n'),
    unlisted: issue('unlisted', 'poolscope-ca', 'extendedKeyUsage=clientAuth\n'),
    dnsNamed: issue('named-by-dns', 'poolscope-ca', 'subjectAltName=DNS:relay-b.example\nextendedKeyUsage=clientAuth\n'),
    stranger: issue('stranger', 'other-ca', 'extendedKeyUsage=clientAuth\n'),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
