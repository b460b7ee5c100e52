// N simulated PoolRelays against a service, for demos and load: each pool is a real relay (startRelay),
// and churn now and then stops one (its lease lapses), brings a stopped one back, changes a pool's
// capacity, or takes its frontends away and gives them back (frontendless). Choices come from one
// seeded random source, so a run can be repeated.
import type { Logger } from 'pino';
import type { RegistrationInput } from '../../contract/index.js';
import { HttpTransport, type HttpTransportOptions } from '../../client/http-transport.js';
import { startRelay, type Relay } from '../../relay/relay.js';
import { startRouterHeartbeat, type RouterHeartbeat } from '../../client/router-heartbeat.js';
import { sleep } from '../../util/backoff.js';

/** The seeded source (src/util/random.ts) `simulate --seed` hands the Simulation. */
export { seededRandom } from '../../util/random.js';

const CLUSTERS = ['us-east-1', 'us-west-2', 'eu-west-1', 'ap-southeast-1'];
const MODELS = [
  { id: 'meta-llama/Llama-3.1-70B-Instruct', short: 'llama-70b', gpus: 8 },
  { id: 'meta-llama/Llama-3.1-8B-Instruct', short: 'llama-8b', gpus: 1 },
  { id: 'Qwen/Qwen2.5-72B-Instruct', short: 'qwen-72b', gpus: 8 },
  { id: 'mistralai/Mixtral-8x7B-Instruct-v0.1', short: 'mixtral', gpus: 4 },
  { id: 'deepseek-ai/DeepSeek-V3', short: 'deepseek-v3', gpus: 16 },
];
/** At most this share of the pools is stopped at once, so the list stays populated. */
const MAX_STOPPED_SHARE = 0.25;

export interface SimulationOptions extends HttpTransportOptions {
  servers: readonly string[];
  /** Replicas of other regions, for every relay (docs/contract.md §7). */
  fallbackServers?: readonly string[];
  pools: number;
  /** The number of the first pool (default 0): simulations in two regions take disjoint ranges. */
  firstPool?: number;
  /** Mean time between churn events; 0 for none. */
  churnIntervalMs: number;
  random: () => number;
  logger: Logger;
  /** Logger for the relays (quieter than the simulation's own by default). */
  relayLogger: Logger;
  /** Simulated Global Router replicas registering with POST /routers (docs/contract.md §10); default none. */
  routers?: number;
}

interface SimulatedPool {
  registration: RegistrationInput & { capacity: { name: string; value: number }[]; frontends: string[] };
  /** The frontends the pool has when it has them (churn may take them away). */
  frontends: string[];
  relay: Relay | undefined;
}

export class Simulation {
  private readonly pools: SimulatedPool[];
  private readonly transport: HttpTransport;
  private readonly stopping = new AbortController();
  private churn: Promise<void> = Promise.resolve();
  private readonly routers: RouterHeartbeat[] = [];

  constructor(private readonly options: SimulationOptions) {
    this.transport = new HttpTransport(options);
    this.pools = Array.from({ length: options.pools }, (_, i) => simulatedPool((options.firstPool ?? 0) + i));
  }

  /** Starts every relay (spread over the first second) and the churn loop. */
  async start(): Promise<void> {
    // The routers first: a handful, spread over the regions of the pools' clusters.
    for (let i = 0; i < (this.options.routers ?? 0); i++) {
      const region = CLUSTERS[i % CLUSTERS.length]!;
      this.routers.push(
        startRouterHeartbeat({
          servers: this.options.servers,
          router: { id: `sim-router-${i}`, url: `http://10.255.${Math.floor(i / 250)}.${(i % 250) + 1}:9100`, region, zone: `${region}a` },
          token: this.options.token,
          ca: this.options.ca,
          cert: this.options.cert,
          key: this.options.key,
          logger: this.options.relayLogger,
        }),
      );
    }
    const spreadMs = this.pools.length > 1 ? 1000 / this.pools.length : 0;
    for (const pool of this.pools) {
      if (this.stopping.signal.aborted) return;
      this.startPool(pool);
      await sleep(spreadMs, this.stopping.signal);
    }
    this.options.logger.info(
      { pools: this.pools.length, churn_interval_ms: this.options.churnIntervalMs, servers: this.options.servers },
      'simulation running',
    );
    if (this.options.churnIntervalMs > 0) this.churn = this.churnLoop();
  }

