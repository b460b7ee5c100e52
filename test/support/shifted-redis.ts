// A real redis-server whose wall clock a test can step: clock-shim.c, compiled here with the system's C
// compiler (once per test process) and loaded with LD_PRELOAD, adds an offset read from a file to Redis's
// wall clock (TIME, key expiry, stream ids), as an NTP step or an operator's `date -s` would, while its
// monotonic clock runs on. `shift(ms)` rewrites the file and waits until Redis TIME shows the new offset.
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { startPrivateRedis, type PrivateRedis, type StartPrivateRedisOptions } from './redis-server.js';
import { waitFor } from './wait.js';

const SOURCE = fileURLToPath(new URL('./clock-shim.c', import.meta.url));
let compiled: Promise<string> | undefined;

/** The shim's shared object, compiled on first use (`cc` must be installed: .ci/run sees to it). */
export function clockShim(): Promise<string> {
  compiled ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), 'poolscope-clock-shim-'));
    const out = join(dir, 'clock-shim.so');
    // Readable by a containerised Redis's own user too (TEST_REDIS=container mounts the folder).
    await chmod(dir, 0o755);
    await promisify(execFile)('cc', ['-shared', '-fPIC', '-O2', '-Wall', '-Werror', '-o', out, SOURCE, '-ldl']);
    return out;
  })();
  return compiled;
}

export interface ShiftedRedis extends PrivateRedis {
  /** The offset now in force (ms; negative: behind the real clock). */
  readonly offsetMs: number;
  /** Step Redis's wall clock to `offsetMs` from the real one; resolves once Redis TIME shows it (±250 ms). */
  shift(offsetMs: number): Promise<void>;
  /** Redis TIME minus this process's wall clock (ms), as measured now (half a round trip of error). */
  measureOffsetMs(): Promise<number>;
}

/** A private redis-server (startPrivateRedis) with the clock shim loaded, starting at `offsetMs`. */
export async function startShiftedRedis(offsetMs = 0, options: StartPrivateRedisOptions = {}): Promise<ShiftedRedis> {
  const shim = await clockShim();
  const dir = await mkdtemp(join(tmpdir(), 'poolscope-clock-'));
  await chmod(dir, 0o755);
  const file = join(dir, 'offset-ms');
  const write = async (ms: number) => {
    // Renamed into place: the shim never reads half a number.
    await writeFile(`${file}.next`, `${Math.round(ms)}\n`);
    await rename(`${file}.next`, file);
  };
  await write(offsetMs);
  const server = await startPrivateRedis({
    ...options,
    env: { ...options.env, LD_PRELOAD: shim, POOLSCOPE_CLOCK_OFFSET_FILE: file },
    shared: [...(options.shared ?? []), dirname(shim), dir],
  });
  let current = offsetMs;
  const measureOffsetMs = async () => {
    const client = new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await client.connect();
      const [seconds, micros] = await client.time();
      return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) - Date.now();
    } finally {
      client.disconnect();
    }
  };
  const shifted: ShiftedRedis = Object.assign(server, {
    get offsetMs() {
      return current;
    },
    async shift(ms: number) {
      current = ms;
      await write(ms);
      await waitFor(async () => Math.abs((await measureOffsetMs()) - ms) < 250, {
        timeoutMs: 5000,
        message: `Redis TIME ${ms} ms off the real clock`,
      });
    },
    measureOffsetMs,
  });
  await waitFor(async () => Math.abs((await measureOffsetMs()) - offsetMs) < 250, {
    timeoutMs: 5000,
    message: `Redis TIME ${offsetMs} ms off the real clock`,
  });
  return shifted;
}
