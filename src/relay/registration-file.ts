// Reads a registration file: JSON when the name ends in .json, YAML otherwise (YAML 1.2, so `yes` stays
// a string). Only parsing happens here; the contract's schema checks the fields afterwards.
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';

/** The file cannot be read or parsed; the message is one line. */
export class RegistrationFileError extends Error {
  override name = 'RegistrationFileError';
}

/** The file's content as a plain object. @throws RegistrationFileError */
export async function readRegistrationFile(path: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    // Stryker disable next-line StringLiteral: defensive, readFile's errors always carry a code
    throw new RegistrationFileError(`cannot read ${JSON.stringify(path)} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (text.trim() === '') throw new RegistrationFileError(`${JSON.stringify(path)} is empty`);
  let content: unknown;
  try {
    // Stryker disable next-line ObjectLiteral: equivalent, prettyErrors is yaml 2's default (written out for the reader: the position is in the message)
    content = path.toLowerCase().endsWith('.json') ? JSON.parse(text) : parseYaml(text, { prettyErrors: true });
  } catch (error) {
    const kind = path.toLowerCase().endsWith('.json') ? 'JSON' : 'YAML';
    const detail = (error instanceof Error ? error.message : String(error)).split('\n')[0];
    throw new RegistrationFileError(`${JSON.stringify(path)} is not valid ${kind}: ${detail}`);
  }
  if (content === null || typeof content !== 'object' || Array.isArray(content)) {
    throw new RegistrationFileError(`${JSON.stringify(path)} must hold one object with the registration's fields`);
  }
  return content as Record<string, unknown>;
}
