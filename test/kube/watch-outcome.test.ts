// What a watch, or a list, comes to: every outcome kind of the list/watch loop, without a server.
import { describe, expect, it } from 'vitest';
import type { WatchEnd } from '../../src/kube/slice-api.js';
import {
  classifyWatch,
  listFailureReason,
  MIN_QUIET_WATCH_MS,
  relists,
  watchRecovered,
  type WatchProblem,
  type WatchRun,
} from '../../src/kube/watch-outcome.js';

const ENDED: WatchEnd = { kind: 'ended', stoppedByReader: false };
const STOPPED: WatchEnd = { kind: 'ended', stoppedByReader: true };
const QUIET: WatchRun = { resume: '1002', delivered: false, elapsedMs: 10 };
const DELIVERED: WatchRun = { resume: '1006', delivered: true, elapsedMs: 10 };

function statusLine(code: number | undefined, reason?: string, message?: string): WatchProblem {
  return { kind: 'error', code, reason, message };
}

describe('classifyWatch', () => {
  it('aborted: stops where it was, without a wait, whatever the stream said', () => {
    expect(classifyWatch({ kind: 'aborted' }, undefined, DELIVERED)).toEqual({ kind: 'aborted', resume: '1006' });
    expect(classifyWatch({ kind: 'aborted' }, statusLine(410), QUIET)).toEqual({ kind: 'aborted', resume: '1002' });
  });

  it('expired: an in-stream 410 Status relists after a wait, naming the version', () => {
    expect(classifyWatch(STOPPED, statusLine(410, 'Expired', 'too old resource version'), DELIVERED)).toEqual({
      kind: 'expired',
      resume: undefined,
      retryReason: 'watch from resourceVersion 1006 expired (410); relisting',
    });
  });

  it('expired: an HTTP 410 refusal relists too', () => {
    const end: WatchEnd = { kind: 'status', status: 410, body: '{"kind":"Status","code":410}' };
    expect(classifyWatch(end, undefined, QUIET)).toEqual({
      kind: 'expired',
      resume: undefined,
      retryReason: 'watch from resourceVersion 1002 expired (410); relisting',
    });
  });

  it('unparsable: a line that is not an event relists, with why', () => {
    const problem: WatchProblem = { kind: 'unparsable', why: 'no event type' };
    expect(classifyWatch(STOPPED, problem, DELIVERED)).toEqual({
      kind: 'unparsable',
      resume: undefined,
      retryReason: 'unparsable watch line (no event type); relisting',
    });
  });

  it('line_too_long: a line past the limit relists, naming the limit', () => {
    expect(classifyWatch({ kind: 'line_too_long', limitBytes: 1024 }, undefined, DELIVERED)).toEqual({
      kind: 'line_too_long',
      resume: undefined,
      retryReason: 'watch line longer than 1024 bytes; relisting',
      limitBytes: 1024,
    });
  });

  it('failed: any other in-stream Status re-watches from the last version after a wait', () => {
    expect(classifyWatch(STOPPED, statusLine(500, 'InternalError', 'etcd unavailable'), DELIVERED)).toEqual({
      kind: 'failed',
      resume: '1006',
      retryReason: 'watch error 500 InternalError: etcd unavailable',
    });
    expect(classifyWatch(STOPPED, statusLine(undefined), QUIET)).toEqual({
      kind: 'failed',
      resume: '1002',
      retryReason: 'watch error ? :',
    });
  });

  it('failed: an HTTP refusal other than 410, with the start of its body', () => {
    const end: WatchEnd = { kind: 'status', status: 403, body: `forbidden ${'x'.repeat(300)}` };
    const outcome = classifyWatch(end, undefined, QUIET);
    expect(outcome).toMatchObject({ kind: 'failed', resume: '1002' });
    expect(outcome.retryReason).toBe(`watch refused with HTTP 403: forbidden ${'x'.repeat(190)}`);
  });

  it('failed: a watch silent for the idle timeout re-watches from the last version after a wait', () => {
    const end: WatchEnd = { kind: 'idle', idleMs: 90_000 };
    expect(classifyWatch(end, undefined, DELIVERED)).toEqual({
      kind: 'failed',
      resume: '1006',
      retryReason: 'watch silent for 90000 ms (no event or bookmark)',
    });
  });

  it('failed: a request that failed (refused connection, dropped socket)', () => {
    const end: WatchEnd = { kind: 'failed', error: new Error('connect ECONNREFUSED 127.0.0.1:6443') };
    expect(classifyWatch(end, undefined, DELIVERED)).toEqual({
      kind: 'failed',
      resume: '1006',
      retryReason: 'watch failed: connect ECONNREFUSED 127.0.0.1:6443',
    });
  });

  it('ended: a clean end after an event or bookmark re-watches at once', () => {
    expect(classifyWatch(ENDED, undefined, DELIVERED)).toEqual({ kind: 'ended', resume: '1006' });
  });

  it('ended: a quiet watch that stayed up the quiet minimum re-watches at once', () => {
    const run = { ...QUIET, elapsedMs: MIN_QUIET_WATCH_MS };
    expect(classifyWatch(ENDED, undefined, run)).toEqual({ kind: 'ended', resume: '1002' });
  });

  it('ended_early: a clean end before anything arrived and before the quiet minimum waits', () => {
    const run = { ...QUIET, elapsedMs: MIN_QUIET_WATCH_MS - 1 };
    expect(classifyWatch(ENDED, undefined, run)).toEqual({
      kind: 'ended_early',
      resume: '1002',
      retryReason: 'watch ended at once without an event',
    });
  });
});

