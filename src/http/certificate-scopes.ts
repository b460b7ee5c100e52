// `--tls-client-scopes-file` (docs/contract.md §8 "Scoped writes"): what a client certificate may write,
// for mutual TLS. One line per certificate subject, `<subject> <scope>...`: the subject is a certificate's
// common name (CN) or one of its subjectAltName DNS names, the scopes as in a token file (scopes.ts); a
// subject alone may write anything. A certificate named by several lines may write what any of them
// allows; one named by none may write nothing. Followed like a token file (token-file.ts).
import type { PeerCertificate } from 'node:tls';
import { FollowedFile, type FileKind, type FileReading, type TokenFileOptions } from './token-file.js';
import { readScopes, type Scope } from './scopes.js';

export interface SubjectScopes {
  subject: string;
  line: number;
  scopes: Scope[] | undefined;
}

/** The names of a client certificate a scopes file can match: its CN and its subjectAltName DNS names. */
export interface CertificateNames {
  cn: string | undefined;
  dns: string[];
}

/** What a certificate may write: the subjects that named it, their scopes (undefined: unscoped). */
export interface CertificateMatch {
  subjects: string[];
  scopes: Scope[] | undefined;
}

/** One subject a line, then its scopes; blank lines and lines starting with '#' are skipped. */
export function readCertificateScopesText(text: string): FileReading<SubjectScopes[]> {
  const entries: SubjectScopes[] = [];
  for (const [index, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const [subject = '', ...words] = line.split(/[ \t]+/);
    const read = readScopes(words);
    if ('problem' in read) return { ok: false, problem: `line ${index + 1}: ${read.problem}` };
    entries.push({ subject, line: index + 1, scopes: read.scopes });
  }
  if (entries.length === 0) return { ok: false, problem: 'names no certificate subject (only blank lines and # comments)' };
  return { ok: true, value: entries, count: entries.length };
}

/** The CN and DNS names of a certificate as Node's TLS socket gives it. */
export function certificateNames(certificate: PeerCertificate): CertificateNames {
  const cn = certificate.subject?.CN as string | string[] | undefined;
  const dns = (certificate.subjectaltname ?? '')
    .split(', ')
    .filter((name) => name.startsWith('DNS:'))
    .map((name) => name.slice('DNS:'.length));
  return { cn: Array.isArray(cn) ? cn[0] : cn, dns };
}

/** The scopes of each certificate subject now; the file's watcher replaces them when it changes. */
export class CertificateScopes {
  private bySubject = new Map<string, SubjectScopes[]>();

  constructor(entries: readonly SubjectScopes[] = []) {
    this.replace(entries);
  }

  replace(entries: readonly SubjectScopes[]): void {
    const bySubject = new Map<string, SubjectScopes[]>();
    for (const entry of entries) bySubject.set(entry.subject, [...(bySubject.get(entry.subject) ?? []), entry]);
    this.bySubject = bySubject;
  }

  /** What a certificate with these names may write; undefined when no line names it. */
  of(names: CertificateNames): CertificateMatch | undefined {
    const wanted = [...(names.cn === undefined ? [] : [names.cn]), ...names.dns];
    const lines = wanted.flatMap((name) => this.bySubject.get(name) ?? []);
    if (lines.length === 0) return undefined;
    const unscoped = lines.some((line) => line.scopes === undefined);
    return {
      subjects: [...new Set(lines.map((line) => line.subject))],
      scopes: unscoped ? undefined : lines.flatMap((line) => line.scopes!),
    };
  }
}

const SCOPES_FILE: FileKind<SubjectScopes[]> = { noun: 'client scopes file', items: 'subjects', read: readCertificateScopesText };

/** `--tls-client-scopes-file`, followed. */
export class CertificateScopesFile extends FollowedFile<SubjectScopes[]> {
  readonly scopes: CertificateScopes;

  private constructor(options: TokenFileOptions, scopes: CertificateScopes) {
    super(options, SCOPES_FILE, (entries) => scopes.replace(entries));
    this.scopes = scopes;
  }

  static async open(options: TokenFileOptions): Promise<CertificateScopesFile> {
    const file = new CertificateScopesFile(options, new CertificateScopes());
    await file.start();
    return file;
  }
}
