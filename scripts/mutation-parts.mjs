// The parts `npm run mutation` runs, one StrykerJS run each (scripts/mutation.mjs): the files a part
// mutates, and the unit test files that exercise them in process (`tests`, less `excludeTests`, and
// without the tests named in `skipTests`), and optionally how long past a test's own time a mutant may
// run before it counts as a timeout (`timeoutMS`, default 10 s: parts whose mutants often loop forever
// on a retry or a reconnect take less, so each such mutant costs seconds, not ten), and how many test
// runners it takes (`concurrency`, default 2, one a core: a part whose tests wait on real timers takes
// more). The parts marked `beside` run one after another, in the order below, in a lane of their own
// while the others run in turn, each on its `concurrency` runners (else one). A part's tests start no
// binary and no browser, so every mutant runs in seconds; the store part mutates only the parts of the
// Redis store that need no live Redis (keys, replies, URL parsing, canonical JSON), see docs/design.md
// "The store".
import { readFileSync } from 'node:fs';

// The route files whose OpenAPI operations (`export const …Operations: ApiOperation[] = [ … ];`, docs/
// contract.md §11) sit beside their handlers.
const ROUTE_FILES = ['src/http/pools.ts', 'src/http/ops.ts', 'src/http/debug.ts', 'src/http/routers.ts', 'src/metrics/routes.ts'];

/**
 * A route file in two mutation ranges (StrykerJS's `file:startLine-endLine`, lines counted from 1, both
 * inclusive): its operation declarations, and the rest. The declarations are evaluated once as the module
 * loads, so each of their mutants is *static*: StrykerJS cannot tell which tests cover it and runs every
 * test of its part. Against the handlers' tests that made the http part take 37 minutes; the
 * declarations are read only by the OpenAPI document, so their mutants go to the http-document part,
 * whose tests are the document's rules. Called when a part's `mutate` is read (a getter, read by
 * stryker.config.mjs in the checkout), never by the test runners' configuration, which reads the parts
 * inside StrykerJS's sandbox, where the route files are instrumented.
 */
