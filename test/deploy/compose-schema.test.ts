// Both Compose files checked by what defines them: the Compose Specification's JSON schema
// (compose-spec/compose-spec.json, vendored unchanged; compose-spec/SOURCE.md gives its source and
// version), with Ajv. The one Compose client Debian ships (docker-compose 1.29) predates `name:` and
// `configs.content`, so the schema, not a client, is the judge here.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { readYamlDocuments, REPO_ROOT } from './support.js';

const schema = JSON.parse(readFileSync(join(REPO_ROOT, 'test/deploy/compose-spec/compose-spec.json'), 'utf8')) as Record<string, unknown>;
// strict: false: the schema uses keywords of its own tooling (e.g. `deprecated`) that Ajv does not define.
const ajv = new Ajv({ allErrors: true, strict: false });
// The schema names draft-07 by its https address; Ajv knows draft-07 by its http one: the same meta-schema.
const draft07 = createRequire(import.meta.url)('ajv/dist/refs/json-schema-draft-07.json') as Record<string, unknown>;
ajv.addMetaSchema({ ...draft07, $id: schema.$schema as string });
const validate = ajv.compile(schema);

const errorsOf = (document: unknown) => (validate(document) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''} ${JSON.stringify(e.params)}`));

describe('the Compose files against the Compose Specification schema', () => {
  it.each(['docker-compose.yml', 'docker-compose.regions.yml'])('%s is valid', (file) => {
    const [document] = readYamlDocuments(file);
    expect(errorsOf(document)).toEqual([]);
  });

  it('the schema refuses what the specification does not allow (the check can fail)', () => {
    const [document] = readYamlDocuments('docker-compose.yml') as { services: Record<string, Record<string, unknown>> }[];
    const broken = structuredClone(document!);
    broken.services['poolscope-1']!.healthcheck = { test: ['CMD', 'true'], interval: 10 };
    broken.services.redis!.no_such_key = true;
    const errors = errorsOf(broken);
    expect(errors.some((e) => e.includes('/services/redis') && e.includes('no_such_key'))).toBe(true);
    expect(errors.some((e) => e.includes('/services/poolscope-1/healthcheck/interval'))).toBe(true);
  });
});
