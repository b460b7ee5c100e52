// The Redis of a test file: `useRedis()` starts a redis-server of the file's (or the describe block's)
// own on a free 127.0.0.1 port before its tests and stops it after them, and gives every test a new
// random key prefix, so tests keep apart by prefix and share no data. The server can be paused, killed
// and restarted on its port (test/support/redis-server.ts).
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { randomPrefix, startPrivateRedis, type PrivateRedis } from './redis-server.js';

export interface UsedRedis extends Omit<PrivateRedis, 'stop'> {
  /** The running test's own key prefix. */
  readonly prefix: string;
}

export function useRedis(label = 'test'): UsedRedis {
  let server: PrivateRedis | undefined;
  let prefix = randomPrefix(label);
  beforeAll(async () => {
    server = await startPrivateRedis();
  });
  afterAll(async () => {
    await server?.stop();
  });
  beforeEach(() => {
    prefix = randomPrefix(label);
  });
  const running = (): PrivateRedis => {
    if (!server) throw new Error('useRedis(): the server starts in beforeAll, so use it in hooks and tests');
    return server;
  };
  return {
    get url() {
      return running().url;
    },
    get port() {
      return running().port;
    },
    get prefix() {
      return prefix;
    },
    kill: () => running().kill(),
    restart: () => running().restart(),
    pause: () => running().pause(),
    resume: () => running().resume(),
  };
}
