// The contract's error body (src/http/errors.ts, docs/contract.md §5): `field` is present only when the
// refusal names one, never as `field: undefined`, which a client checking `'field' in error` would take
// for a field it cannot find.
import { describe, expect, it } from 'vitest';
import { ApiError, errorResponse } from '../../src/http/errors.js';

describe('the error body', () => {
  it('names the field when there is one, and has no field key otherwise', () => {
    expect(new ApiError(400, 'invalid_field', 'name: must be a DNS label', 'name').body()).toStrictEqual({
      error: { code: 'invalid_field', message: 'name: must be a DNS label', field: 'name' },
    });
    const plain = new ApiError(400, 'invalid_json', 'the body is not valid JSON').body();
    expect(plain).toStrictEqual({ error: { code: 'invalid_json', message: 'the body is not valid JSON' } });
    expect(Object.keys(plain.error)).toEqual(['code', 'message']);
  });

  it('is the body and status of errorResponse', async () => {
    const response = errorResponse(503, 'store_unavailable', 'the registration store cannot be reached');
    expect(response.status).toBe(503);
    expect(await response.json()).toStrictEqual({ error: { code: 'store_unavailable', message: 'the registration store cannot be reached' } });
  });
});
