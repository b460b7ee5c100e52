// What each step of the EndpointSlice list/watch loop comes to (docs/design.md "Watch loops"): where the
// next watch starts (undefined: relist first), why the source must back off and report itself incomplete,
// and when a watch has stayed up long enough to start the backoff over. Pure: the loop in slice-source.ts
// does the requests, the logging and the counting.
import type { WatchEnd } from './slice-api.js';
import type { WatchLine } from './watch-event.js';

/**
 * A clean end of a watch this short, that delivered nothing, is a failure: re-watching at once would spin.
 * A watch that stayed up this long has recovered: its failure starts the backoff over.
 */
export const MIN_QUIET_WATCH_MS = 1_000;

/** The line that closed a watch: an in-stream Status or a line that is not a valid event. */
export type WatchProblem = Exclude<WatchLine, { kind: 'event' } | { kind: 'bookmark' }>;

/** How a watch went, as the loop saw it. */
export interface WatchRun {
  /** The last resourceVersion seen: the one the watch started from, or its last event's or bookmark's. */
  resume: string;
  /** Whether the watch delivered an event or a bookmark. */
  delivered: boolean;
  /** From the request to its end. */
  elapsedMs: number;
}

/**
 * What one watch request leads to. `resume` is where to watch from next (undefined: relist); `retryReason`,
 * when present, is why the source must wait before trying again, reported with `complete: false`.
 */
export type WatchOutcome =
  /** The source is stopping. */
  | { kind: 'aborted'; resume: string; retryReason?: undefined }
  /** 410, as an HTTP status or an in-stream Status: the resourceVersion is too old. */
  | { kind: 'expired'; resume: undefined; retryReason: string }
  /** A line that is not a valid event: what it carried is lost. */
  | { kind: 'unparsable'; resume: undefined; retryReason: string }
  /** A line longer than the limit, closed unread: what it carried is lost. */
  | { kind: 'line_too_long'; resume: undefined; retryReason: string; limitBytes: number }
  /** Any other in-stream Status, HTTP status or request failure, or a watch silent for the idle timeout. */
  | { kind: 'failed'; resume: string; retryReason: string }
  /** The server's timeoutSeconds, or an API server restart: resuming loses nothing. */
  | { kind: 'ended'; resume: string; retryReason?: undefined }
  /** A clean end before anything arrived or the quiet minimum passed: re-watching at once would spin. */
  | { kind: 'ended_early'; resume: string; retryReason: string };

export function classifyWatch(end: WatchEnd, problem: WatchProblem | undefined, watch: WatchRun): WatchOutcome {
  const { resume } = watch;
  if (end.kind === 'aborted') return { kind: 'aborted', resume };
  const expired =
    // Stryker disable next-line ConditionalExpression: equivalent, only a status end has a status to be 410
    (problem?.kind === 'error' && problem.code === 410) || (end.kind === 'status' && end.status === 410);
  if (expired) {
    return {
      kind: 'expired',
      resume: undefined,
      retryReason: `watch from resourceVersion ${resume} expired (410); relisting`,
    };
  }
  if (end.kind === 'line_too_long') {
    return {
      kind: 'line_too_long',
      resume: undefined,
      retryReason: `watch line longer than ${end.limitBytes} bytes; relisting`,
      limitBytes: end.limitBytes,
    };
  }
  if (problem?.kind === 'unparsable') {
    return { kind: 'unparsable', resume: undefined, retryReason: `unparsable watch line (${problem.why}); relisting` };
  }
  const failure = describeWatchFailure(end, problem);
  if (failure !== undefined) return { kind: 'failed', resume, retryReason: failure };
  if (watch.delivered || watch.elapsedMs >= MIN_QUIET_WATCH_MS) return { kind: 'ended', resume };
  return { kind: 'ended_early', resume, retryReason: 'watch ended at once without an event' };
}

/**
 * Whether the loop relists next (a 410, an unparsable line, a line past the limit). Relists wait on a
 * backoff of their own that only time starts over: a relist's list succeeds every time, and must not
 * reset the wait before the next.
 */
export function relists(outcome: WatchOutcome): boolean {
  return outcome.kind === 'expired' || outcome.kind === 'unparsable' || outcome.kind === 'line_too_long';
}

/**
 * Whether a watch that was open `upMs` (undefined: never opened) has recovered, so that its end starts the
 * backoff over. One reported synced that stayed up past the quiet minimum has, even if nothing changed (a
 * quiet namespace delivers no event); a server that closes sooner is flapping, and keeps backing off.
 */
export function watchRecovered(upMs: number | undefined, rewatchGraceMs: number): boolean {
  // Stryker disable next-line ConditionalExpression: equivalent, undefined >= a number is false
  return upMs !== undefined && upMs >= Math.max(MIN_QUIET_WATCH_MS, rewatchGraceMs);
}

/** Why a list failed: the HTTP code when the client gives one, and the first line of the message. */
export function listFailureReason(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  // Stryker disable next-line StringLiteral: equivalent, split always yields a first element
  const message = (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
  const detail = typeof code === 'number' ? `HTTP ${code}: ${message.slice(0, 200)}` : message.slice(0, 200);
  return `listing EndpointSlices failed: ${detail}`;
}

/** Why a watch failed, or undefined when it ended cleanly. */
function describeWatchFailure(
  end: Exclude<WatchEnd, { kind: 'aborted' }>,
  problem: Extract<WatchLine, { kind: 'error' }> | undefined,
): string | undefined {
  if (problem) {
    return `watch error ${problem.code ?? '?'} ${problem.reason ?? ''}: ${problem.message ?? ''}`.trim();
  }
  if (end.kind === 'status') return `watch refused with HTTP ${end.status}: ${end.body.slice(0, 200)}`.trim();
  if (end.kind === 'failed') return `watch failed: ${end.error.message}`;
  if (end.kind === 'idle') return `watch silent for ${end.idleMs} ms (no event or bookmark)`;
  return undefined;
}
