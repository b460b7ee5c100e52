// Which replica to talk to next, for the relay and the router client alike. Each client starts at a random
// replica (so a fleet of clients spreads over the replicas), stays on it while it answers (its keep-alive
// connection is reused), and moves to the next one on a failure at once. Only when every replica has
// failed in a row is it time to back off.

export interface ReplicaRotationOptions {
  servers: readonly string[];
  /** Random source in [0, 1) for the starting replica (injectable for tests). */
  random?: () => number;
}

export class ReplicaRotation {
  readonly servers: readonly string[];
  private index: number;
  private failuresInRow = 0;

  constructor(options: ReplicaRotationOptions) {
    this.servers = normalizeServers(options.servers);
    const random = options.random ?? Math.random;
    this.index = Math.min(this.servers.length - 1, Math.floor(random() * this.servers.length));
  }

  /** The base URL to use now, without a trailing slash. */
  get current(): string {
    return this.servers[this.index]!;
  }

  /** The current replica answered: stay on it. */
  succeeded(): void {
    this.failuresInRow = 0;
  }

  /**
   * The current replica failed: move to the next. Returns true when every replica has now failed in a
   * row (a full round), so the caller should back off before trying again.
   */
  failed(): boolean {
    this.index = (this.index + 1) % this.servers.length;
    this.failuresInRow += 1;
    if (this.failuresInRow < this.servers.length) return false;
    this.failuresInRow = 0;
    return true;
  }
}

/** Checks that every server is an http(s) URL and drops trailing slashes; throws naming the bad one. */
export function normalizeServers(servers: readonly string[]): string[] {
  if (servers.length === 0) throw new TypeError('at least one server URL is required');
  return servers.map((server) => {
    let url: URL;
    try {
      url = new URL(server);
    } catch {
      throw new TypeError(`${JSON.stringify(server)} is not a URL (e.g. http://poolscope:8080)`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new TypeError(`${JSON.stringify(server)} must be an http:// or https:// URL`);
    }
    if (url.search !== '' || url.hash !== '') throw new TypeError(`${JSON.stringify(server)} must not have a query or fragment`);
    return url.href.replace(/\/+$/, '');
  });
}
