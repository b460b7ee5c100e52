// Starts slice sources against FakeKubeApi servers and tears every one down after each test.
import { afterEach } from 'vitest';
import { createSliceSource, type KubeSliceSource, type SliceSourceOptions } from '../../src/kube/slice-source.js';
import { sleep } from '../../src/util/backoff.js';
import { FakeKubeApi } from '../support/fake-kube-api.js';
import { captureLogs, type LogLine } from '../support/logs.js';
import { DEFAULT_SUFFIXES, fixtureText, RecordingListener } from './helpers.js';

export interface RunningSource {
  fake: FakeKubeApi;
  source: KubeSliceSource;
  listener: RecordingListener;
  /** The backoff delays the source asked for, in order. */
  delays: number[];
  logs: LogLine[];
}

const running: Array<{ fake: FakeKubeApi; source?: KubeSliceSource }> = [];

afterEach(async () => {
  for (const { fake, source } of running.splice(0)) {
    await source?.stop();
    await fake.close();
  }
});

export async function startFake(options: { resourceVersion?: number } = {}): Promise<FakeKubeApi> {
  const fake = await FakeKubeApi.start(options);
  running.push({ fake });
  return fake;
}

/** Start a source on `fake` with a fast, recorded backoff (100 ms doubling to 800 ms, no jitter, 1 ms real wait). */
export function startSource(fake: FakeKubeApi, overrides: Partial<SliceSourceOptions> = {}): RunningSource {
  const delays: number[] = [];
  const { logger, lines } = captureLogs();
  const source = createSliceSource({
    kubeConfig: fake.kubeConfig(),
    mode: 'mcs',
    ...DEFAULT_SUFFIXES,
    frontendPortName: 'http',
    logger,
    backoff: {
      initialMs: 100,
      maxMs: 800,
      jitter: 0,
      sleep: async (ms, signal) => {
        delays.push(ms);
        await sleep(1, signal);
      },
    },
    rewatchGraceMs: 10,
    ...overrides,
  });
  const entry = running.find((r) => r.fake === fake);
  if (entry) entry.source = source;
  else running.push({ fake, source });
  const listener = new RecordingListener();
  source.start(listener);
  return { fake, source, listener, delays, logs: lines };
}

/** A fixture file as a Kubernetes object for FakeKubeApi. */
export function fixtureObject(path: string): { metadata: { name: string; namespace: string } } & Record<string, unknown> {
  return JSON.parse(fixtureText(path)) as { metadata: { name: string; namespace: string } } & Record<string, unknown>;
}
