// `poolscope healthcheck`: the container's HEALTHCHECK. It probes /livez of the `serve` beside it in the
// same container, found the way serve finds its own address: serve's --listen and --tls-cert-path, from
// the command line or from serve's own environment names (POOLSCOPE_SERVE_LISTEN,
// POOLSCOPE_SERVE_TLS_CERT_PATH), so a replica served on another port or over HTTPS is probed where it
// serves. Over TLS the answer counts only from a server presenting --tls-cert-path's certificate: on a
// host network, another process on the same port is not taken for this replica. Exit 0 healthy, 1 not,
// 2 for a refused flag; one stderr line says why it is not healthy.
//
// The image's HEALTHCHECK runs it whatever command the container runs. A container whose main process
// (PID 1) is another poolscope command (relay, simulate) serves no HTTP: there is nothing to probe, and
// the check passes while that process runs, rather than failing on a port nobody was meant to serve.
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { DEFAULT_CONFIG, type ServeConfig } from '../../service/config.js';
import { EXIT_FAILURE, refuseUsage, type Command } from '../command.js';
import { commandEnvName } from '../env-names.js';
import { parseFlags, wantsHelp, type FlagDef } from '../flag-parser.js';
import { SERVE_FLAGS } from '../flag-table.js';
import { commandHelpText } from '../help.js';
import { readCertificateFile } from '../tls-files.js';

interface HealthcheckDraft {
  listen: ServeConfig['listen'];
  tlsCertPath: string | undefined;
  timeoutMs: number;
}

/** serve's own flag, read from serve's environment name, written into the probe's draft. */
function followServe(name: 'listen' | 'tls-cert-path'): FlagDef<HealthcheckDraft> {
  const spec = SERVE_FLAGS.find((flag) => flag.name === name)!;
  return {
    name,
    valueName: spec.valueName,
    summary: name === 'listen' ? "serve's --listen: the address probed (a wildcard host over loopback)" : "serve's --tls-cert-path: probe over HTTPS, and only a server presenting this certificate counts",
    defaultText: spec.defaultText,
    env: commandEnvName('serve', name),
    apply(value, draft) {
      const serve: ServeConfig = { ...DEFAULT_CONFIG, listen: { ...DEFAULT_CONFIG.listen }, regions: [] };
      const broken = spec.apply(value, serve);
      if (broken !== undefined) return broken;
      if (name === 'listen') draft.listen = serve.listen;
      else draft.tlsCertPath = serve.tlsCertPath;
      return undefined;
    },
  };
}

export const HEALTHCHECK_FLAGS: readonly FlagDef<HealthcheckDraft>[] = [
  followServe('listen'),
  followServe('tls-cert-path'),
  {
    name: 'timeout-ms',
    valueName: 'MS',
    summary: 'how long /livez may take to answer; a positive integer',
    defaultText: '2000',
    apply(value, draft) {
      const ms = Number(value);
      if (!/^\d+$/.test(value) || ms <= 0 || ms > 60_000) return `must be a positive integer of at most 60000 (got "${value}")`;
      draft.timeoutMs = ms;
      return undefined;
    },
  },
];

export const healthcheckCommand: Command = {
  name: 'healthcheck',
  usage: 'healthcheck [flags]',
  summary: "probe /livez of the serve beside it (its --listen and TLS): the container's HEALTHCHECK",
  flags: HEALTHCHECK_FLAGS as readonly FlagDef<never>[],
  notes: ['Example:', '  poolscope healthcheck --listen 0.0.0.0:9443 --tls-cert-path /tls/tls.crt'],
  async run(args, io) {
    if (wantsHelp(args)) {
      io.stdout(commandHelpText(healthcheckCommand));
      return 0;
    }
    const draft: HealthcheckDraft = { listen: { ...DEFAULT_CONFIG.listen }, tlsCertPath: undefined, timeoutMs: 2000 };
    const parsed = parseFlags(args, { command: 'healthcheck', flags: HEALTHCHECK_FLAGS, draft, env: io.env });
    if (!parsed.ok) return refuseUsage(io, parsed);
    const other = nonServingCommand(readMainProcessArgv());
    if (other !== undefined) {
      io.stdout(`poolscope ${other} serves no HTTP: nothing to probe\n`);
      return 0;
    }
    const problem = await probe(draft);
    if (problem === undefined) return 0;
    io.stderr(`poolscope: healthcheck: ${problem}\n`);
    return EXIT_FAILURE;
  },
};

/** The argv of this container's main process (PID 1), or [] where it cannot be read. */
function readMainProcessArgv(): string[] {
  try {
    return readFileSync('/proc/1/cmdline', 'utf8').split('\0').filter((arg) => arg !== '');
  } catch {
    return [];
  }
}

/** The command of a `poolscope` main process that serves no HTTP (relay, simulate, ...); undefined for serve or anything else. */
export function nonServingCommand(argv: readonly string[]): string | undefined {
  const launcher = argv.findIndex((arg) => /(^|\/)(bin\/poolscope\.js|poolscope)$/.test(arg));
  if (launcher === -1) return undefined;
  const command = argv[launcher + 1];
  return command === undefined || command === 'serve' || command.startsWith('-') ? undefined : command;
}

/** The address to reach a listener on: a wildcard host is reached over loopback. */
export function probeUrl(listen: ServeConfig['listen'], tls: boolean): string {
  const host = listen.host === '0.0.0.0' || listen.host === '' ? '127.0.0.1' : listen.host === '::' ? '::1' : listen.host;
  return `${tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${listen.port}/livez`;
}

/** undefined when /livez answered 200 (over TLS, from the server holding the expected certificate). */
async function probe(draft: HealthcheckDraft): Promise<string | undefined> {
  let expected: X509Certificate | undefined;
  if (draft.tlsCertPath !== undefined) {
    const file = readCertificateFile(draft.tlsCertPath);
    if (typeof file === 'string') return file;
    expected = file.certificates[0];
  }
  const url = probeUrl(draft.listen, expected !== undefined);
  return new Promise((resolve) => {
    const done = (problem: string | undefined) => {
      req.destroy();
      resolve(problem);
    };
    // The chain is not checked against a CA: the certificate itself is compared (the one serve was given).
    const options = { method: 'GET', timeout: draft.timeoutMs, agent: false as const, rejectUnauthorized: false };
    const req = (expected ? httpsRequest : httpRequest)(url, options, (res) => {
      res.resume();
      if (expected !== undefined) {
        const peer = (res.socket as TLSSocket).getPeerX509Certificate?.();
        if (peer === undefined || !peer.raw.equals(expected.raw)) return done(`${url}: the server's certificate is not --tls-cert-path's`);
      }
      done(res.statusCode === 200 ? undefined : `${url} answered ${res.statusCode}`);
    });
    req.once('timeout', () => done(`${url}: no answer within ${draft.timeoutMs} ms`));
    req.once('error', (error) => done(`${url}: ${error.message}`));
    req.end();
  });
}
