// One connection to GET /pools/watch (or /routers/watch): opens it, parses the event stream, checks every event against the
// contract's schemas and hands it on, and says how the connection ended, so the watcher can tell a
// replica that is gone (try the next) from a path that cuts event streams (poll instead). With
// `lastEventId` it asks to resume (docs/contract.md §5): a stream whose first event is not a `resync`, or
// that says `: resumed` before any event, has resumed. A stream the server ends says so (docs/contract.md
// §11): `overloaded` (this replica is full: try another) or `closing` (it drains).
import type { Logger } from 'pino';
import type { z } from 'zod';
import { watchEventSchemas, type WatchEvent } from '../contract/index.js';
import { TransportError, type HttpTransport, type TlsProblem } from './http-transport.js';
import { SseParser, type SseMessage } from './sse-parser.js';

export type SessionEnd =
  /** No HTTP reply (refused, reset, timed out) or a 5xx: the replica cannot serve. */
  | { kind: 'unreachable'; reason: string; tls?: TlsProblem }
  /** A reply that is not an event stream, or no first event in time: something on the path cuts SSE. */
  | { kind: 'not-sse'; reason: string }
  /** The stream ended or broke after it had worked (`resynced`: a resync arrived; `resumed`: it resumed). */
  | { kind: 'ended'; reason: string; resynced: boolean; resumed: boolean }
  /** An event the contract does not allow: logged, and the watcher reconnects (a new resync relists). */
  | { kind: 'invalid'; reason: string }
  | { kind: 'stopped' };

export interface SseSessionOptions {
  transport: HttpTransport;
  server: string;
  logger: Logger;
  connectTimeoutMs: number;
  firstEventTimeoutMs: number;
  /** No byte (not even a keep-alive comment) for this long: the connection is dead. */
  idleTimeoutMs: number;
  signal: AbortSignal;
  /** The revision of the last event from this same replica: sent as Last-Event-ID. */
  lastEventId?: string;
  /** The stream resumed after `lastEventId` (before any event of it is handed on). */
  onResumed?(): void;
  onEvent(event: WatchEvent): void;
  /** The list followed (default `/pools`): its stream is `<path>/watch`. */
  path?: string;
  /** Its events' schemas (default the pools'). */
  eventSchemas?: Record<'resync' | 'upsert' | 'delete', z.ZodType>;
}

export async function runSseSession(options: SseSessionOptions): Promise<SessionEnd> {
  const path = `${options.path ?? '/pools'}/watch`;
  const url = `${options.server}${path}`;
  const schemas = options.eventSchemas ?? watchEventSchemas;
  const parseEvent = (message: SseMessage) => parseEventOf(schemas, message);
  let stream;
  try {
    stream = await options.transport.stream(url, {
      accept: 'text/event-stream',
      ...(options.lastEventId === undefined ? {} : { headers: { 'last-event-id': options.lastEventId } }),
      timeoutMs: options.connectTimeoutMs,
      signal: options.signal,
    });
  } catch (error) {
    if (options.signal.aborted) return { kind: 'stopped' };
    if (!(error instanceof TransportError)) return { kind: 'unreachable', reason: String(error) };
    return { kind: 'unreachable', reason: error.reason, ...(error.tls === undefined ? {} : { tls: error.tls }) };
  }
  if (stream.status >= 500 && stream.status !== 502 && stream.status !== 504) {
    stream.close();
    return { kind: 'unreachable', reason: `GET ${path} answered ${stream.status}` };
  }
  if (stream.status !== 200 || !stream.contentType.toLowerCase().startsWith('text/event-stream')) {
    stream.close();
    return { kind: 'not-sse', reason: `GET ${path} answered ${stream.status} ${stream.contentType || 'without a content type'}` };
  }

  let saidResumed = false;
  const parser = new SseParser({ onComment: (text) => (saidResumed ||= text === 'resumed') });
  const decoder = new TextDecoder();
  let resynced = false;
  let resumed = false;
  /** Whether the stream has shown it works: its first event, or (resuming) its first whole bytes. */
  let open = false;
  let ending: SessionEnd | undefined;
  const endWith = (end: SessionEnd) => {
    ending ??= end;
    stream.close();
  };
  // Until the first event: a buffering proxy passes the headers and holds the body. After it: silence.
  let timer = setTimeout(
    () => endWith({ kind: 'not-sse', reason: `no event within ${options.firstEventTimeoutMs} ms` }),
    options.firstEventTimeoutMs,
  );
  const armIdleTimer = () => {
    clearTimeout(timer);
    timer = setTimeout(
      () => endWith({ kind: 'ended', reason: `nothing received for ${options.idleTimeoutMs} ms`, resynced, resumed }),
      options.idleTimeoutMs,
    );
  };
  const opened = (first: WatchEvent | undefined) => {
    open = true;
    armIdleTimer();
    if (options.lastEventId !== undefined && first?.kind !== 'resync') {
      resumed = true;
      options.onResumed?.();
    }
  };
  const onAbort = () => endWith({ kind: 'stopped' });
  options.signal.addEventListener('abort', onAbort, { once: true });
  try {
    for await (const chunk of stream.body) {
      if (open) armIdleTimer();
      const messages = parser.push(decoder.decode(chunk as Buffer, { stream: true }));
      // Resuming with nothing to replay: the server said so in a comment.
      if (!open && messages.length === 0 && parser.idle && options.lastEventId !== undefined && saidResumed) opened(undefined);
      for (const message of messages) {
        if (message.event === 'overloaded') {
          endWith({ kind: 'unreachable', reason: `the replica refused the watch: ${message.data}` });
          break;
        }
        if (message.event === 'closing') {
          endWith({ kind: 'ended', reason: 'the replica ended the stream (closing)', resynced, resumed });
          break;
        }
        const event = parseEvent(message);
        if (typeof event === 'string') {
          options.logger.warn({ server: options.server, event: message.event, reason: event }, 'watch event refused; reconnecting');
          endWith({ kind: 'invalid', reason: event });
          break;
        }
        if (event === undefined) continue;
        if (!open) opened(event);
        if (event.kind === 'resync') resynced = true;
        options.onEvent(event);
      }
      if (ending !== undefined) break;
    }
  } catch (error) {
    // The connection broke (reset, or closed by endWith): `ending` says which when we closed it.
    if (ending === undefined && options.signal.aborted) ending = { kind: 'stopped' };
    ending ??= { kind: 'ended', reason: error instanceof Error ? error.message : String(error), resynced, resumed };
  } finally {
    clearTimeout(timer);
    options.signal.removeEventListener('abort', onAbort);
    stream.close();
  }
  if (ending !== undefined) return ending;
  if (options.signal.aborted) return { kind: 'stopped' };
  if (!open) return { kind: 'not-sse', reason: 'the event stream ended before its first event' };
  return { kind: 'ended', reason: 'the server ended the stream', resynced, resumed };
}

/** The event, `undefined` for an event kind this client does not know (skipped), or why it was refused. */
function parseEventOf(schemas: Record<'resync' | 'upsert' | 'delete', z.ZodType>, message: SseMessage): WatchEvent | undefined | string {
  if (!Object.hasOwn(schemas, message.event)) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(message.data);
  } catch {
    return `${message.event} data is not JSON`;
  }
  const kind = message.event as 'resync' | 'upsert' | 'delete';
  const parsed = schemas[kind].safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return `${kind} data breaks the contract at ${issue?.path.join('.') || 'the top'}: ${issue?.message ?? ''}`;
  }
  return { kind, data: parsed.data } as WatchEvent;
}
