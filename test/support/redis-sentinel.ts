// A Redis Sentinel watching a private redis-server as master `mymaster`, for testing the
// redis+sentinel:// URL form end to end.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startPrivateRedis, waitForPing, type PrivateRedis } from './redis-server.js';

export interface LocalRedisSentinel {
  /** redis+sentinel://127.0.0.1:<sentinel port>/mymaster */
  url: string;
  master: PrivateRedis;
  stop(): Promise<void>;
}

export async function startRedisSentinel(): Promise<LocalRedisSentinel> {
  const master = await startPrivateRedis();
  const dir = await mkdtemp(join(tmpdir(), 'poolscope-sentinel-'));
  let sentinel: ChildProcess | undefined;
  const killOnExit = () => sentinel?.kill('SIGKILL');
  process.once('exit', killOnExit);
  const stop = async () => {
    const running = sentinel;
    if (running && running.exitCode === null && running.signalCode === null) {
      const exited = new Promise((resolve) => running.once('exit', resolve));
      running.kill('SIGTERM');
      await exited;
    }
    process.off('exit', killOnExit);
    await master.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const port = await freePort();
    const config = join(dir, 'sentinel.conf');
    // Sentinel rewrites its configuration file, so it gets a file of its own.
    await writeFile(
      config,
      [`port ${port}`, 'bind 127.0.0.1', `dir ${dir}`, `sentinel monitor mymaster 127.0.0.1 ${master.port} 1`, ''].join('\n'),
    );
    sentinel = spawn('redis-server', [config, '--sentinel'], { stdio: 'ignore' });
    await waitForPing(port, sentinel);
    return { url: `redis+sentinel://127.0.0.1:${port}/mymaster`, master, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
