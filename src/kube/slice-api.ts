// The two Kubernetes requests of the loop: list EndpointSlices (the typed client) and watch them (a
// streaming GET with the KubeConfig's own agent, TLS and auth). The library's `Watch` class drops
// unparsable lines silently, and the loop must see them, so the watch reads the lines itself. Both are
// bounded (docs/design.md "Watch loops"): the list by a timeout (the typed client has none of its own),
// the watch by the time since its last complete line, with TCP keep-alive on its socket as the library's
// `Watch` sets, and each line by its length: a line past `maxLineBytes` (16 MiB) ends the watch before it
// is buffered further (docs/contract.md §8), so a server that never ends a line costs at most that much.
import http from 'node:http';
import https from 'node:https';
import {
  DiscoveryV1Api,
  Observable,
  type KubeConfig,
  type ObservableMiddleware,
  type RequestContext,
  type ResponseContext,
} from '@kubernetes/client-node';
import { parseEndpointSlice, type EndpointSlice } from './slice.js';

export interface SliceApiOptions {
  kubeConfig: KubeConfig;
  /** Only this namespace's slices; all namespaces when undefined. */
  namespace?: string;
  /** A list that has not been read in full after this long is abandoned (default 30 s). */
  listTimeoutMs?: number;
  /** A watch line longer than this ends the watch (default MAX_WATCH_LINE_BYTES). */
  maxLineBytes?: number;
}

export interface SliceList {
  resourceVersion: string;
  slices: EndpointSlice[];
  /** Items that do not read as an EndpointSlice (skipped): `namespace/name` or index, and why. */
  invalid: Array<{ item: string; error: string }>;
}

export interface WatchRequest {
  resourceVersion: string;
  signal: AbortSignal;
  /** Asks the server to end the watch cleanly after this long. */
  timeoutSeconds: number;
  /** The watch counts as dead after this long without a line (from the request on; bookmarks count). */
  idleTimeoutMs: number;
  /** The server accepted the watch (HTTP 200). */
  onOpen: () => void;
  /**
   * One non-empty line; return false to close the watch. If it (or onOpen) throws, the watch is closed and
   * `watch()` rejects with that error: the reader's failure is not a request failure.
   */
  onLine: (line: string) => boolean;
}

export type WatchEnd =
  /** The server ended the stream (or onLine asked to stop). */
  | { kind: 'ended'; stoppedByReader: boolean }
  /** The server refused the watch. */
  | { kind: 'status'; status: number; body: string }
  | { kind: 'failed'; error: Error }
  /** No complete line for `idleMs`: a half-open connection, a server that sends no bookmarks, or one line trickling in. */
  | { kind: 'idle'; idleMs: number }
  /** A line longer than the limit: the watch was closed before more of it was buffered. */
  | { kind: 'line_too_long'; limitBytes: number }
  | { kind: 'aborted' };

const MAX_ERROR_BODY = 4096;
/** The longest watch line read (docs/contract.md §8): far above any EndpointSlice event (1,000 endpoints are ~0.5 MiB). */
export const MAX_WATCH_LINE_BYTES = 16 * 1024 * 1024;
export const DEFAULT_LIST_TIMEOUT_MS = 30_000;
/** As the library's `Watch` (watch.ts): probes after 30 s of silence on the socket. */
const KEEP_ALIVE_DELAY_MS = 30_000;

export class SliceApi {
  private readonly discovery: DiscoveryV1Api;

  constructor(private readonly options: SliceApiOptions) {
    this.discovery = options.kubeConfig.makeApiClient(DiscoveryV1Api);
  }

  /** The collection path the watch reads (and the list's, for log lines). */
  get path(): string {
    const { namespace } = this.options;
    return namespace === undefined
      ? '/apis/discovery.k8s.io/v1/endpointslices'
      : `/apis/discovery.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/endpointslices`;
  }

  /** A consistent list (no resourceVersion: read from etcd), and the resourceVersion to watch from. */
  async list(signal: AbortSignal): Promise<SliceList> {
    const timeoutMs = this.options.listTimeoutMs ?? DEFAULT_LIST_TIMEOUT_MS;
    const timeout = AbortSignal.timeout(timeoutMs);
    // The signal reaches node-fetch, which aborts the body's read too, not only the wait for headers.
    const requestOptions = {
      middleware: [abortOn(AbortSignal.any([signal, timeout]))],
      middlewareMergeStrategy: 'append' as const,
    };
    const { namespace } = this.options;
    let reply;
    try {
      reply =
        namespace === undefined
          ? await this.discovery.listEndpointSliceForAllNamespaces({}, requestOptions)
          : await this.discovery.listNamespacedEndpointSlice({ namespace }, requestOptions);
    } catch (error) {
      if (timeout.aborted && !signal.aborted) throw new Error(`no answer within ${timeoutMs} ms`);
      throw error;
    }
    const resourceVersion = reply.metadata?.resourceVersion;
    if (!resourceVersion) throw new Error('EndpointSlice list without metadata.resourceVersion');
    const slices: EndpointSlice[] = [];
    const invalid: SliceList['invalid'] = [];
    reply.items.forEach((item, index) => {
      const parsed = parseEndpointSlice(item);
      if ('slice' in parsed) slices.push(parsed.slice);
      else invalid.push({ item: itemName(item) ?? `#${index}`, error: parsed.error });
    });
    return { resourceVersion, slices, invalid };
  }

