// One error type for every route, rendered by one onError into the contract's body:
// {"error": {"code", "message", "field"?}} (docs/contract.md §5).
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { ErrorBody, ErrorCode } from '../contract/index.js';

export class ApiError extends HTTPException {
  constructor(
    status: ContentfulStatusCode,
    readonly code: ErrorCode,
    message: string,
    readonly field?: string,
  ) {
    super(status, { message });
  }

  body(): ErrorBody {
    return { error: { code: this.code, message: this.message, ...(this.field !== undefined ? { field: this.field } : {}) } };
  }
}

/** A Response with the contract's error body (for middleware that wants a Response, not a throw). */
export function errorResponse(status: ContentfulStatusCode, code: ErrorCode, message: string, field?: string): Response {
  return Response.json(new ApiError(status, code, message, field).body(), { status });
}
