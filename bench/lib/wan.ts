// Drives bench/probes/wan.ts: the proxies between regions (and the tap) in a process of their own, so
// that the benchmark's own load never delays a byte on a path. Times come back on this process's
// performance.now() scale (both processes read the same clock; the child reports epoch ms).
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { WanReply, WanRequest } from '../probes/wan.js';
import { childMessage, spawnTracked, stopChild } from './children.js';
import type { TappedCommand } from './resp-tap.js';

const PROBE = fileURLToPath(new URL('../probes/wan.ts', import.meta.url));

type Target = { host: string; port: number };
/** A request without its id (a distributive Omit, so each variant keeps its own fields). */
type Request = WanRequest extends infer R ? (R extends WanRequest ? Omit<R, 'id'> : never) : never;

export interface WanProxy {
  readonly port: number;
  /** Forward nothing either way from now on (sockets stay open); resolves with when it took effect. */
  hold(): Promise<number>;
  /** Forward again, the held bytes first; resolves with when it took effect. */
  release(): Promise<number>;
}

export interface WanTap {
  readonly port: number;
  /** The commands answered since the last clear (times on this process's performance.now() scale). */
  commands(options?: { clear?: boolean }): Promise<TappedCommand[]>;
  clear(): Promise<void>;
}

export interface Wan {
  /** A path to `target` adding `delayMs` each way and, with `rateBytesPerSecond`, carrying at most that each way. */
  proxy(target: Target, delayMs: number, rateBytesPerSecond?: number): Promise<WanProxy>;
  tap(target: Target): Promise<WanTap>;
  stop(): Promise<void>;
}

const fromEpoch = (epochMs: number) => epochMs - performance.timeOrigin;

export async function startWan(): Promise<Wan> {
  const child = spawnTracked(process.execPath, ['--import', 'tsx', PROBE], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  let nextId = 1;
  const ask = (request: Request) => {
    const id = nextId++;
    const answered = reply(child, id, () => stderr);
    child.send({ ...request, id } as WanRequest);
    return answered;
  };
  await reply(child, 0, () => stderr);
  return {
    async proxy(target, delayMs, rateBytesPerSecond) {
      const { port, handle } = await ask({ type: 'proxy', target, delayMs, rateBytesPerSecond });
      return {
        port: port!,
        hold: async () => fromEpoch((await ask({ type: 'hold', handle: handle! })).at!),
        release: async () => fromEpoch((await ask({ type: 'release', handle: handle! })).at!),
      };
    },
    async tap(target) {
      const { port, handle } = await ask({ type: 'tap', target });
      return {
        port: port!,
        async commands(options = {}) {
          const { commands } = await ask({ type: 'commands', handle: handle!, clear: options.clear ?? false });
          return commands!.map((c) => ({ ...c, sentAt: fromEpoch(c.sentAt), repliedAt: fromEpoch(c.repliedAt) }));
        },
        clear: async () => void (await ask({ type: 'commands', handle: handle!, clear: true })),
      };
    },
    async stop() {
      const asked = child.connected && (await ask({ type: 'close' }).then(() => true, () => false));
      await stopChild(child, { signal: asked ? null : 'SIGKILL', graceMs: 3000 });
    },
  };
}

function reply(child: ChildProcess, id: number, stderr: () => string): Promise<WanReply> {
  return childMessage(
    child,
    (message) => {
      const answer = message as WanReply;
      if (answer.id !== id) return undefined;
      if (answer.error !== undefined) throw new Error(`wan: ${answer.error}`);
      return answer;
    },
    `wan: no answer to request ${id}`,
    stderr,
  );
}