  /** One watch request, from `resourceVersion` with bookmarks, until it ends, fails or is aborted. */
  async watch(request: WatchRequest): Promise<WatchEnd> {
    let url: URL;
    let requestOptions: https.RequestOptions = {};
    try {
      const cluster = this.options.kubeConfig.getCurrentCluster();
      if (!cluster) return { kind: 'failed', error: new Error('the KubeConfig has no current cluster') };
      url = new URL(cluster.server + this.path);
      await this.options.kubeConfig.applyToHTTPSOptions(requestOptions);
    } catch (error) {
      return { kind: 'failed', error: asError(error) };
    }
    url.searchParams.set('watch', 'true');
    url.searchParams.set('resourceVersion', request.resourceVersion);
    // The watch cache sends a bookmark about once a minute, so a healthy quiet watch is never idle.
    url.searchParams.set('allowWatchBookmarks', 'true');
    url.searchParams.set('timeoutSeconds', String(request.timeoutSeconds));

    requestOptions = {
      ...requestOptions,
      method: 'GET',
      headers: { ...requestOptions.headers, accept: 'application/json' },
      signal: request.signal,
    };
    return streamLines(url, requestOptions, request, this.options.maxLineBytes ?? MAX_WATCH_LINE_BYTES);
  }
}

function streamLines(url: URL, requestOptions: https.RequestOptions, request: WatchRequest, maxLineBytes: number): Promise<WatchEnd> {
  return new Promise<WatchEnd>((resolve, reject) => {
    let settled = false;
    let stoppedByReader = false;
    let idleTimer: NodeJS.Timeout | undefined;
    let req: http.ClientRequest | undefined;
    const settle = (end: WatchEnd) => {
      if (settled) return;
      settled = true;
      clearTimeout(idleTimer);
      resolve(request.signal.aborted ? { kind: 'aborted' } : end);
    };
    /** The reader threw: close the watch, and let the loop's caller see the error. */
    const crash = (error: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(idleTimer);
      req?.destroy();
      reject(error);
    };
    const armIdleTimer = () => {
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => {
        settle({ kind: 'idle', idleMs: request.idleTimeoutMs });
        req?.destroy();
      }, request.idleTimeoutMs);
    };
    const send = url.protocol === 'https:' ? https.request : http.request;
    try {
      req = send(url, requestOptions);
    } catch (error) {
      settle({ kind: 'failed', error: asError(error) });
      return;
    }
    armIdleTimer();
    req.on('socket', (socket) => socket.setKeepAlive(true, KEEP_ALIVE_DELAY_MS));
    req.on('error', (error) => settle({ kind: 'failed', error }));
    req.on('response', (res) => {
      if (res.statusCode !== 200) {
        res.setEncoding('utf8');
        let body = '';
        res.on('data', (chunk: string) => {
          if (body.length < MAX_ERROR_BODY) body += chunk;
        });
        res.on('end', () => settle({ kind: 'status', status: res.statusCode ?? 0, body: body.slice(0, MAX_ERROR_BODY) }));
        res.on('error', (error) => settle({ kind: 'status', status: res.statusCode ?? 0, body: `${body} (${error.message})` }));
        return;
      }
      try {
        request.onOpen();
      } catch (error) {
        crash(error);
        return;
      }
      // The bytes of the line under way, undecoded (a character may straddle two chunks).
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      const deliver = (line: string): boolean => {
        if (line.trim() === '' || stoppedByReader || settled) return !stoppedByReader && !settled;
        // Only a complete line shows the watch alive: bytes of a line that never ends do not.
        armIdleTimer();
        let more: boolean;
        try {
          more = request.onLine(line);
        } catch (error) {
          crash(error);
          return false;
        }
        if (!more) {
          stoppedByReader = true;
          settle({ kind: 'ended', stoppedByReader: true });
          req?.destroy();
          return false;
        }
        return true;
      };
      /** The line under way would pass the limit with `bytes` more: the watch ends, nothing more is kept. */
      const tooLong = (bytes: number): boolean => {
        if (pendingBytes + bytes <= maxLineBytes) return false;
        pending = [];
        pendingBytes = 0;
        settle({ kind: 'line_too_long', limitBytes: maxLineBytes });
        req?.destroy();
        return true;
      };
      res.on('data', (chunk: Buffer) => {
        if (settled) return;
        let start = 0;
        for (let newline = chunk.indexOf(0x0a); newline !== -1; newline = chunk.indexOf(0x0a, start)) {
          if (tooLong(newline - start)) return;
          const line = Buffer.concat([...pending, chunk.subarray(start, newline)]).toString('utf8');
          pending = [];
          pendingBytes = 0;
          start = newline + 1;
          if (!deliver(line)) return;
        }
        if (start === chunk.length || tooLong(chunk.length - start)) return;
        pending.push(chunk.subarray(start));
        pendingBytes += chunk.length - start;
      });
      res.on('end', () => {
        if (pendingBytes > 0) deliver(Buffer.concat(pending).toString('utf8'));
        settle({ kind: 'ended', stoppedByReader });
      });
      // A connection that drops mid-stream closes without 'end'.
      res.on('error', (error) => settle({ kind: 'failed', error }));
      res.on('close', () => {
        if (!res.complete) settle({ kind: 'failed', error: new Error('watch connection closed mid-stream') });
      });
    });
    req.end();
  });
}

/** The typed client has no signal parameter; its request context does. */
function abortOn(signal: AbortSignal): ObservableMiddleware {
  return {
    pre: (context: RequestContext) => {
      context.setSignal(signal);
      return new Observable(Promise.resolve(context));
    },
    post: (context: ResponseContext) => new Observable(Promise.resolve(context)),
  };
}

function itemName(item: unknown): string | undefined {
  const metadata = (item as { metadata?: { namespace?: unknown; name?: unknown } } | null)?.metadata;
  return typeof metadata?.name === 'string' ? `${String(metadata.namespace)}/${metadata.name}` : undefined;
}

export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
