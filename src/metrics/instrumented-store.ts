// A RegistrationStore that times every command it forwards (poolscope_store_command_seconds) and
// reports the heartbeats it took (the /debug lease countdown). The watch stream is long-lived, so it is
// forwarded untimed; so are the store's own counters and its availability signal.
import type { HeartbeatResult, RegistrationStore } from '../store/types.js';

export interface InstrumentedStoreOptions {
  store: RegistrationStore;
  observe: (command: string, outcome: 'ok' | 'error', seconds: number) => void;
  /** A heartbeat the store accepted. */
  onHeartbeat?: (result: HeartbeatResult) => void;
}

export function instrumentStore(options: InstrumentedStoreOptions): RegistrationStore {
  const { store, observe, onHeartbeat } = options;
  async function timed<T>(command: string, run: () => Promise<T>): Promise<T> {
    const start = process.hrtime.bigint();
    const seconds = () => Number(process.hrtime.bigint() - start) / 1e9;
    try {
      const value = await run();
      observe(command, 'ok', seconds());
      return value;
    } catch (error) {
      observe(command, 'error', seconds());
      throw error;
    }
  }
  return {
    get kind() {
      return store.kind;
    },
    get forgetsOnRestart() {
      return store.forgetsOnRestart;
    },
    heartbeat: async (registration, canonical, knownVersion) => {
      const result = await timed('heartbeat', () => store.heartbeat(registration, canonical, knownVersion));
      onHeartbeat?.(result);
      return result;
    },
    snapshot: (onRead) => timed('snapshot', () => store.snapshot(onRead)),
    watch: (position, signal, epoch, reached) => store.watch(position, signal, epoch, reached),
    sweep: () => timed('sweep', () => store.sweep()),
    dueLapses: (graceMs) => timed('due', () => store.dueLapses(graceMs)),
    ...(store.renewalWindow ? { renewalWindow: () => timed('renewal window', () => store.renewalWindow!()) } : {}),
    ...(store.onAvailable ? { onAvailable: store.onAvailable.bind(store) } : {}),
    ...(store.stats ? { stats: store.stats.bind(store) } : {}),
    close: () => store.close(),
  };
}
