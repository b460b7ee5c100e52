// A small Kubernetes API server for tests: the list and watch protocol of discovery.k8s.io/v1
// EndpointSlices, on 127.0.0.1, driven from the test. It keeps the objects and an event log with
// increasing resourceVersions, so a watch from resourceVersion N gets every later event (as the real
// watch cache does), and a watch from before `compact()` gets the 410 line real servers send.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';

const API_VERSION = 'discovery.k8s.io/v1';
const KIND = 'EndpointSlice';
const COLLECTION = /^\/apis\/discovery\.k8s\.io\/v1\/(?:namespaces\/([^/]+)\/)?endpointslices$/;

export interface RecordedRequest {
  path: string;
  namespace: string | undefined;
  watch: boolean;
  query: Record<string, string>;
}

/**
 * How to spoil the next list or watch request. A list: HTTP 500, the connection dropped without a reply,
 * `hang` (never answer), `stall` (answer 200 and part of the body, then nothing, the connection open).
 */
export type ListFailure = 500 | 'drop' | 'hang' | 'stall';
/**
 * A watch: HTTP 500, dropped, HTTP 410, `line-410` (200 and one 410 ERROR line, as real servers do),
 * `silent` (200, then not a byte however the objects change, the connection open: a half-open path),
 * `endless-line` (200, then one line that never ends, as fast as the client reads, up to ENDLESS_LINE_CAP
 * bytes, then silence with the connection open) or `trickle` (200, then one byte of a line every 20 ms).
 */
export type WatchFailure = 500 | 'drop' | 'http-410' | 'line-410' | 'silent' | 'endless-line' | 'trickle';

/** What an `endless-line` watch sends at most: four times the client's limit, so a client without one shows it. */
export const ENDLESS_LINE_CAP = 64 * 1024 * 1024;

type KubeObject = { metadata: { name: string; namespace: string; resourceVersion?: string } } & Record<string, unknown>;

interface Watcher {
  res: http.ServerResponse;
  namespace: string | undefined;
  bookmarks: boolean;
}

interface LoggedEvent {
  resourceVersion: number;
  namespace: string | undefined;
  type: string;
  line: string;
}

