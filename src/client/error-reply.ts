// A reply other than the one asked for, in a few words for a log line or an error: the contract's error
// body (`{"error": {"code", "message"}}`) when it has one, else the bare status.

/** `401 unauthorized: a bearer token is required …`, or `answered 502`. */
export function describeErrorReply(status: number, body: string): string {
  const error = (safeJson(body) as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  if (error && typeof error.code === 'string') return `${status} ${error.code}: ${String(error.message ?? '')}`.trim().replace(/:$/, '');
  return `answered ${status}`;
}

export function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