describe('relists', () => {
  it('a 410, an unparsable line and a line past the limit relist (on the relist backoff); nothing else does', () => {
    expect(relists(classifyWatch(STOPPED, statusLine(410), QUIET))).toBe(true);
    expect(relists(classifyWatch({ kind: 'line_too_long', limitBytes: 1 }, undefined, QUIET))).toBe(true);
    expect(relists(classifyWatch(STOPPED, { kind: 'unparsable', why: 'not JSON' }, QUIET))).toBe(true);
    expect(relists(classifyWatch(STOPPED, statusLine(500), QUIET))).toBe(false);
    expect(relists(classifyWatch({ kind: 'idle', idleMs: 1 }, undefined, QUIET))).toBe(false);
    expect(relists(classifyWatch(ENDED, undefined, DELIVERED))).toBe(false);
  });
});

describe('watchRecovered', () => {
  it('a watch never opened has not recovered', () => {
    expect(watchRecovered(undefined, 250)).toBe(false);
  });

  it('a watch open the quiet minimum has recovered; one closed sooner is flapping', () => {
    expect(watchRecovered(MIN_QUIET_WATCH_MS - 1, 250)).toBe(false);
    expect(watchRecovered(MIN_QUIET_WATCH_MS, 250)).toBe(true);
  });

  it('a re-watch grace longer than the quiet minimum is the bar instead', () => {
    expect(watchRecovered(MIN_QUIET_WATCH_MS, 3_000)).toBe(false);
    expect(watchRecovered(3_000, 3_000)).toBe(true);
  });
});

describe('listFailureReason', () => {
  it('names the HTTP code a client error carries, with the first line of its message', () => {
    const error = Object.assign(new Error('HTTP-Code: 403\nMessage: forbidden\nBody: {}'), { code: 403 });
    expect(listFailureReason(error)).toBe('listing EndpointSlices failed: HTTP 403: HTTP-Code: 403');
  });

  it('gives the message alone without a code, cut to 200 characters', () => {
    expect(listFailureReason(new Error('connect ECONNREFUSED 127.0.0.1:6443'))).toBe(
      'listing EndpointSlices failed: connect ECONNREFUSED 127.0.0.1:6443',
    );
    expect(listFailureReason(new Error('y'.repeat(300)))).toBe(`listing EndpointSlices failed: ${'y'.repeat(200)}`);
  });

  it('reads a thrown non-Error as its string', () => {
    expect(listFailureReason('socket hang up')).toBe('listing EndpointSlices failed: socket hang up');
  });
});