export class FakeKubeApi {
  readonly requests: RecordedRequest[] = [];
  private readonly objects = new Map<string, KubeObject>();
  private readonly log: LoggedEvent[] = [];
  private readonly watchers = new Set<Watcher>();
  private resourceVersion: number;
  /** Watches from a resourceVersion below this get 410. */
  private oldestWatchable: number;
  private listFailures: ListFailure[] = [];
  private watchFailures: WatchFailure[] = [];
  private everyWatchFails: WatchFailure | undefined;
  /** Bytes of the endless line that each `endless-line` watch got into its socket, in order. */
  readonly endlessLineBytes: number[] = [];

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
    resourceVersion: number,
  ) {
    this.resourceVersion = resourceVersion;
    this.oldestWatchable = resourceVersion;
  }

  static async start(options: { resourceVersion?: number } = {}): Promise<FakeKubeApi> {
    const server = http.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    const api = new FakeKubeApi(server, `http://127.0.0.1:${port}`, options.resourceVersion ?? 1000);
    server.on('request', (req, res) => api.handle(req, res));
    return api;
  }

  /** A KubeConfig for this server (plain http needs skipTLSVerify with @kubernetes/client-node). */
  kubeConfig(): KubeConfig {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromClusterAndUser({ name: 'fake', server: this.url, skipTLSVerify: true }, { name: 'fake' });
    return kubeConfig;
  }

  get currentResourceVersion(): string {
    return String(this.resourceVersion);
  }

  get openWatches(): number {
    return this.watchers.size;
  }

  watchRequests(): RecordedRequest[] {
    return this.requests.filter((r) => r.watch);
  }

  listRequests(): RecordedRequest[] {
    return this.requests.filter((r) => !r.watch);
  }

  // --- objects -------------------------------------------------------------------------------------

  add(object: KubeObject): void {
    this.emit('ADDED', object);
  }

  modify(object: KubeObject): void {
    this.emit('MODIFIED', object);
  }

  remove(namespace: string, name: string): void {
    const object = this.objects.get(`${namespace}/${name}`);
    if (!object) throw new Error(`no object ${namespace}/${name}`);
    this.emit('DELETED', object);
  }

  /** A BOOKMARK at the current resourceVersion to watches that asked for bookmarks. */
  bookmark(): void {
    const line = JSON.stringify({
      type: 'BOOKMARK',
      object: {
        kind: KIND,
        apiVersion: API_VERSION,
        metadata: { resourceVersion: String(this.resourceVersion) },
        addressType: '',
        endpoints: null,
        ports: null,
      },
    });
    for (const watcher of this.watchers) if (watcher.bookmarks) write(watcher.res, line);
  }

  /** The watch cache forgets everything so far: a watch from an older resourceVersion gets 410. */
  compact(): void {
    this.oldestWatchable = this.resourceVersion;
  }

  // --- faults --------------------------------------------------------------------------------------

  /** The next lists fail, one per entry: HTTP 500, the connection dropped without a reply, or no reply. */
  failNextLists(...failures: ListFailure[]): void {
    this.listFailures.push(...failures);
  }

  /** The next watches fail, one per entry. `line-410` answers 200 and one 410 ERROR line, as real servers do. */
  failNextWatches(...failures: WatchFailure[]): void {
    this.watchFailures.push(...failures);
  }

  /** Every watch from now on fails this way, until called without one. */
  failEveryWatch(failure?: WatchFailure): void {
    this.everyWatchFails = failure;
  }

  /** Destroy every open watch connection mid-stream. */
  dropWatches(): void {
    for (const watcher of [...this.watchers]) {
      this.watchers.delete(watcher);
      watcher.res.destroy();
    }
  }

  /** End every open watch cleanly, as the server's timeoutSeconds does. */
  endWatches(): void {
    for (const watcher of [...this.watchers]) {
      this.watchers.delete(watcher);
      watcher.res.end();
    }
  }

  /** Write a raw line to every open watch (for unparsable input). */
  sendRaw(line: string): void {
    for (const watcher of this.watchers) write(watcher.res, line);
  }

  // --- fixtures ------------------------------------------------------------------------------------

  /** Serve a recorded list: its objects and its resourceVersion. */
  loadList(listJson: string): void {
    const list = JSON.parse(listJson) as { metadata: { resourceVersion: string }; items: KubeObject[] };
    this.objects.clear();
    for (const item of list.items) this.objects.set(keyOf(item), withKind(item));
    this.resourceVersion = Number(list.metadata.resourceVersion);
    this.oldestWatchable = this.resourceVersion;
  }

  /** Play one recorded watch line: applied to the objects, logged at its resourceVersion, sent as is. */
  replayWatchLine(line: string): void {
    const event = JSON.parse(line) as { type: string; object: KubeObject };
    const resourceVersion = Number(event.object.metadata.resourceVersion);
    if (!(resourceVersion > this.resourceVersion)) throw new Error(`replayed line goes back to ${resourceVersion}`);
    this.resourceVersion = resourceVersion;
    if (event.type === 'BOOKMARK') {
      for (const watcher of this.watchers) if (watcher.bookmarks) write(watcher.res, line);
      return;
    }
    if (event.type === 'DELETED') this.objects.delete(keyOf(event.object));
    else this.objects.set(keyOf(event.object), event.object);
    this.record({ resourceVersion, namespace: event.object.metadata.namespace, type: event.type, line });
  }

  private sendEndlessLine(res: http.ServerResponse): void {
    const index = this.endlessLineBytes.push(0) - 1;
    endlessLine(res, (total) => (this.endlessLineBytes[index] = total));
  }

  async close(): Promise<void> {
    for (const watcher of this.watchers) watcher.res.destroy();
    this.watchers.clear();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  // --- protocol ------------------------------------------------------------------------------------

  private emit(type: 'ADDED' | 'MODIFIED' | 'DELETED', object: KubeObject): void {
    this.resourceVersion += 1;
    const stored = withKind(structuredClone(object));
    stored.metadata.resourceVersion = String(this.resourceVersion);
    if (type === 'DELETED') this.objects.delete(keyOf(stored));
    else this.objects.set(keyOf(stored), stored);
    const line = JSON.stringify({ type, object: stored });
    this.record({ resourceVersion: this.resourceVersion, namespace: stored.metadata.namespace, type, line });
  }

  private record(event: LoggedEvent): void {
    this.log.push(event);
    for (const watcher of this.watchers) {
      if (watcher.namespace === undefined || watcher.namespace === event.namespace) write(watcher.res, event.line);
    }
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', this.url);
    const match = COLLECTION.exec(url.pathname);
    const query = Object.fromEntries(url.searchParams);
    const namespace = match?.[1] === undefined ? undefined : decodeURIComponent(match[1]);
    const watch = query.watch === 'true' || query.watch === '1';
    this.requests.push({ path: url.pathname, namespace, watch, query });
    if (req.method !== 'GET' || !match) {
      return status(res, 404, 'NotFound', `the server could not find the requested resource ${url.pathname}`);
    }
    if (watch) this.serveWatch(req, res, namespace, query);
    else this.serveList(req, res, namespace);
  }

  private serveList(req: http.IncomingMessage, res: http.ServerResponse, namespace: string | undefined): void {
    const failure = this.listFailures.shift();
    if (failure === 'drop') return void req.socket.destroy();
    if (failure === 'hang') return;
    if (failure === 'stall') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.write('{"kind":"EndpointSliceList","apiVersion":"discovery.k8s.io/v1","metadata":');
    }
    if (failure === 500) return status(res, 500, 'InternalError', 'etcdserver: request timed out');
    const items = [...this.objects.values()]
      .filter((o) => namespace === undefined || o.metadata.namespace === namespace)
      .sort((a, b) => keyOf(a).localeCompare(keyOf(b)))
      // List items carry no kind/apiVersion, as the real server sends them.
      .map(({ kind: _kind, apiVersion: _apiVersion, ...rest }) => rest);
    const body = JSON.stringify({
      kind: 'EndpointSliceList',
      apiVersion: API_VERSION,
      metadata: { resourceVersion: String(this.resourceVersion) },
      items,
    });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
  }

  private serveWatch(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    namespace: string | undefined,
    query: Record<string, string>,
  ): void {
    const failure = this.watchFailures.shift() ?? this.everyWatchFails;
    if (failure === 'drop') return void req.socket.destroy();
    if (failure === 500) return status(res, 500, 'InternalError', 'internal error');
    const asked = query.resourceVersion;
    const from = asked === undefined || asked === '' || asked === '0' ? this.resourceVersion : Number(asked);
    if (failure === 'http-410') return status(res, 410, 'Expired', tooOld(asked, this.oldestWatchable));
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    res.flushHeaders();
    if (failure === 'silent') return;
    if (failure === 'endless-line') return this.sendEndlessLine(res);
    if (failure === 'trickle') return trickle(res);
    if (failure === 'line-410' || from < this.oldestWatchable) {
      write(res, expiredLine(asked, this.oldestWatchable));
      return void res.end();
    }
    for (const event of this.log) {
      if (event.resourceVersion <= from) continue;
      if (namespace === undefined || namespace === event.namespace) write(res, event.line);
    }
    const watcher: Watcher = { res, namespace, bookmarks: query.allowWatchBookmarks === 'true' };
    this.watchers.add(watcher);
    res.on('close', () => this.watchers.delete(watcher));
  }
}

