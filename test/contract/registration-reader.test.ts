// The heartbeat's one-pass reader (src/contract/registration-reader.ts) against the schema it stands in
// for: every body it accepts, registrationSchema accepts with the same registration and canonicalJson
// writes the same JSON; every body the schema refuses, it leaves to the schema (undefined).
import { describe, expect, it } from 'vitest';
import { MAX_LIST_ITEMS, MAX_MODEL_LENGTH, MAX_NAME_LENGTH, readRegistration, registrationSchema } from '../../src/contract/index.js';
import { canonicalJson } from '../../src/store/canonical-json.js';
import { registration } from '../support/registration.js';

/** The reader accepts `body`, exactly as the schema and canonicalJson would have it. */
function readsAsSchema(body: unknown) {
  const read = readRegistration(body);
  expect(read, `left ${JSON.stringify(body)?.slice(0, 200)} to the schema`).toBeDefined();
  const parsed = registrationSchema.parse(body);
  expect(read!.registration).toStrictEqual(parsed);
  // Same keys in the same order as zod writes them, so logs and replies read the same either way.
  expect(JSON.stringify(read!.registration)).toBe(JSON.stringify(parsed));
  expect(read!.json).toBe(canonicalJson(parsed));
  return read!;
}

/** The reader leaves `body` to the schema, which refuses it. */
function leavesToSchema(body: unknown) {
  expect(readRegistration(body), `accepted ${JSON.stringify(body)?.slice(0, 200)}`).toBeUndefined();
  expect(registrationSchema.safeParse(body).success).toBe(false);
}

const label = (n: number, c = 'a') => c.repeat(n);
const long = (n: number) => label(n, 'm');

describe('readRegistration: what it accepts is what the schema returns', () => {
  it('the full registration, with its canonical JSON (keys sorted at every depth)', () => {
    const read = readsAsSchema(registration());
    expect(read.json).toBe(
      '{"capabilities":["chat","kv-routing"],"capacity":[{"name":"gpus","value":8}],"cluster_id":"us-east-1",' +
        '"frontends":["http://10.0.0.7:8000"],"location":{"region":"us-east-1","zone":"us-east-1a"},' +
        '"model":"meta-llama/Llama-3.1-70B-Instruct","name":"llama-70b","namespace":"llm","relay":"http://10.0.0.9:9000"}',
    );
  });

  it('the optional fields left out: defaults filled in, no relay', () => {
    const read = readsAsSchema(
      registration({ capabilities: undefined, capacity: undefined, location: undefined, frontends: undefined, relay: undefined }),
    );
    expect(read.registration).toStrictEqual({
      cluster_id: 'us-east-1',
      namespace: 'llm',
      name: 'llama-70b',
      model: 'meta-llama/Llama-3.1-70B-Instruct',
      capabilities: [],
      capacity: [],
      location: {},
      frontends: [],
    });
    expect(read.json).toBe(
      '{"capabilities":[],"capacity":[],"cluster_id":"us-east-1","frontends":[],"location":{},' +
        '"model":"meta-llama/Llama-3.1-70B-Instruct","name":"llama-70b","namespace":"llm"}',
    );
  });

  it.each([
    ['region only', { region: 'eu-west-1' }, '{"region":"eu-west-1"}'],
    ['zone only', { zone: 'eu-west-1b' }, '{"zone":"eu-west-1b"}'],
    ['both, written zone first', { zone: 'z', region: 'r' }, '{"region":"r","zone":"z"}'],
    ['empty strings', { region: '', zone: '' }, '{"region":"","zone":""}'],
    ['at the length limit', { region: long(MAX_NAME_LENGTH) }, `{"region":"${long(MAX_NAME_LENGTH)}"}`],
  ])('location: %s', (_what, location, json) => {
    expect(readsAsSchema(registration({ location })).json).toContain(`"location":${json},`);
  });

  it('capacity: several items, keys written in any order, numbers as JSON writes them', () => {
    const capacity = [
      { value: 0.5, name: 'gpus' },
      { name: 'kv "cache" \\ bytes', value: -1e21 },
      { name: 'zero', value: -0 },
    ];
    const read = readsAsSchema(registration({ capacity }));
    expect(read.json).toContain(
      '"capacity":[{"name":"gpus","value":0.5},{"name":"kv \\"cache\\" \\\\ bytes","value":-1e+21},{"name":"zero","value":0}],',
    );
  });

  it('the limits themselves: names, model, list lengths', () => {
    const at253 = [label(63), label(63), label(63), label(61)].join('.');
    readsAsSchema(registration({ cluster_id: at253, namespace: 'a', name: '0-9.z' }));
    readsAsSchema(registration({ model: long(MAX_MODEL_LENGTH), capabilities: [long(MAX_MODEL_LENGTH), 'x'] }));
    readsAsSchema(
      registration({
        capabilities: Array.from({ length: MAX_LIST_ITEMS }, (_, i) => `c${i}`),
        capacity: Array.from({ length: MAX_LIST_ITEMS }, (_, i) => ({ name: `n${i}`, value: i })),
        frontends: Array.from({ length: MAX_LIST_ITEMS }, (_, i) => `https://f${i}.example:8${i}`),
      }),
    );
  });

  it('urls: http and https, with ports, paths, user info and IPv6 hosts', () => {
    readsAsSchema(registration({ frontends: ['https://frontend.example/v1', 'http://[::1]:8000', 'http://u:p@h:1/x?y#z'], relay: 'HTTPS://R.example' }));
  });

  it('does not keep the caller’s arrays: the registration is its own', () => {
    const body = registration({ capabilities: ['chat'], frontends: ['http://a:1'] });
    const read = readsAsSchema(body);
    expect(read.registration.capabilities).not.toBe(body.capabilities);
    expect(read.registration.frontends).not.toBe(body.frontends);
  });
});

