// The flags every client command (relay, pools, simulate) shares: where the replicas are, and how to
// reach them (bearer token, CA, client certificate for mutual TLS). They mean the same to every client
// command, so they read shared environment names (POOLSCOPE_SERVERS, POOLSCOPE_TOKEN_FILE, …; see
// env-names.ts). Files are read and checked while the flags are parsed, so a bad one refuses at start.
// The commands that heartbeat (relay, simulate) also take --fallback-servers (docs/contract.md §7), each
// under its own name.
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import { TokenFile } from '../../http/token-file.js';
import { readTokenFileText } from '../../http/tokens.js';
import { normalizeServers } from '../../client/replica-rotation.js';
import type { HttpTransportOptions } from '../../client/http-transport.js';
import { sharedEnvName } from '../env-names.js';
import { quote, refuse, type FlagDef, type Refusal } from '../flag-parser.js';
import { checkReadableFile } from '../flag-table.js';
import { isKeyOf, readCertificateFile, readPrivateKeyFile } from '../tls-files.js';

export const DEFAULT_SERVER = 'http://127.0.0.1:8080';

export interface ClientDraft {
  servers: string[];
  token: string | undefined;
  /** Where `token` came from (`--token-file`); the long-running commands follow it. */
  tokenFile: string | undefined;
  ca: string | undefined;
  /** PEM client certificate and key (`--cert-file`, `--key-file`): both or neither. */
  cert: string | undefined;
  key: string | undefined;
  /** Where `cert` and `key` came from, for the refusal of a key that is not the certificate's. */
  certFile?: string;
  keyFile?: string;
}

export function clientDefaults(): ClientDraft {
  return { servers: [DEFAULT_SERVER], token: undefined, tokenFile: undefined, ca: undefined, cert: undefined, key: undefined };
}

/** The rules between the client flags, checked after they are parsed: a certificate needs its own key. */
export function checkClientFlags(draft: ClientDraft): Refusal | undefined {
  if (draft.cert !== undefined && draft.key === undefined) return refuse('key-file', 'required with --cert-file');
  if (draft.key !== undefined && draft.cert === undefined) return refuse('cert-file', 'required with --key-file');
  if (draft.certFile !== undefined && draft.keyFile !== undefined) {
    const certificate = readCertificateFile(draft.certFile);
    const key = readPrivateKeyFile(draft.keyFile);
    if (typeof certificate !== 'string' && typeof key !== 'string' && !isKeyOf(certificate, key)) {
      return refuse('key-file', `${quote(draft.keyFile)} is not the private key of the certificate in ${quote(draft.certFile)} (--cert-file)`);
    }
  }
  return undefined;
}

/** How the client commands reach the replicas, as the relay and the router client take it. */
export function transportOptions(draft: ClientDraft): HttpTransportOptions {
  return { token: draft.token, ca: draft.ca, cert: draft.cert, key: draft.key };
}

/**
 * `--token-file` followed while a long-running command runs (relay, simulate): the token sent is the
 * file's first token of the moment, so a rotated Secret needs no restart (docs/operations.md "Tokens").
 */
export interface FollowedToken {
  token: () => string;
  close(): void;
}

export async function followTokenFile(draft: ClientDraft, logger: Logger): Promise<FollowedToken | undefined> {
  if (draft.tokenFile === undefined) return undefined;
  const file = await TokenFile.open({ flag: 'token-file', path: draft.tokenFile, logger, scopes: false });
  return { token: () => file.first, close: () => file.close() };
}

export function clientFlags<D extends ClientDraft>(): FlagDef<D>[] {
  return [
    {
      name: 'servers',
      valueName: 'URL[,URL...]',
      summary: 'poolscope replicas, comma-separated; one is picked at random, the next on a failure',
      defaultText: DEFAULT_SERVER,
      env: sharedEnvName('servers'),
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
      summary: 'bearer token to send (the first line that is not blank or a # comment); relay and simulate re-read it when it changes',
      defaultText: undefined,
      env: sharedEnvName('token-file'),
      apply(value, draft) {
        const broken = checkReadableFile(value);
        if (broken !== undefined) return broken;
        const content = readTokenFileText(readFileSync(value, 'utf8'), { scopes: false });
        if (!content.ok) return `${JSON.stringify(value)} ${content.problem}`;
        draft.token = content.tokens[0];
        draft.tokenFile = value;
        return undefined;
      },
    },
    {
      name: 'ca-file',
      valueName: 'PATH',
      summary: "PEM certificate(s) of the CA that signed the replicas' TLS certificates",
      defaultText: "Node's bundled CAs",
      env: sharedEnvName('ca-file'),
      apply(value, draft) {
        const file = readCertificateFile(value);
        if (typeof file === 'string') return file;
        draft.ca = file.pem;
        return undefined;
      },
    },
    {
      name: 'cert-file',
      valueName: 'PATH',
      summary: 'PEM client certificate, for replicas that require mutual TLS (--tls-client-ca-path); needs --key-file',
      defaultText: undefined,
      env: sharedEnvName('cert-file'),
      apply(value, draft) {
        const file = readCertificateFile(value);
        if (typeof file === 'string') return file;
        draft.cert = file.pem;
        draft.certFile = value;
        return undefined;
      },
    },
    {
      name: 'key-file',
      valueName: 'PATH',
      summary: "PEM private key of --cert-file's certificate, unencrypted",
      defaultText: undefined,
      env: sharedEnvName('key-file'),
      apply(value, draft) {
        const file = readPrivateKeyFile(value);
        if (typeof file === 'string') return file;
        draft.key = file.pem;
        draft.keyFile = value;
        return undefined;
      },
    },
  ];
}

export interface FallbackDraft extends ClientDraft {
  /** Replicas of other regions; undefined or empty for none. */
  fallbackServers?: string[];
}

/**
 * `--fallback-servers` of the heartbeating commands (docs/contract.md §7): replicas of other regions,
 * used only after every `--servers` replica failed in a round. Comes after clientFlags() in a table, so
 * it can refuse a replica that is also in `--servers`.
 */
export function fallbackServersFlag<D extends FallbackDraft>(): FlagDef<D> {
  return {
    name: 'fallback-servers',
    valueName: 'URL[,URL...]',
    summary: 'replicas of other regions, comma-separated; heartbeated only after every --servers replica failed in a round, until one of those answers again',
    defaultText: 'none',
    apply(value, draft) {
      let servers: string[];
      try {
        servers = normalizeServers(value.split(','));
      } catch (error) {
        return (error as Error).message;
      }
      const both = servers.find((server) => draft.servers.includes(server));
      if (both !== undefined) return `${JSON.stringify(both)} is in --servers too; a fallback is a replica of another region`;
      draft.fallbackServers = servers;
      return undefined;
    },
  };
}
