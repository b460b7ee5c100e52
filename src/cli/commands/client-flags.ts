// The flags every client command (relay, pools, simulate) shares: where the replicas are, and how to
// reach them (bearer token, CA). Files are read while the flags are parsed, so a bad one refuses at start.
import { readFileSync } from 'node:fs';
import { parseTokenFile } from '../../http/auth.js';
import { normalizeServers } from '../../client/replica-rotation.js';
import type { FlagDef } from '../flag-parser.js';
import { checkReadableFile } from '../flag-table.js';

export const DEFAULT_SERVER = 'http://127.0.0.1:8080';

export interface ClientDraft {
  servers: string[];
  token: string | undefined;
  ca: string | undefined;
}

export function clientDefaults(): ClientDraft {
  return { servers: [DEFAULT_SERVER], token: undefined, ca: undefined };
}

export function clientFlags<D extends ClientDraft>(): FlagDef<D>[] {
  return [
    {
      name: 'servers',
      valueName: 'URL[,URL...]',
      summary: 'poolscope replicas, comma-separated; one is picked at random, the next on a failure',
      defaultText: DEFAULT_SERVER,
      apply(value, draft) {
        try {
          draft.servers = normalizeServers(value.split(','));
          return undefined;
        } catch (error) {
          return (error as Error).message;
        }
      },
    },
    {
      name: 'token-file',
      valueName: 'PATH',
      summary: 'bearer token to send (the first line that is not blank or a # comment)',
      defaultText: undefined,
      apply(value, draft) {
        const broken = checkReadableFile(value);
        if (broken !== undefined) return broken;
        const [token] = parseTokenFile(readFileSync(value, 'utf8'));
        if (token === undefined) return `${JSON.stringify(value)} holds no token`;
        draft.token = token;
        return undefined;
      },
    },
    {
      name: 'ca-file',
      valueName: 'PATH',
      summary: 'PEM certificate(s) of the CA that signed the replicas\' TLS certificates',
      defaultText: "Node's bundled CAs",
      apply(value, draft) {
        const broken = checkReadableFile(value);
        if (broken !== undefined) return broken;
        const pem = readFileSync(value, 'utf8');
        if (!pem.includes('-----BEGIN CERTIFICATE-----')) return `${JSON.stringify(value)} holds no PEM certificate`;
        draft.ca = pem;
        return undefined;
      },
    },
  ];
}