describe('readRegistration: every body the schema refuses is left to it', () => {
  const tooLongName = [label(63), label(63), label(63), label(62)].join('.');
  it.each([
    ['not an object', ['[]', 'null', '"x"', '7']],
    ['an unknown field', [registration({ extra: 1 })]],
    ['a missing field', [registration({ model: undefined }), registration({ name: undefined })]],
    ['cluster_id: empty, too long, upper case, whitespace, not a string', ['', tooLongName, 'Us-east', ' a', 'a ', 'a..b', '-a', 7, null]],
    ['namespace', ['', 'LLM', 'a_b', tooLongName, ['x']]],
    ['name', ['', 'a.', 'x/y', tooLongName, false]],
    ['model: empty, too long, not a string', ['', long(MAX_MODEL_LENGTH + 1), 3]],
    ['capabilities', [null, 'chat', 3, [''], [long(MAX_MODEL_LENGTH + 1)], [1], Array.from({ length: MAX_LIST_ITEMS + 1 }, () => 'c')]],
    [
      'capacity',
      [
        null,
        {},
        [null],
        [[]],
        [{ name: 'gpus' }],
        [{ value: 1 }],
        [{ name: '', value: 1 }],
        [{ name: long(MAX_MODEL_LENGTH + 1), value: 1 }],
        [{ name: 'gpus', value: '8' }],
        [{ name: 'gpus', value: Number.POSITIVE_INFINITY }],
        [{ name: 'gpus', value: Number.NaN }],
        [{ name: 'gpus', value: 1, unit: 'x' }],
        Array.from({ length: MAX_LIST_ITEMS + 1 }, () => ({ name: 'g', value: 1 })),
      ],
    ],
    ['location', [null, [], 'us', 7, true, { region: 1 }, { zone: null }, { region: long(MAX_NAME_LENGTH + 1) }, { zone: long(MAX_NAME_LENGTH + 1) }, { city: 'x' }]],
    [
      'frontends',
      [null, 'http://a', [''], ['ftp://a'], ['http://'], ['file:///x'], ['not a url'], [' http://a'], ['http://a '], [7], Array.from({ length: MAX_LIST_ITEMS + 1 }, () => 'http://a')],
    ],
    ['relay', [null, '', 'mailto:a@b', 'http://a\n', ['http://a']]],
  ] as Array<[string, unknown[]]>)('%s', (what, values) => {
    const field = what.split(':')[0]!;
    for (const value of values) {
      if (field === 'not an object') leavesToSchema(JSON.parse(value as string));
      else if (field === 'an unknown field' || field === 'a missing field') leavesToSchema(value);
      else leavesToSchema(registration({ [field]: value }));
    }
  });
});
