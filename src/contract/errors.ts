// The error body every route answers with: {"error": {"code", "message", "field"?}} (docs/contract.md §5).
import { z } from 'zod';

/** Every `code` the service answers with (docs/contract.md §5, §8, §11). */
export const ERROR_CODES = [
  'invalid_json',
  'invalid_field',
  'unknown_field',
  'unauthorized',
  'insufficient_scope',
  'forbidden',
  'payload_too_large',
  'unsupported_media_type',
  'store_unavailable',
  'not_found',
  'not_ready',
  'too_many_watchers',
  'bad_request',
  'request_timeout',
  'uri_too_long',
  'expectation_failed',
  'headers_too_large',
  'source_down',
  'method_not_allowed',
  'internal',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export const errorBodySchema = z.object({
  error: z.object({
    code: z.enum(ERROR_CODES),
    message: z.string(),
    field: z.string().optional().meta({ description: 'the dotted path of the one field to blame (capacity.0.value), or the unknown key' }),
  }),
});
export type ErrorBody = z.infer<typeof errorBodySchema>;

/** The first zod issue as the contract's `field` (dotted path, or the unknown key) and message. */
export function describeIssue(issues: readonly z.core.$ZodIssue[]): {
  code: ErrorCode;
  field?: string;
  message: string;
} {
  const issue = issues[0];
  if (!issue) return { code: 'invalid_field', message: 'invalid body' };
  const path = issue.path.map(String);
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0] ?? '';
    const field = [...path, key].join('.');
    return { code: 'unknown_field', field, message: `${field}: unknown field` };
  }
  if (path.length === 0) {
    return { code: 'invalid_field', message: `body: ${issue.message}` };
  }
  const field = path.join('.');
  return { code: 'invalid_field', field, message: `${field}: ${issue.message}` };
}
