// The WAN of the regions benchmark in a process of its own: the TCP proxies that stand for the paths
// between regions (test/support/tcp-proxy.ts) and the tap in front of one of them (bench/lib/resp-tap.ts).
// Kept out of the benchmark process so that what that process does meanwhile (50 POSTs at a time, GETs of
// multi-MiB lists) never delays a byte on a path: a late timer here would read as a slow region there.
// IPC with the parent (bench/lib/wan.ts), every request answered with its id:
//   ← {id, type: 'proxy', target, delayMs, rateBytesPerSecond?} → {id, port, handle}
//   ← {id, type: 'tap', target}             → {id, port, handle}
//   ← {id, type: 'hold' | 'release', handle} → {id, at}   (at: epoch ms when it took effect)
//   ← {id, type: 'commands', handle, clear} → {id, commands} (times as epoch ms)
//   ← {id, type: 'close'}                   → {id}, then it exits
import { startRespTap, type RespTap } from '../lib/resp-tap.js';
import { startTcpProxy, type TcpProxy } from '../../test/support/tcp-proxy.js';

export type WanRequest = { id: number } & (
  | { type: 'proxy'; target: { host: string; port: number }; delayMs: number; rateBytesPerSecond?: number }
  | { type: 'tap'; target: { host: string; port: number } }
  | { type: 'hold' | 'release'; handle: number }
  | { type: 'commands'; handle: number; clear: boolean }
  | { type: 'close' }
);

export type WanReply = { id: number; error?: string; port?: number; handle?: number; at?: number; commands?: RespTap['commands'] };

const epochNow = () => performance.timeOrigin + performance.now();

async function main(): Promise<void> {
  if (!process.send) throw new Error('run as a child with an IPC channel');
  const proxies: TcpProxy[] = [];
  const taps: RespTap[] = [];
  const answer = (reply: WanReply) => process.send!(reply);
  const handle = async (request: WanRequest): Promise<WanReply> => {
    switch (request.type) {
      case 'proxy': {
        const proxy = await startTcpProxy({ target: request.target });
        proxy.setDelay(request.delayMs);
        proxy.setRate(request.rateBytesPerSecond ?? 0);
        proxies.push(proxy);
        return { id: request.id, port: proxy.port, handle: proxies.length - 1 };
      }
      case 'tap': {
        const tap = await startRespTap(request.target);
        taps.push(tap);
        return { id: request.id, port: tap.port, handle: taps.length - 1 };
      }
      case 'hold':
        proxies[request.handle]!.hold();
        return { id: request.id, at: epochNow() };
      case 'release':
        proxies[request.handle]!.release();
        return { id: request.id, at: epochNow() };
      case 'commands': {
        const tap = taps[request.handle]!;
        // Times on the epoch scale, which the parent turns into its own performance.now().
        const commands = tap.commands.map((c) => ({ ...c, sentAt: c.sentAt + performance.timeOrigin, repliedAt: c.repliedAt + performance.timeOrigin }));
        if (request.clear) tap.clear();
        return { id: request.id, commands };
      }
      case 'close':
        await Promise.all([...taps.map((t) => t.close()), ...proxies.map((p) => p.close())]);
        return { id: request.id };
    }
  };
  process.on('message', (request: WanRequest) => {
    handle(request).then(
      (reply) => {
        answer(reply);
        if (request.type === 'close') process.disconnect();
      },
      (error: unknown) => answer({ id: request.id, error: error instanceof Error ? error.message : String(error) }),
    );
  });
  answer({ id: 0 });
}

await main();
