// A failure to start that the operator fixes (docs/contract.md §6): a port in use, no Kubernetes API in
// MCS modes, a file that changed between the flags' check and its use. Its message is `<subject>: <reason>`;
// `poolscope serve` prints it as one stderr line, `poolscope: <message>`, and exits 2, like a refused flag.

export class StartupError extends Error {
  override readonly name = 'StartupError';

  constructor(
    /** The flag (`--listen`) or file the failure is about. */
    readonly subject: string,
    /** The cause, in the operator's words. */
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`${subject}: ${reason}`, options);
  }
}

/** The listen error as the operator's words: which address, and why it cannot be had. */
export function listenError(error: unknown, address: string): StartupError | undefined {
  const code = (error as NodeJS.ErrnoException).code;
  const why: Record<string, string> = {
    EADDRINUSE: `${address} is in use by another process (EADDRINUSE)`,
    EACCES: `not allowed to listen on ${address} (EACCES): a port below 1024 needs privileges`,
    EADDRNOTAVAIL: `${address}: the host is not an address of this machine (EADDRNOTAVAIL)`,
    ENOTFOUND: `${address}: the host name does not resolve (ENOTFOUND)`,
    EAI_AGAIN: `${address}: the host name does not resolve now (EAI_AGAIN)`,
  };
  const message = code === undefined ? undefined : why[code];
  return message === undefined ? undefined : new StartupError('--listen', message, { cause: error });
}
