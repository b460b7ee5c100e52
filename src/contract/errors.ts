// The error body every route answers with: {"error": {"code", "message", "field"?}} (docs/contract.md §5).
import { z } from 'zod';

export const errorBodySchema = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    field: z.string().optional(),
  }),
});
export type ErrorBody = z.infer<typeof errorBodySchema>;

export type ErrorCode =
  | 'invalid_json'
  | 'invalid_field'
  | 'unknown_field'
  | 'unauthorized'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'store_unavailable'
  | 'not_found'
  | 'not_ready'
  | 'too_many_watchers'
  | 'bad_request'
  | 'request_timeout'
  | 'headers_too_large'
  | 'source_down'
  | 'method_not_allowed'
  | 'internal';

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
