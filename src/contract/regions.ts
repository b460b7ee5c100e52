// The regions file of `--regions-file` (docs/contract.md §7): one Redis store per region, the same file
// on every replica of every region. Only its shape lives here; reading it, and the full check of each
// `redis_url`, belong to the command line (src/cli).
import { z } from 'zod';

/** What a Redis key prefix defaults to, here and for `--redis-prefix`. */
export const DEFAULT_REDIS_PREFIX = 'poolscope';
/** setTimeout fires at once for delays above 2^31 - 1 ms, so a larger command timeout would be no timeout. */
export const MAX_TIMER_MS = 2_147_483_647;

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const REGION_NAME_RULE =
  'must be a DNS-1123 label: at most 63 lower-case letters, digits and "-", starting and ending with a letter or digit';

/** A region name, as a key of the file and as the value of `--region`. */
export const regionNameSchema = z.string().regex(DNS1123_LABEL, REGION_NAME_RULE);

/**
 * Why `prefix` cannot be a Redis key prefix, if it cannot: it becomes the hash tag `{prefix}` of every
 * key. The one rule for `--redis-prefix` and for a region's `prefix`.
 */
export function redisPrefixProblem(prefix: string): string | undefined {
  if (prefix === '') return 'must not be empty';
  if (/[{}\s]/.test(prefix)) return "must not contain '{', '}' or whitespace (it becomes a Redis hash tag)";
  return undefined;
}

/** `is required` for a missing key, else `rule`. */
const requiredOr = (rule: string) => (issue: { input?: unknown }) => (issue.input === undefined ? 'is required' : rule);

export const regionSchema = z.strictObject(
  {
    redis_url: z
      .string({ error: requiredOr('must be a string') })
      .min(1, 'must not be empty')
      .refine((url) => !/\s/.test(url), 'must not contain whitespace'),
    prefix: z
      .string({ error: 'must be a string' })
      .superRefine((prefix, ctx) => {
        const problem = redisPrefixProblem(prefix);
        if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
      })
      .default(DEFAULT_REDIS_PREFIX),
    /** Defaults to `--redis-command-timeout-ms`, filled in by the command line. */
    command_timeout_ms: z
      .int({ error: `must be a positive integer up to ${MAX_TIMER_MS}` })
      .min(1, `must be a positive integer up to ${MAX_TIMER_MS}`)
      .max(MAX_TIMER_MS, `must be a positive integer up to ${MAX_TIMER_MS}`)
      .optional(),
  },
  { error: 'must be a mapping with redis_url and optionally prefix, command_timeout_ms' },
);

export const regionsFileSchema = z.strictObject(
  {
    regions: z
      .record(regionNameSchema, regionSchema, { error: requiredOr('must be a mapping of region names to regions') })
      .superRefine((regions, ctx) => {
        const names = Object.keys(regions);
        if (names.length === 0) ctx.addIssue({ code: 'custom', message: 'must name at least one region' });
        // Each region has its own store: two regions on the same keys would both write every lease.
        const seen = new Map<string, string>();
        for (const name of names.sort()) {
          const { redis_url, prefix } = regions[name]!;
          const store = JSON.stringify([redis_url, prefix]);
          const first = seen.get(store);
          if (first === undefined) seen.set(store, name);
          else {
            ctx.addIssue({
              code: 'custom',
              path: [name],
              message: `has the same redis_url and prefix as region ${first}: each region needs its own store`,
            });
          }
        }
      }),
  },
  { error: 'must be a mapping with the key regions' },
);

/** A regions file as read, defaults filled in except `command_timeout_ms`. */
export type RegionsFile = z.output<typeof regionsFileSchema>;
export type RegionEntry = z.output<typeof regionSchema>;

/**
 * The first issue of a regions file as its field (a dotted path such as `regions.eu-west-1.redis_url`;
 * undefined for the whole file) and the broken rule, on one line whatever the keys hold.
 */
export function describeRegionsIssue(issues: readonly z.core.$ZodIssue[]): { field: string | undefined; rule: string } {
  const issue = issues[0];
  if (issue === undefined) return { field: undefined, rule: 'is invalid' };
  switch (issue.code) {
    case 'unrecognized_keys': {
      const allowed = issue.path.length === 0 ? Object.keys(regionsFileSchema.shape) : Object.keys(regionSchema.shape);
      return { field: formatPath([...issue.path, issue.keys[0] ?? '']), rule: `unknown key (allowed: ${allowed.join(', ')})` };
    }
    case 'invalid_key':
      return { field: formatPath(issue.path), rule: `is not a region name: ${issue.issues[0]?.message ?? REGION_NAME_RULE}` };
    default:
      return { field: issue.path.length === 0 ? undefined : formatPath(issue.path), rule: issue.message };
  }
}

/** `regions.eu-west-1.redis_url`; a key that is not a plain word is quoted, `regions["a.b"]`. */
function formatPath(path: readonly PropertyKey[]): string {
  return path
    .map((part, i) => {
      if (typeof part === 'string' && /^[A-Za-z0-9_-]+$/.test(part)) return i === 0 ? part : `.${part}`;
      return `[${typeof part === 'number' ? part : JSON.stringify(String(part))}]`;
    })
    .join('');
}
