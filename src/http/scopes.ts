// Write scopes (docs/contract.md §8 "Scoped writes"): what a scoped token or client certificate may write.
// A scope is `cluster_id`, `cluster_id/namespace`, or the word `routers` (router registrations). In a
// cluster or namespace part, `*` stands for a whole piece of a name: the whole part (any name at all), or
// a piece between `-` and `.` separators, where it matches one or more characters of one DNS label
// (`us-east-*` covers `us-east-1` and `us-east-1b`, not `us-east-1.corp`). A scope never names a pool, and
// `*` never covers `routers`. Pure: the token and scopes files (tokens.ts, certificate-scopes.ts) parse
// with it, the write authority (write-authority.ts) checks with it.
import { DNS1123_SUBDOMAIN } from '../contract/index.js';

/** The scope that lets a credential register routers (and nothing else). */
export const ROUTERS_SCOPE = 'routers';

/** What one write touches: a pool of a cluster and namespace, or a router registration. */
export type WriteTarget =
  | { kind: 'pool'; cluster_id: string; namespace: string; /** `cluster_id/namespace/name` */ key: string }
  | { kind: 'router'; /** The router's id. */ key: string };

/** A scope read from a file: its text as written, and what it covers. */
export interface Scope {
  readonly text: string;
  covers(target: WriteTarget): boolean;
}

export const SCOPE_RULE =
  'a scope is routers, CLUSTER or CLUSTER/NAMESPACE (DNS-1123 names; * may stand for a whole name, or for a piece between - and . separators)';

/** A scope's text read, or why it is not one (the rule it breaks). */
export function parseScope(text: string): Scope | string {
  if (text === ROUTERS_SCOPE) return { text, covers: (target) => target.kind === 'router' };
  const parts = text.split('/');
  if (parts.length > 2) return `${JSON.stringify(text)}: a scope names at most a cluster and a namespace, never a pool (${SCOPE_RULE})`;
  const patterns: RegExp[] = [];
  for (const part of parts) {
    const pattern = namePattern(part);
    if (pattern === undefined) return `${JSON.stringify(text)}: ${SCOPE_RULE}`;
    patterns.push(pattern);
  }
  const [cluster, namespace] = patterns as [RegExp, RegExp | undefined];
  return {
    text,
    covers: (target) => target.kind === 'pool' && cluster.test(target.cluster_id) && (namespace === undefined || namespace.test(target.namespace)),
  };
}

/** A pattern for one name, or undefined when the part is no DNS-1123 name with whole-piece wildcards. */
function namePattern(part: string): RegExp | undefined {
  // Stryker disable next-line Regex: equivalent, .+ matches any name whole with or without the anchors
  if (part === '*') return /^.+$/;
  // Each `*` a whole piece: at the start or after a separator, and at the end or before one.
  if (/[^-.]\*|\*[^-.]/.test(part)) return undefined;
  if (!DNS1123_SUBDOMAIN.test(part.replaceAll('*', 'x'))) return undefined;
  const source = part
    .split('*')
    .map((piece) => piece.replaceAll('.', '\\.'))
    .join('[a-z0-9-]+');
  return new RegExp(`^${source}$`);
}

/**
 * The scope that covers `target`: its text; null for an unscoped credential (it writes anything);
 * undefined when none of `scopes` covers it.
 */
export function coveringScope(scopes: readonly Scope[] | undefined, target: WriteTarget): string | null | undefined {
  if (scopes === undefined) return null;
  return scopes.find((scope) => scope.covers(target))?.text;
}

/** The target of a pool's write. */
export function poolTarget(id: { cluster_id: string; namespace: string; name: string }): WriteTarget {
  return { kind: 'pool', cluster_id: id.cluster_id, namespace: id.namespace, key: `${id.cluster_id}/${id.namespace}/${id.name}` };
}

/** The target of a router registration's write (`routers` scope). */
export function routerTarget(id: string): WriteTarget {
  return { kind: 'router', key: id };
}

/** What a refusal names: the target, as `pool <key>` or `router <id>`. */
export function describeTarget(target: WriteTarget): string {
  return target.kind === 'pool' ? `pool ${target.key}` : `router ${target.key}`;
}

/**
 * The scopes written after the first word of a line (a token, a certificate subject), each read; or the
 * problem of the first that is not a scope. No scopes: undefined (unscoped).
 */
export function readScopes(words: readonly string[]): { scopes: Scope[] | undefined } | { problem: string } {
  // Stryker disable next-line ObjectLiteral: equivalent, a reading without `problem` and without `scopes` is unscoped alike
  if (words.length === 0) return { scopes: undefined };
  const scopes: Scope[] = [];
  for (const word of words) {
    const scope = parseScope(word);
    if (typeof scope === 'string') return { problem: scope };
    scopes.push(scope);
  }
  return { scopes };
}
