// What to do about a failed exchange with a replica, in one short phrase naming the flag that fixes it
// (the `poolscope` commands' flags; `token`, `ca`, `cert` and `key` are the same options of startRelay,
// watchPools and getPools): a token refused, a CA missing, a client certificate required. Nothing for a
// failure no flag fixes (a replica down, a timeout).
import type { TlsProblem } from './http-transport.js';

export interface FailureFacts {
  /** The HTTP status of the reply, when one came. */
  status?: number;
  tls?: TlsProblem;
}

/** What the client was given, and what it asked for: a read (GET /pools) or a write (POST /pools). */
export interface ClientSetup {
  token: boolean;
  ca: boolean;
  cert: boolean;
  access: 'read' | 'write';
}

export function nextStep(failure: FailureFacts, setup: ClientSetup): string | undefined {
  const token = setup.access === 'write' ? 'a write token (one of the replica\'s --auth-token-file)' : 'a read token';
  if (failure.status === 401) {
    return setup.token ? `the replica does not accept the token of --token-file: give ${token}` : `pass ${token} with --token-file`;
  }
  if (failure.status === 403) return `the token of --token-file lacks the scope of a ${setup.access}: give ${token}`;
  switch (failure.tls) {
    case 'untrusted-server-certificate':
      return setup.ca
        ? "--ca-file holds no CA that signed the replica's certificate"
        : "pass the CA that signed the replica's certificate with --ca-file";
    case 'server-certificate-name':
      return "use a host in --servers that the replica's certificate names";
    case 'server-certificate-expired':
      return "renew the replica's certificate (its --tls-cert-path)";
    case 'client-certificate-required':
      return 'pass a client certificate with --cert-file and --key-file';
    case 'client-certificate-refused':
      return "pass a client certificate signed by the replica's --tls-client-ca-path with --cert-file";
    case 'not-tls':
      return 'the replica speaks plain HTTP there: use an http:// URL in --servers';
    default:
      return undefined;
  }
}