function operationRanges(file) {
  const lines = readFileSync(new URL(`../${file}`, import.meta.url), 'utf8').split('\n');
  const start = lines.findIndex((line) => /^export const \w+Operations: ApiOperation\[\] = \[$/.test(line)) + 1;
  const end = start === 0 ? 0 : lines.indexOf('];', start) + 1;
  if (start === 0 || end === 0) throw new Error(`${file}: no \`export const …Operations: ApiOperation[] = [\` … \`];\` found`);
  const last = lines.at(-1) === '' ? lines.length - 1 : lines.length;
  return {
    declarations: `${file}:${start}-${end}`,
    rest: [`${file}:1-${start - 1}`, ...(end < last ? [`${file}:${end + 1}-${last}`] : [])],
  };
}

export const MUTATION_PARTS = {
  machines: {
    mutate: ['machines/**/*.ts'],
    tests: ['test/machines/**/*.test.ts'],
  },
  contract: {
    // The router schemas are the routers part's.
    mutate: ['src/contract/**/*.ts', '!src/contract/index.ts', '!src/contract/router.ts'],
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
    // region-feed.ts included: test/join/region-feed.test.ts and regions.test.ts drive its hold, drop and
    // refill in process, over memory stores that a test cuts off.
    // The routers' join is the routers part's.
    mutate: ['src/join/**/*.ts', '!src/join/router-join.ts'],
    tests: ['test/join/**/*.test.ts'],
    // Its tests wait on real timers (holds, drops, renewal windows): on two runners the cores sat 60 to 75 %
    // idle and the part took 34 minutes; on four, 13 min 46 s, join.ts at 82.8 % as on two.
    concurrency: 4,
  },
  // A full run: 84.4 % (relay.ts 83.5 %); with the scripted tests and the equivalent mutants marked, 98.1 %.
  relay: {
    mutate: ['src/relay/**/*.ts', '!src/relay/index.ts'],
    // Its tests mostly wait on real timers (a Redis paused past a lease, replicas that never answer, renewals
    // at an interval; its test files take 28 s, 8.7 s of it on the CPU): run beside the other parts, it
    // leaves the CPU to them. On one runner it took 55 minutes in CI, as long as all the others in turn;
    // on two it waits out twice as many timers at once for little more CPU.
    beside: true,
    concurrency: 2,
    timeoutMS: 5000,
    tests: ['test/relay/**/*.test.ts', 'test/tls/mtls.test.ts'],
    // Replicas as binaries over Redis; and `poolscope simulate` (the command's churn, seconds of it per
    // run: the relay it drives is the one the other files pin).
    excludeTests: ['test/relay/cli.test.ts', 'test/relay/replicas.test.ts', 'test/relay/simulate.test.ts'],
    // A replica whose Redis is paused: the other fail-over tests pin the same rotation in process.
    skipTests: ['to the next replica on a 503'],
  },
  // The first full run, on four runners: 61.81 % of 1,304 in 33 minutes (the router heartbeat and map 0 %,
  // reached only through the commands). With a test of each piece on its own (the transport, the router
  // heartbeat and map, the stream session, the one-shot read, the watch's status and reconnects, the SSE
  // parser's edges): 93.42 % of 1,306 in 19 minutes, every file at 83.7 % or more (router-heartbeat.ts;
  // with its rounds ended on one bound and its jitter read at the timer, 97.6 %).
  // Like the relay part it mostly waits, so it runs beside the parts in turn, after the relay part (one
  // part at a time in that lane): CI's time is then that of the longer lane, not the sum of both.
  client: {
    beside: true,
    mutate: ['src/client/**/*.ts', '!src/client/index.ts'],
    // Its retry and reconnect loops: a mutant that breaks them spins until the timeout.
    timeoutMS: 5000,
    // With the client commands' error lines (in process): each TLS failure a client can meet, over sockets.
    tests: ['test/client/**/*.test.ts', 'test/tls/mtls.test.ts', 'test/cli/client-errors.test.ts'],
    excludeTests: [
      // The package's exports of dist/ (a build), and replicas as binaries over Redis.
      'test/client/exports.test.ts',
      'test/client/watch-replicas.test.ts',
    ],
    // Seconds each of a command's and a relay's repeated refusals: the scripted tests pin the same rules.
    skipTests: ['and it keeps trying', 'backs off, growing to its cap'],
    // Its tests mostly wait (reconnects, polls, streams held): four runners, as join and http-streams.
    concurrency: 4,
  },
  // The routers' join and schemas. The first full run: 29.76 % of 289 (router-join.ts 29.7 %), its tests
  // reaching the join only through services. With a test of the join on its own (test/routers/router-join
  // *.test.ts: who lists a router, its lease regions, completeness, a region held, dropped and refilled,
  // stale due lapses, unreadable entries) and of the schemas' rules: 94.46 % of 289 in 5 minutes on two
  // runners; with its equivalent mutants marked (and a check that only served the type dropped), 99.63 %
  // of 267 in 4.7 minutes: contract/router.ts 100 %, router-join.ts 99.6 % (the one left: `<` of two
  // region names made `<=`, equivalent, the names being one Map's keys). In CI one more survived by
  // chance: a followed region's backoff (0.25 s doubling to 1 s) made the store's (to 2 s), which only the
  // fourth retry tells apart; the retry test now waits for it: 99.63 % again, in 5.8 minutes.
  // Its tests wait on leases, holds and refills, so it is third in the lane beside the parts in turn.
  routers: {
    beside: true,
    mutate: ['src/join/router-join.ts', 'src/contract/router.ts'],
    tests: ['test/routers/router-join*.test.ts', 'test/routers/routes.test.ts', 'test/routers/static-flags.test.ts', 'test/contract/**/*.test.ts'],
    timeoutMS: 5000,
    concurrency: 2,
  },
  // src/http in three parts, each against the tests that drive its files in process, so a mutant runs
  // only tests that can see it: who may write what (tokens, scopes, certificates, the followed files), the
  // event streams (the watch hub, its replay, sinks and limits), and the routes and the server.
  // The first full run: 88.2 % of 574 (token-file.ts 77.8 %). With the edge tests and the equivalent
  // mutants marked, a full run on an idle machine: 92.3 % of 556, every file at 80.9 % or more
  // (write-authority.ts, 89 of 110), in 3 min 12 s on four runners; they kept both cores busy, so it runs
  // on the default two.
  'http-auth': {
    mutate: [
      'src/http/auth.ts',
      'src/http/tokens.ts',
      'src/http/token-file.ts',
      'src/http/scopes.ts',
      'src/http/write-authority.ts',
      'src/http/certificate-scopes.ts',
    ],
    tests: [
      'test/http/auth.test.ts',
      'test/http/auth-token-file.test.ts',
      'test/http/token-file-edges.test.ts',
      'test/http/write-authority.test.ts',
      'test/http/auth-edges.test.ts',
      'test/http/scoped-writes.test.ts',
      'test/http/scopes.test.ts',
      'test/tls/scoped-certificates.test.ts',
    ],
    timeoutMS: 5000,
  },
  // A full run: 62.1 % of 828 (static mutants of the operation declarations, the probes, the heartbeat's
  // header rules and fast path, the listener untested in process); with the document rule and the probes'
  // tests, 86.6 % of 836 in 37 minutes on four runners (heartbeat.ts 77.7, server.ts 65.9). Without the
  // operation declarations (the http-document part's now), on four runners: 90.92 % of 650 in 18.7 minutes,
  // but 106 detections were timeouts, 88 of them static mutants; on two runners (one a core, no load
  // timeouts): 84.00 % in 22.5 minutes, app.ts 64.5 %, list-headers.ts 66.7 %, pools.ts 71.4 %. So the
  // four-runner figure was the load's. A static mutant here is mostly code the test files run in
  // `beforeAll` (building the service), which StrykerJS counts as outside any test, so each runs every
  // test of the part. list-headers.ts went to http-document (only the document reads it); pools.ts and
  // app.ts got tests that build their routes per test (pools-routes, app-wiring): on two runners
  // 89.67 % of 629 in 15.4 minutes, every file at 81.8 % or more (app.ts 94.3, pools.ts 87.3). With the
  // heartbeat's fast path and the listener tested at their edges (heartbeat.ts 88.2 -> 98.6, server.ts
  // 81.8 -> 88.6): 93.82 % of 615 in 17 minutes on two runners, every file at 87.3 % or more. In a whole
  // CI run, 96.31 % of 596 in 18.4 minutes, but CI took 92.7 minutes. With each mutant's tests in one
  // module graph (vitest.mutation.config.ts), 96.14 % of 596 in 11.3 minutes, every file at 88.6 % or more.
  http: {
    get mutate() {
      return [
        'src/http/app.ts',
        ...operationRanges('src/http/pools.ts').rest,
        'src/http/heartbeat.ts',
        'src/http/conditional.ts',
        ...operationRanges('src/http/ops.ts').rest,
        ...operationRanges('src/http/debug.ts').rest,
        'src/http/errors.ts',
        'src/http/server.ts',
        // Not src/http/connection-limits.ts: its refusals hang on the process's descriptor limit (`ulimit -n`,
        // read at start: EMFILE is only reached by a process of its own) and on timers of 10 to 65 s;
        // test/http/connection-limits.test.ts drives it against the binary with a lowered limit.
      ];
    },
    tests: [
      'test/http/heartbeat.test.ts',
      'test/http/heartbeat-fast-path.test.ts',
      'test/http/heartbeat-headers.test.ts',
      'test/http/heartbeat-outcomes.test.ts',
      'test/http/conditional.test.ts',
      'test/http/pools-conditional.test.ts',
      // The routes built per test: the size check at its edge, its outcome, the drain's end of streams.
      'test/http/pools-routes.test.ts',
      // The app built per test: its error renderer, 404, which refused write counts, keep-alive, /debug's limit.
      'test/http/app-wiring.test.ts',
      'test/http/http-rfc.test.ts',
      'test/http/ops.test.ts',
      'test/http/ops-answers.test.ts',
      'test/http/auth.test.ts',
      'test/http/scoped-writes.test.ts',
      'test/debug/routes.test.ts',
      // /debug/pools built per test: its order and its 404.
      'test/debug/debug-list.test.ts',
      'test/debug/page-files.test.ts',
      'test/http/errors.test.ts',
      'test/metrics/metrics.test.ts',
      // The document only: prism and the generated client's compile run processes of their own.
      'test/openapi/openapi.test.ts',
      'test/http/server.test.ts',
      // The server over TLS, with and without client certificates.
      'test/tls/mtls.test.ts',
    ],
    skipTests: ['serves the page and its files from this origin only'],
    timeoutMS: 5000,
  },
  // Every route file's operation declarations (operationRanges above), against the rules of the document
  // built from them (test/openapi/openapi.test.ts: it validates, lists every route the app serves and no
  // other, and gives every operation and response what docs/contract.md §11 asks) and against what the
  // routes answer (test/openapi/document-answers.test.ts). With them the lists' response headers
  // (src/http/list-headers.ts), which only the document reads: in the http part its mutants survived
  // (66.7 %), since no handler's test reads a header's description.
  'http-document': {
    get mutate() {
      return [...ROUTE_FILES.map((file) => operationRanges(file).declarations), 'src/http/list-headers.ts'];
    },
    tests: ['test/openapi/openapi.test.ts', 'test/openapi/document-answers.test.ts'],
    // Every mutant is static, so each runs both files in a fresh module graph (about 8 s, mostly waiting
    // on the runner, not the CPU): two runners left the cores idle and took 14 minutes, four take 4.5.
    concurrency: 4,
    timeoutMS: 5000,
  },
  store: {
    mutate: [
      'src/store/memory.ts',
      'src/store/memory-change-log.ts',
      'src/store/canonical-json.ts',
      'src/store/types.ts',
      'src/store/redis/keys.ts',
      'src/store/redis/replies.ts',
      'src/store/redis/shared-strings.ts',
      'src/store/redis/url.ts',
    ],
    tests: [
      'test/store/memory.test.ts',
      'test/store/memory-edges.test.ts',
      'test/store/redis-keys.test.ts',
      'test/store/redis-url.test.ts',
      'test/store/redis-replies.test.ts',
      'test/store/shared-strings.test.ts',
      'test/store/canonical-json.test.ts',
      'test/store/memory-change-log.test.ts',
      'test/store/redis-url-edges.test.ts',
      'test/store/store-errors.test.ts',
    ],
    // Seconds of churn on real clocks from three replicas at once: slow per mutant, and on a loaded machine
    // its sweeps can end before the last leases lapse, so it fails the initial run. The contract's other
    // tests pin the same event rules one case at a time.
    skipTests: ['never misses or doubles an event under concurrent heartbeats'],
  },
  // Full runs in one module graph on two runners: 71.91 % of 470 in 23.7 minutes (watch-sink.ts 59.2, the
  // Node sink reached only through the binary); with each piece tested on its own (the sinks, the SSE
  // bytes, the gate, the subscription stream, the hub's life) 88.51 % in 21.5 minutes, watch-hub.ts at
  // 79.4 %. On four runners, without the EventSource's 5 s back-off in each mutant's run: 88.72 % in
  // 11.7 minutes; with the fan-out's slices tested (watch-hub-slices): 95.70 % of 465 in 11.0 minutes,
  // every file at 83.3 % or more (watch-hub.ts 96.7). On a slower machine a whole `.ci/run` with it ran
  // the parts before it so slowly (join 19 minutes, http-auth 7) that they alone came near CI's 90.
  // Last of the parts in turn: the lane beside them (relay, client, then routers) is then near its end (its
  // last part, routers, on two runners for about five minutes), so its four runners soon have both cores.
  'http-streams': {
    mutate: [
      'src/http/watch-hub.ts',
      'src/http/watch-replay.ts',
      'src/http/watch-sink.ts',
      'src/http/stream-gate.ts',
      'src/http/queued-sse.ts',
      'src/http/sse.ts',
      'src/http/watch.ts',
    ],
    tests: [
      'test/http/watch.test.ts',
      'test/http/watch-hub.test.ts',
      // Each sink on its own: a Node server's socket (HTTP/1.1 and 1.0) and the ReadableStream.
      'test/http/watch-sink.test.ts',
      'test/http/sse.test.ts',
      'test/http/stream-gate.test.ts',
      'test/http/queued-sse.test.ts',
      'test/http/watch-hub-lifecycle.test.ts',
      // The fan-out's slices: 500 streams or the slice's time a turn, a resync body written over turns.
      'test/http/watch-hub-slices.test.ts',
      'test/http/watch-fanout.test.ts',
      'test/http/watch-resume.test.ts',
      'test/http/sse-clients.test.ts',
      'test/http/debug-stream-limits.test.ts',
      'test/debug/routes.test.ts',
    ],
    // 5,000 streams of the real binary, and Chromium's EventSource (a browser): the in-process tests of the
    // same files pin the fan-out and the SSE bytes. The /debug page's files are built into dist/, which the
    // sandbox leaves out.
    // And the standard EventSource refused, then let in: 5 s of it is the back-off it waits out, in every
    // mutant's run that reaches the gate; the refusal's bytes (`retry:` of the back-off, `overloaded`)
    // are pinned in process by test/http/sse.test.ts and test/http/stream-gate.test.ts.
    skipTests: [
      '5,000 watchers of the real binary',
      "Chromium's EventSource",
      'serves the page and its files from this origin only',
      'it stays CONNECTING and gets in by itself',
    ],
    // Its tests mostly wait (streams, timers): on two runners the cores sat more than half idle.
    concurrency: 4,
    timeoutMS: 5000,
  },
};

export const PART_NAMES = Object.keys(MUTATION_PARTS);

/**
 * Parts `npm run mutation` (and so CI) runs when none is named: every part but those still `unproven`, whose
 * full run has not yet shown every file at THRESHOLDS.file within CI's time; they run when named.
 */
export const DEFAULT_PARTS = PART_NAMES.filter((name) => MUTATION_PARTS[name].unproven === undefined);

/** Mutation score thresholds (%): a run fails when the whole scores below `break`, or any one file below `file`. */
export const THRESHOLDS = { high: 95, low: 90, break: 90, file: 80 };

/** The part named by POOLSCOPE_MUTATION_PART, which stryker.config.mjs and vitest.mutation.config.ts read. */
export function currentPart() {
  const name = process.env.POOLSCOPE_MUTATION_PART;
  const part = name === undefined ? undefined : MUTATION_PARTS[name];
  if (part === undefined) {
    throw new Error(`POOLSCOPE_MUTATION_PART must be one of ${PART_NAMES.join(', ')} (got ${name ?? 'nothing'})`);
  }
  // Its properties as they are: a getter (a `mutate` read from the files) is read only when used.
  return Object.defineProperties({ name }, Object.getOwnPropertyDescriptors(part));
}
