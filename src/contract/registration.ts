// The PoolRelay's registration (docs/contract.md §5, POST /pools): the only place its field rules live.
import { z } from 'zod';

/** Longest DNS-1123 subdomain. */
export const MAX_NAME_LENGTH = 253;
export const MAX_MODEL_LENGTH = 512;
export const MAX_LIST_ITEMS = 64;
export const MAX_BODY_BYTES = 64 * 1024;

// A DNS-1123 subdomain is dot-separated DNS-1123 labels (a label alone is a subdomain too):
// lower-case alphanumerics and '-', each label starting and ending alphanumeric, ≤ 63 chars.
const DNS1123_LABEL = '[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?';
export const DNS1123_SUBDOMAIN = new RegExp(`^${DNS1123_LABEL}(\\.${DNS1123_LABEL})*$`);

const noSurroundingWhitespace = (s: string) => s.trim() === s;

/**
 * A pool key part: cluster id, namespace or name. Every rule is one the OpenAPI document carries
 * (docs/contract.md §11: lengths and the pattern); the whitespace check only names the fault better,
 * the pattern refuses whitespace too.
 */
export const dnsName = z
  .string()
  .min(1, 'must not be empty')
  .max(MAX_NAME_LENGTH, `must be at most ${MAX_NAME_LENGTH} characters`)
  .refine(noSurroundingWhitespace, 'must not have surrounding whitespace')
  .regex(
    DNS1123_SUBDOMAIN,
    'must be a DNS-1123 label or subdomain (lower-case letters, digits, "-" and ".", starting and ending with a letter or digit)',
  );

/**
 * The shape of an http(s) URL with a host, as a pattern the OpenAPI document carries: the scheme (any
 * case, as the URL parser takes it), an authority with a host (a name, an IPv4 address or a bracketed
 * IPv6 address; user info and port allowed), then a path, query or fragment; no whitespace anywhere.
 */
export const HTTP_URL = /^[Hh][Tt][Tt][Pp][Ss]?:\/\/(?:[^\s/?#@]*@)?(?:[^\s/?#@:[\]]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]*)?(?:[/?#]\S*)?$/;

/**
 * What the URL parser must also take: the pattern already asks for an http(s) scheme and a host, but
 * cannot tell a host the parser refuses (`http://a%zz`, `http://256.256.256.256`).
 */
export function parsesAsHttpUrl(s: string): boolean {
  return URL.canParse(s);
}

const URL_RULE = 'must be an http:// or https:// URL with a host';

/** An http(s) URL with a host: frontends and relays are dialled by routers. */
export const httpUrl = z.string().regex(HTTP_URL, URL_RULE).refine(parsesAsHttpUrl, URL_RULE).meta({ format: 'uri' });

/**
 * A finite number. JSON has no Infinity, but `1e400` parses to it; zod refuses it as no number, and the
 * bounds say "finite" in the document's own terms (a number past them is Infinity).
 */
const finiteNumber = z.number().min(-Number.MAX_VALUE).max(Number.MAX_VALUE);

export const capacityItem = z.strictObject({
  name: z.string().min(1, 'must not be empty').max(MAX_MODEL_LENGTH),
  value: finiteNumber,
});

export const location = z.strictObject({
  region: z.string().max(MAX_NAME_LENGTH).optional(),
  zone: z.string().max(MAX_NAME_LENGTH).optional(),
});

export const registrationSchema = z.strictObject({
  cluster_id: dnsName,
  namespace: dnsName,
  name: dnsName,
  model: z
    .string()
    .min(1, 'must be 1 to 512 characters')
    .max(MAX_MODEL_LENGTH, 'must be 1 to 512 characters'),
  capabilities: z
    .array(z.string().min(1, 'must not be empty').max(MAX_MODEL_LENGTH))
    .max(MAX_LIST_ITEMS, `must have at most ${MAX_LIST_ITEMS} items`)
    .default([]),
  capacity: z
    .array(capacityItem)
    .max(MAX_LIST_ITEMS, `must have at most ${MAX_LIST_ITEMS} items`)
    .default([]),
  location: location.default({}),
  frontends: z
    .array(httpUrl)
    .max(MAX_LIST_ITEMS, `must have at most ${MAX_LIST_ITEMS} items`)
    .default([]),
  relay: httpUrl.optional(),
});

/** A registration as stored: defaults filled in. */
export type Registration = z.output<typeof registrationSchema>;
/** A registration as a PoolRelay may send it. */
export type RegistrationInput = z.input<typeof registrationSchema>;
