// A local Redis Cluster of three masters, for the store's one-hash-tag rule (docs/design.md "The store"):
// three redis-servers in cluster mode, joined with `redis-cli --cluster create`, ready once every node
// reports cluster_state:ok.
import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { promisify } from 'node:util';
import { startPrivateRedis, type PrivateRedis } from './redis-server.js';
import { waitFor } from './wait.js';

const run = promisify(execFile);

export interface LocalRedisCluster {
  /** redis+cluster://127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3 */
  url: string;
  nodes: PrivateRedis[];
  stop(): Promise<void>;
}

export async function startRedisCluster(options: { masters?: number } = {}): Promise<LocalRedisCluster> {
  const masters = options.masters ?? 3;
  const nodes: PrivateRedis[] = [];
  const stop = async () => void (await Promise.all(nodes.map((node) => node.stop())));
  try {
    for (let i = 0; i < masters; i += 1) {
      const port = await clusterPort();
      nodes.push(
        await startPrivateRedis({
          port,
          args: ['--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`, '--cluster-node-timeout', '2000'],
        }),
      );
    }
    const addresses = nodes.map((node) => `127.0.0.1:${node.port}`);
    await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes']);
    await waitForClusterOk(nodes);
    return { url: `redis+cluster://${addresses.join(',')}`, nodes, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function waitForClusterOk(nodes: PrivateRedis[]): Promise<void> {
  const info = (node: PrivateRedis) => run('redis-cli', ['-p', String(node.port), 'cluster', 'info']).then((r) => r.stdout);
  await waitFor(async () => (await Promise.all(nodes.map(info))).every((text) => text.includes('cluster_state:ok')), {
    timeoutMs: 15_000,
    intervalMs: 50,
    message: 'cluster_state:ok on every node',
  });
}

/** A free port P whose cluster bus port P + 10000 is free too. */
async function clusterPort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = 20_000 + Math.floor(Math.random() * 35_000);
    if ((await canListen(port)) && (await canListen(port + 10_000))) return port;
  }
  throw new Error('no free port pair for a cluster node');
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
