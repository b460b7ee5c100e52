// The PEM files of TLS flags (serve's --tls-cert-path, --tls-key-path, --tls-client-ca-path; the clients'
// --ca-file, --cert-file, --key-file), read and checked while the flags are parsed, so a wrong file is
// refused at start in one line naming it and the cause (docs/contract.md §6) instead of failing in
// OpenSSL's words when the first connection comes.
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { checkReadableFile } from './regions-file.js';
import { quote } from './flag-parser.js';

const CERTIFICATE_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;
const CERTIFICATE_HEADER = /-----BEGIN CERTIFICATE-----/;
const PRIVATE_KEY_HEADER = /-----BEGIN [A-Z ]*PRIVATE KEY-----/;

export interface CertificateFile {
  pem: string;
  /** Every certificate of the file, in order (a server's own comes first, then its chain). */
  certificates: X509Certificate[];
}

export interface PrivateKeyFile {
  pem: string;
  key: KeyObject;
}

/** The certificates of a PEM file, or what is wrong with it. */
export function readCertificateFile(path: string): CertificateFile | string {
  const text = readText(path);
  if (typeof text !== 'object') return text;
  const blocks = text.pem.match(CERTIFICATE_BLOCK) ?? [];
  if (blocks.length === 0) {
    return PRIVATE_KEY_HEADER.test(text.pem) ? `${quote(path)} holds a private key, not a PEM certificate` : `${quote(path)} holds no PEM certificate`;
  }
  const certificates: X509Certificate[] = [];
  for (const [i, block] of blocks.entries()) {
    try {
      certificates.push(new X509Certificate(block));
    } catch (error) {
      return `${quote(path)}: certificate ${i + 1} does not parse (${firstLine(error)})`;
    }
  }
  return { pem: text.pem, certificates };
}

/** The unencrypted private key of a PEM file, or what is wrong with it. */
export function readPrivateKeyFile(path: string): PrivateKeyFile | string {
  const text = readText(path);
  if (typeof text !== 'object') return text;
  const { pem } = text;
  if (!PRIVATE_KEY_HEADER.test(pem)) {
    return CERTIFICATE_HEADER.test(pem) ? `${quote(path)} holds a certificate, not its private key` : `${quote(path)} holds no PEM private key`;
  }
  if (/-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type: *4,ENCRYPTED/.test(pem)) {
    return `${quote(path)} holds an encrypted private key; poolscope needs it unencrypted (openssl pkey -in KEY -out PLAIN)`;
  }
  try {
    return { pem, key: createPrivateKey(pem) };
  } catch (error) {
    return `${quote(path)}: the private key does not parse (${firstLine(error)})`;
  }
}

/** Whether `key` is the private key of the file's first certificate (the one a server presents). */
export function isKeyOf(certificate: CertificateFile, key: PrivateKeyFile): boolean {
  return certificate.certificates[0]!.checkPrivateKey(key.key);
}

function readText(path: string): { pem: string } | string {
  const unreadable = checkReadableFile(path);
  if (unreadable !== undefined) return unreadable;
  try {
    return { pem: readFileSync(path, 'utf8') };
  } catch (error) {
    return `cannot read ${quote(path)} (${(error as NodeJS.ErrnoException).code ?? 'error'})`;
  }
}

function firstLine(error: unknown): string {
  return String(error instanceof Error ? error.message : error).split('\n')[0]!;
}
