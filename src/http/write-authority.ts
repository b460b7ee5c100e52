// Who may write what (docs/contract.md §8 "Scoped writes"). The access guard (auth.ts) lets a write through
// with a valid write token and notes which token it was; the route, once it knows what the write touches
// (a pool's cluster and namespace, or a router), asks `authorize(c, target)`: every scoped credential of
// the request (its token; with `--tls-client-scopes-file`, its client certificate) must cover the target,
// else `403 forbidden` naming the target and the credential's scopes (never the token), before anything is
// stored. The first write of each key by each credential in this process is logged (the audit), with the
// scope that allowed it; so is the first refusal of each.
import type { IncomingMessage } from 'node:http';
import { TLSSocket } from 'node:tls';
import type { Context } from 'hono';
import type { Logger } from 'pino';
import { certificateNames, type CertificateNames, type CertificateScopes } from './certificate-scopes.js';
import { ApiError } from './errors.js';
import { coveringScope, describeTarget, type Scope, type WriteTarget } from './scopes.js';
import type { TokenMatch } from './tokens.js';

/** Keys remembered for the audit (credential and key): past this many the oldest is forgotten (and logged again on its next write). */
export const AUDIT_MEMORY = 100_000;

/**
 * The token each request's write guard matched, keyed by the request's context (its `c.req.raw` may be
 * replaced on the way, e.g. by the body limit of a chunked body), so nothing outlives the request.
 */
const tokenOf = new WeakMap<Context, TokenMatch>();

/** Called by the write guard with the token it matched. */
export function noteWriteToken(c: Context, match: TokenMatch): void {
  tokenOf.set(c, match);
}

export interface WriteAuthorityOptions {
  /** Whether writes need a write token (`--auth-token-file`); its flag names it in log lines. */
  tokenFlag?: string;
  /** `--tls-client-scopes-file`: what each client certificate may write. */
  certificates?: CertificateScopes;
  logger?: Logger;
}

/** One credential of a request: what log lines call it, what it may write, and its key in the audit's memory. */
interface Credential {
  id: string;
  name: string;
  scopes: Scope[] | undefined;
  /** Why it may write nothing at all (a certificate no line names); undefined otherwise. */
  none?: string;
}

export class WriteAuthority {
  /** Credential and key of each write (or refusal) logged, oldest first. */
  private readonly audited = new Set<string>();

  constructor(private readonly options: WriteAuthorityOptions) {}

  /**
   * Throws `403 forbidden` unless every credential of the request may write `target`; logs the first
   * write of a key by each credential. The one call a write route makes once it knows its target.
   */
  authorize(c: Context, target: WriteTarget): void {
    const allowed: { credential: Credential; scope: string | null }[] = [];
    for (const credential of this.credentials(c)) {
      const scope = credential.none === undefined ? coveringScope(credential.scopes, target) : undefined;
      if (scope === undefined) {
        const message = credential.none ?? `${credential.name} may not write ${describeTarget(target)}: its scopes are ${credential.scopes!.map((s) => s.text).join(', ')}`;
        this.once(credential, target, 'refused', () =>
          this.options.logger?.warn({ credential: credential.name, [target.kind]: target.key, scopes: credential.scopes?.map((s) => s.text) ?? [] }, 'write refused: outside the scopes of its credential'),
        );
        throw new ApiError(403, 'forbidden', message);
      }
      allowed.push({ credential, scope });
    }
    for (const { credential, scope } of allowed) {
      this.once(credential, target, 'wrote', () =>
        this.options.logger?.info({ credential: credential.name, [target.kind]: target.key, scope }, 'first write of this key by this credential'),
      );
    }
  }

  /** The credentials a write of `c` carries: its token (when writes need one), its client certificate (when scoped). */
  private credentials(c: Context): Credential[] {
    const credentials: Credential[] = [];
    const token = tokenOf.get(c);
    if (this.options.tokenFlag !== undefined) {
      // Fail closed: a write route the token guard does not cover may write nothing.
      credentials.push(
        token === undefined
          ? { id: 'token:', name: 'no write token', scopes: [], none: 'this write was not checked for a write token: the route must be behind the token guard' }
          : { id: `token:${token.id}`, name: `the bearer token of --${this.options.tokenFlag} line ${token.line}`, scopes: token.scopes },
      );
    }
    if (this.options.certificates !== undefined) credentials.push(this.certificate(c, this.options.certificates));
    return credentials;
  }

  private certificate(c: Context, certificates: CertificateScopes): Credential {
    const names = peerNames(c);
    if (names === undefined) {
      return { id: 'certificate:', name: 'no client certificate', scopes: [], none: 'a write needs a client certificate named in --tls-client-scopes-file' };
    }
    const described = describeNames(names);
    const match = certificates.of(names);
    if (match === undefined) {
      return {
        id: `certificate:${described}`,
        name: `the client certificate (${described})`,
        scopes: [],
        none: `the client certificate (${described}) is named in no line of --tls-client-scopes-file: it may write nothing`,
      };
    }
    return { id: `certificate:${described}`, name: `the client certificate (${described})`, scopes: match.scopes };
  }

  /** Runs `log` the first time `credential` meets `target` this way, remembering at most AUDIT_MEMORY of them. */
  private once(credential: Credential, target: WriteTarget, what: 'wrote' | 'refused', log: () => void): void {
    const key = `${what}\0${credential.id}\0${target.kind}\0${target.key}`;
    if (this.audited.has(key)) return;
    if (this.audited.size >= AUDIT_MEMORY) this.audited.delete(this.audited.values().next().value!);
    this.audited.add(key);
    log();
  }
}

/** The client certificate's names, when the request came over mutual TLS with one. */
function peerNames(c: Context): CertificateNames | undefined {
  const socket = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket;
  if (!(socket instanceof TLSSocket)) return undefined;
  const certificate = socket.getPeerCertificate();
  if (certificate === null || Object.keys(certificate).length === 0) return undefined;
  return certificateNames(certificate);
}

function describeNames(names: CertificateNames): string {
  return [...(names.cn === undefined ? [] : [`CN ${names.cn}`]), ...names.dns.map((name) => `DNS ${name}`)].join(', ') || 'no CN or DNS name';
}
