// readRegistrationFile() in process: JSON by the name's ending (any case), YAML 1.2 otherwise, and a
// one-line RegistrationFileError naming the file for a file that cannot be read, is empty, does not parse,
// or holds something other than one object. (The binary's refusals of the same files: cli.test.ts.)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readRegistrationFile, RegistrationFileError } from '../../src/relay/registration-file.js';

const dir = mkdtempSync(join(tmpdir(), 'poolscope-registration-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
function file(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

async function refusal(path: string): Promise<RegistrationFileError> {
  const error = await readRegistrationFile(path).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(RegistrationFileError);
  expect((error as Error).name).toBe('RegistrationFileError');
  expect((error as Error).message).not.toContain('\n');
  return error as RegistrationFileError;
}

describe('readRegistrationFile', () => {
  it('reads YAML 1.2 (yes stays a string) and JSON, whatever the case of .json', async () => {
    expect(await readRegistrationFile(file('a.yaml', 'name: x\nflag: yes\ncapacity:\n  - {name: gpus, value: 8}\n'))).toEqual({
      name: 'x',
      flag: 'yes',
      capacity: [{ name: 'gpus', value: 8 }],
    });
    expect(await readRegistrationFile(file('b.JSON', '{"name": "x", "n": 1}'))).toEqual({ name: 'x', n: 1 });
    // JSON read as YAML would pass; YAML read as JSON would not: the ending decides.
    const yamlNamedJson = file('c.json', 'name: x\n');
    expect((await refusal(yamlNamedJson)).message).toBe(`${JSON.stringify(yamlNamedJson)} is not valid JSON: ${jsonError('name: x\n')}`);
  });

  it('names a file it cannot read, with its error code', async () => {
    const missing = join(dir, 'missing.yaml');
    expect((await refusal(missing)).message).toBe(`cannot read ${JSON.stringify(missing)} (ENOENT)`);
    expect((await refusal(dir)).message).toBe(`cannot read ${JSON.stringify(dir)} (EISDIR)`);
  });

  it('refuses an empty file, and one of only whitespace', async () => {
    const empty = file('empty.yaml', '');
    expect((await refusal(empty)).message).toBe(`${JSON.stringify(empty)} is empty`);
    const blank = file('blank.json', ' \n\t\n');
    expect((await refusal(blank)).message).toBe(`${JSON.stringify(blank)} is empty`);
  });

  it('refuses YAML that does not parse with the first line of the parser\'s message', async () => {
    const broken = file('broken.yml', 'cluster_id: [unclosed\n');
    const { message } = await refusal(broken);
    expect(message.startsWith(`${JSON.stringify(broken)} is not valid YAML: `)).toBe(true);
    // With the parser's position of the problem (its pretty errors).
    expect(message).toMatch(/ at line 2, column 1:$/);
  });

  it.each([
    ['a list', 'list.yaml', '- a\n- b\n'],
    ['a string', 'string.yaml', 'just words\n'],
    ['null', 'null.json', 'null'],
    ['a number', 'number.json', '42'],
  ])('refuses %s: one object is what a registration is', async (_what, name, content) => {
    const path = file(name, content);
    expect((await refusal(path)).message).toBe(`${JSON.stringify(path)} must hold one object with the registration's fields`);
  });
});

function jsonError(text: string): string {
  try {
    JSON.parse(text);
  } catch (error) {
    return (error as Error).message.split('\n')[0]!;
  }
  throw new Error('parsed');
}
