// What a GET /pools request asks of its reply (docs/contract.md §5): which content coding it accepts
// (Accept-Encoding, RFC 9110 §12.5.3) and whether the copy it holds is still current (If-None-Match,
// RFC 9110 §13.1.2). Pure functions of the header values.
import type { ContentCoding } from '../join/list-bodies.js';

/** The codings the server offers, best first when the client likes them equally (br is the smaller). */
const OFFERED: readonly Exclude<ContentCoding, 'identity'>[] = ['br', 'gzip'];

/**
 * The coding to send: the offered one with the highest q-value above 0 (`*` stands for any not named), br
 * before gzip on a tie, and a compressed one unless `identity` is named with a higher q-value. No header,
 * an empty one, or nothing offered acceptable: identity, sent even where the header refuses it (the body
 * is never withheld, RFC 9110 §12.5.3).
 */
export function negotiateEncoding(header: string | undefined): ContentCoding {
  if (header === undefined) return 'identity';
  const q = new Map<string, number>();
  for (const part of header.split(',')) {
    // An empty element (`, , gzip`) sets the weight of the name '', which no coding looks up.
    const [name, ...params] = part.split(';').map((s) => s.trim()) as [string, ...string[]];
    let weight = 1;
    for (const param of params) {
      const match = /^q\s*=\s*(.*)/i.exec(param);
      if (match) weight = Number(match[1]);
    }
    // Above 1 or not a number: 0, not acceptable. A negative weight is below every positive one, as 0 is,
    // and a coding is sent only with a weight above 0.
    q.set(name.toLowerCase(), weight <= 1 ? weight : 0);
  }
  let best: ContentCoding = 'identity';
  let bestQ = q.get('identity') ?? 0;
  for (const coding of OFFERED) {
    const weight = q.get(coding) ?? q.get('*') ?? 0;
    if (weight > 0 && (weight > bestQ || (weight === bestQ && best === 'identity'))) {
      best = coding;
      bestQ = weight;
    }
  }
  return best;
}

/**
 * Whether If-None-Match holds the current tag: `*` (a list is always there), or a list of entity tags one
 * of which matches by the weak comparison (`W/"x"` matches `"x"`). A malformed header matches nothing.
 */
export function noneMatchHolds(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const value = header.trim();
  if (value === '*') return true;
  const tag = /\s*(?:W\/)?("[^"]*")\s*(?:,|$)/gy;
  let match: RegExpExecArray | null;
  // Sticky: each tag must start where the last one ended; at the end of the value, or on anything else, no
  // match (a tag is never empty, so the loop always moves on).
  while ((match = tag.exec(value)) !== null) {
    if (match[1] === etag) return true;
  }
  return false;
}
