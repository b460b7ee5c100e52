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

/** A pool key part: cluster id, namespace or name. */
export const dnsName = z
  .string()
  .min(1, 'must not be empty')
  .max(MAX_NAME_LENGTH, `must be at most ${MAX_NAME_LENGTH} characters`)
  .refine((s) => s.trim() === s, 'must not have surrounding whitespace')
  .refine(
    (s) => DNS1123_SUBDOMAIN.test(s),
    'must be a DNS-1123 label or subdomain (lower-case letters, digits, "-" and ".", starting and ending with a letter or digit)',
  );

const noSurroundingWhitespace = (s: string) => s.trim() === s;

/** An http(s) URL with a host: frontends and relays are dialled by routers. */
export const httpUrl = z.string().refine((s) => {
  if (!noSurroundingWhitespace(s)) return false;
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}, 'must be an http:// or https:// URL with a host');

export const capacityItem = z.strictObject({
  name: z.string().min(1, 'must not be empty').max(MAX_MODEL_LENGTH),
  value: z.number().finite('must be a finite number'),
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
