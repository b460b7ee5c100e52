// How the values of `poolscope serve`'s flags are read (flag-table.ts): an address, seconds, a name from a
// list, a TLS or auth file's content. Each rule returns the value read or the broken rule as one line,
// which the parser prints after the flag's name.
import { readFileSync } from 'node:fs';
import { isIPv6 } from 'node:net';
import { readCertificateScopesText } from '../http/certificate-scopes.js';
import { readTokenFileText } from '../http/tokens.js';
import { quote } from './flag-parser.js';
import { checkReadableFile } from './regions-file.js';
import { readCertificateFile, readPrivateKeyFile } from './tls-files.js';

/** `--listen`: HOST:PORT, an IPv6 host in brackets. */
export function parseListen(value: string): { host: string; port: number } | string {
  const bracketed = /^\[([^\]]*)\]:([^:]*)$/.exec(value);
  const plain = /^([^:[\]]+):([^:]*)$/.exec(value);
  const match = bracketed ?? plain;
  if (match === null) {
    if (value.split(':').length > 2) return `an IPv6 host goes in brackets, e.g. [::1]:8080 (got ${quote(value)})`;
    return `must be HOST:PORT, e.g. 0.0.0.0:8080 or [::1]:8080 (got ${quote(value)})`;
  }
  const host = match[1]!;
  const portText = match[2]!;
  if (bracketed !== null && !isIPv6(host)) return `${quote(`[${host}]`)} is not an IPv6 address`;
  if (/\s/.test(host)) return 'host must not contain whitespace';
  if (!/^\d{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) {
    return `port must be an integer from 1 to 65535 (got ${quote(portText)})`;
  }
  return { host, port: Number(portText) };
}

export function formatListen(listen: { host: string; port: number }): string {
  return isIPv6(listen.host) ? `[${listen.host}]:${listen.port}` : `${listen.host}:${listen.port}`;
}

/** Seconds with at most three decimals (so tests can use 0.5), as a whole number of milliseconds. */
export function parseSecsAsMs(value: string): number | string {
  const match = /^(\d+)(?:\.(\d{1,3}))?$/.exec(value);
  if (match === null) return `must be a number of seconds with at most 3 decimals, e.g. 15 or 0.5 (got ${quote(value)})`;
  return Number(match[1]) * 1000 + Number((match[2] ?? '').padEnd(3, '0'));
}

export function formatSecs(ms: number): string {
  return String(ms / 1000);
}

export function checkServiceSuffix(value: string): string | undefined {
  // The suffix ends a Service name (a DNS label), so it may hold only what such a name may hold.
  if (!/^[a-z0-9-]+$/.test(value)) return `must hold only lowercase letters, digits and '-' (got ${quote(value)})`;
  return undefined;
}

export function isOneOf<T extends string>(value: string, allowed: readonly T[]): value is T {
  return (allowed as readonly string[]).includes(value);
}

export function mustBeOneOf(allowed: readonly string[], value: string): string {
  return `must be one of ${allowed.join(', ')} (got ${quote(value)})`;
}

/** What a TLS/auth file must hold to be used. */
export type FileContent = 'write-tokens' | 'read-tokens' | 'certificate' | 'key' | 'subject-scopes';

/** Whether a TLS/auth file holds what its flag needs: undefined, or the broken rule naming the file. */
export function checkContent(path: string, holds: FileContent): string | undefined {
  if (holds === 'certificate') {
    const file = readCertificateFile(path);
    return typeof file === 'string' ? file : undefined;
  }
  if (holds === 'key') {
    const file = readPrivateKeyFile(path);
    return typeof file === 'string' ? file : undefined;
  }
  const unreadable = checkReadableFile(path);
  if (unreadable !== undefined) return unreadable;
  const text = readFileSync(path, 'utf8');
  const content = holds === 'subject-scopes' ? readCertificateScopesText(text) : readTokenFileText(text, { scopes: holds === 'write-tokens' });
  return content.ok ? undefined : `${quote(path)} ${content.problem}`;
}