  get running(): number {
    return this.pools.filter((pool) => pool.relay !== undefined).length;
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.churn;
    await Promise.all([...this.pools.map((pool) => pool.relay?.stop()), ...this.routers.map((router) => router.stop())]);
    this.transport.close();
  }

  private startPool(pool: SimulatedPool): void {
    pool.relay = startRelay({
      servers: this.options.servers,
      fallbackServers: this.options.fallbackServers,
      registration: pool.registration,
      transport: this.transport,
      // A thousand simulated relays need no router list each (a watch stream apiece).
      followRouters: false,
      // What was given, for the relays' next steps on a refusal (the shared transport sends it).
      token: this.options.token,
      ca: this.options.ca,
      logger: this.options.relayLogger,
      // Not the seeded source: the relays' jitter depends on timing, which would make churn unrepeatable.
    });
  }

  private async churnLoop(): Promise<void> {
    while (!this.stopping.signal.aborted) {
      // Exponential gaps around the mean, like independent events.
      const gap = -Math.log(1 - this.options.random()) * this.options.churnIntervalMs;
      await sleep(Math.min(gap, this.options.churnIntervalMs * 5), this.stopping.signal);
      if (this.stopping.signal.aborted) return;
      await this.churnOnce();
    }
  }

  private async churnOnce(): Promise<void> {
    const random = this.options.random;
    const stopped = this.pools.filter((pool) => pool.relay === undefined);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const pool = stopped.length >= this.pools.length * MAX_STOPPED_SHARE && stopped.length > 0 ? pick(stopped) : pick(this.pools);
    const key = `${pool.registration.cluster_id}/${pool.registration.namespace}/${pool.registration.name}`;
    if (pool.relay === undefined) {
      this.startPool(pool);
      this.options.logger.info({ pool: key }, 'churn: pool back');
      return;
    }
    const roll = random();
    if (roll < 0.4) {
      const relay = pool.relay;
      pool.relay = undefined;
      await relay.stop();
      this.options.logger.info({ pool: key }, 'churn: pool stopped (its lease will lapse)');
    } else if (roll < 0.8) {
      const gpus = pool.registration.capacity[0]!;
      const value = Math.max(1, gpus.value + (random() < 0.5 ? -1 : 1) * Math.max(1, Math.round(gpus.value / 2)));
      pool.registration = { ...pool.registration, capacity: [{ name: 'gpus', value }] };
      pool.relay.update(pool.registration);
      this.options.logger.info({ pool: key, gpus: value }, 'churn: capacity changed');
    } else {
      const frontends = pool.registration.frontends.length > 0 ? [] : pool.frontends;
      pool.registration = { ...pool.registration, frontends };
      pool.relay.update(pool.registration);
      this.options.logger.info({ pool: key, frontends: frontends.length }, frontends.length > 0 ? 'churn: frontends back' : 'churn: frontends gone');
    }
  }
}

/** The i-th simulated pool: models and clusters in turn, frontends on loopback addresses no one dials. */
function simulatedPool(i: number): SimulatedPool {
  const model = MODELS[i % MODELS.length]!;
  const clusterIndex = Math.floor(i / MODELS.length) % CLUSTERS.length;
  const cluster = CLUSTERS[clusterIndex]!;
  const host = `127.${10 + clusterIndex}.${Math.floor(i / 250) % 250}.${(i % 250) + 1}`;
  const frontends = [`http://${host}:8000`];
  return {
    registration: {
      cluster_id: cluster,
      namespace: 'llm',
      name: `${model.short}-${i}`,
      model: model.id,
      capabilities: i % 2 === 0 ? ['chat', 'kv-routing'] : ['chat'],
      capacity: [{ name: 'gpus', value: model.gpus }],
      location: { region: cluster, zone: `${cluster}${'abc'[i % 3]}` },
      frontends,
      relay: `http://${host}:9000`,
    },
    frontends,
    relay: undefined,
  };
}
