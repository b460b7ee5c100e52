// Reading `--regions-file` (docs/contract.md §7) at start: YAML or JSON, the schema of src/contract,
// each region's Redis URL parsed; any fault comes back as one line naming the file and the field.
import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { describeRegionsIssue, regionsFileSchema } from '../contract/index.js';
import type { RegionConfig } from '../service/config.js';
import { parseRedisUrl, RedisUrlError } from '../store/redis/url.js';
import { quote } from './flag-parser.js';

/** A regions file is one ConfigMap, whose data is at most 1 MiB. */
const MAX_REGIONS_FILE_BYTES = 1024 * 1024;

export function checkReadableFile(path: string): string | undefined {
  try {
    if (!statSync(path).isFile()) return `${quote(path)} is not a file`;
    accessSync(path, constants.R_OK);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    return `cannot read ${quote(path)} (${code})`;
  }
}

/**
 * The regions of a regions file (docs/contract.md §7), sorted by name, each `command_timeout_ms`
 * defaulting to `commandTimeoutMs`; or the broken rule, naming the file and the field.
 */
export function readRegionsFile(path: string, commandTimeoutMs: number): RegionConfig[] | string {
  const unreadable = checkReadableFile(path);
  if (unreadable !== undefined) return unreadable;
  const at = quote(path);
  let text: string;
  try {
    if (statSync(path).size > MAX_REGIONS_FILE_BYTES) return `${at}: larger than 1 MiB (one ConfigMap)`;
    text = readFileSync(path, 'utf8');
  } catch (error) {
    return `cannot read ${at} (${(error as NodeJS.ErrnoException).code ?? 'error'})`;
  }
  let document: unknown;
  try {
    // logLevel 'error': errors throw, warnings are not printed. JSON is YAML too.
    document = parseYaml(text, { logLevel: 'error' });
  } catch (error) {
    // The first line of the message names the position; the lines after it quote the file.
    const firstLine = String(error instanceof Error ? error.message : error).split(/\r?\n|\r/)[0]!.replace(/:$/, '');
    return `${at}: not YAML or JSON: ${firstLine}`;
  }
  const parsed = regionsFileSchema.safeParse(document);
  if (!parsed.success) {
    const { field, rule } = describeRegionsIssue(parsed.error.issues);
    return field === undefined ? `${at}: ${rule}` : `${at}: ${field}: ${rule}`;
  }
  const names = Object.keys(parsed.data.regions).sort();
  const regions: RegionConfig[] = [];
  for (const name of names) {
    const region = parsed.data.regions[name]!;
    try {
      parseRedisUrl(region.redis_url);
    } catch (error) {
      if (!(error instanceof RedisUrlError)) throw error;
      return `${at}: regions.${name}.redis_url: ${error.message}`;
    }
    regions.push({
      name,
      redisUrl: region.redis_url,
      prefix: region.prefix,
      commandTimeoutMs: region.command_timeout_ms ?? commandTimeoutMs,
    });
  }
  return regions;
}
