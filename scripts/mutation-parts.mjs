// The parts `npm run mutation` runs, one StrykerJS run each (scripts/mutation.mjs): the files a part
// mutates, and the unit test files that exercise them in process (`tests`, less `excludeTests`, and
// without the tests named in `skipTests`). A part's tests start no Redis, no
// binary and no browser, so every mutant runs in seconds; the store part mutates only the parts of the
// Redis store that need no live Redis (keys, replies, URL parsing, canonical JSON), see docs/design.md
// "The store".
export const MUTATION_PARTS = {
  machines: {
    mutate: ['machines/**/*.ts'],
    tests: ['test/machines/**/*.test.ts'],
  },
  contract: {
    mutate: ['src/contract/**/*.ts', '!src/contract/index.ts'],
    tests: ['test/contract/**/*.test.ts'],
  },
  kube: {
    mutate: [
      'src/kube/**/*.ts',
      '!src/kube/index.ts',
      '!src/kube/types.ts',
      // Loads @kubernetes/client-node and reads KUBECONFIG: exercised only by the binary tests.
      '!src/kube/kube-config.ts',
      // The list/watch loop and its HTTP client (docs/design.md "Watch loops"): their tests drive a fake API
      // server over sockets on real timers, which is live I/O, seconds per mutant and timing-sensitive on a
      // loaded machine. What they decide is pure and mutated here: watch-outcome.ts, watch-event.ts,
      // quiet-reset-backoff.ts, slice-view.ts, slice-cache.ts, naming.ts, endpoints.ts.
      '!src/kube/slice-source.ts',
      '!src/kube/slice-api.ts',
    ],
    tests: ['test/kube/**/*.test.ts'],
    // Through the fake API server only, like the two files above.
    excludeTests: ['test/kube/slice-source*.test.ts', 'test/kube/slice-api.test.ts'],
  },
  join: {
    mutate: [
      'src/join/**/*.ts',
      // A region's feed around the store feed: its hold, drop and refill after a lost epoch are timers over
      // live Redis, exercised by test/regions (redis-server, WAN proxies) rather than in process, so most of
      // its mutants are covered by no test here (docs/design.md "Scale and regions").
      '!src/join/region-feed.ts',
    ],
    tests: ['test/join/**/*.test.ts'],
  },
  store: {
    mutate: [
      'src/store/memory.ts',
      'src/store/memory-change-log.ts',
      'src/store/canonical-json.ts',
      'src/store/types.ts',
      'src/store/redis/keys.ts',
      'src/store/redis/replies.ts',
      'src/store/redis/url.ts',
    ],
    tests: [
      'test/store/memory.test.ts',
      'test/store/redis-keys.test.ts',
      'test/store/redis-url.test.ts',
      'test/store/redis-replies.test.ts',
      'test/store/canonical-json.test.ts',
      'test/store/memory-change-log.test.ts',
      'test/store/redis-url-edges.test.ts',
    ],
    // Seconds of churn on real clocks from three replicas at once: slow per mutant, and on a loaded machine
    // its sweeps can end before the last leases lapse, so it fails the initial run. The contract's other
    // tests pin the same event rules one case at a time.
    skipTests: ['never misses or doubles an event under concurrent heartbeats'],
  },
};

export const PART_NAMES = Object.keys(MUTATION_PARTS);

/** Mutation score thresholds (%): below `break` a run fails. */
export const THRESHOLDS = { high: 95, low: 90, break: 90 };

/** The part named by POOLSCOPE_MUTATION_PART, which stryker.config.mjs and vitest.mutation.config.ts read. */
export function currentPart() {
  const name = process.env.POOLSCOPE_MUTATION_PART;
  const part = name === undefined ? undefined : MUTATION_PARTS[name];
  if (part === undefined) {
    throw new Error(`POOLSCOPE_MUTATION_PART must be one of ${PART_NAMES.join(', ')} (got ${name ?? 'nothing'})`);
  }
  return { name, ...part };
}