/** One line that never ends, written whenever the client has taken the last chunk, up to ENDLESS_LINE_CAP. */
function endlessLine(res: http.ServerResponse, onBytes: (total: number) => void): void {
  const chunk = Buffer.alloc(64 * 1024, 'x');
  let total = 0;
  const pump = () => {
    while (!res.destroyed && total < ENDLESS_LINE_CAP) {
      total += chunk.length;
      onBytes(total);
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
  };
  res.write('{"type":"ADDED","object":{"metadata":{"name":"');
  pump();
}

/** A byte of a line every 20 ms, never its end. */
function trickle(res: http.ServerResponse): void {
  const timer = setInterval(() => (res.destroyed ? clearInterval(timer) : res.write('x')), 20);
  res.on('close', () => clearInterval(timer));
}

function write(res: http.ServerResponse, line: string): void {
  if (!res.destroyed && !res.writableEnded) res.write(`${line}\n`);
}

function keyOf(object: KubeObject): string {
  return `${object.metadata.namespace}/${object.metadata.name}`;
}

function withKind(object: KubeObject): KubeObject {
  return { kind: KIND, apiVersion: API_VERSION, ...object };
}

function tooOld(asked: string | undefined, oldest: number): string {
  return `too old resource version: ${asked ?? ''} (${oldest - 1})`;
}

function expiredLine(asked: string | undefined, oldest: number): string {
  return JSON.stringify({
    type: 'ERROR',
    object: {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: tooOld(asked, oldest),
      reason: 'Expired',
      code: 410,
    },
  });
}

function status(res: http.ServerResponse, code: number, reason: string, message: string): void {
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code }));
}
