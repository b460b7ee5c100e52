// `poolscope serve`: the service itself. Its flags (flag-table.ts) are parsed and checked in full, files
// included, before anything starts (flags.ts); serve.ts runs it.
import { refuseUsage, type Command } from '../command.js';
import { wantsHelp, type FlagDef } from '../flag-parser.js';
import { GROUP_TITLES, SERVE_FLAGS, type FlagSpec } from '../flag-table.js';
import { parseServeFlags } from '../flags.js';
import { commandHelpText } from '../help.js';

export const serveCommand: Command = {
  name: 'serve',
  usage: 'serve [flags]',
  summary: 'run the service',
  flags: SERVE_FLAGS,
  section: (flag: FlagDef<never>) => GROUP_TITLES[(flag as unknown as FlagSpec).group],
  notes: [
    'Example:',
    '  poolscope serve --registration-storage redis --redis-url redis://127.0.0.1:6379',
    '  poolscope serve --region us-east-1 --regions-file regions.yaml',
  ],
  async run(args, io) {
    if (wantsHelp(args)) {
      io.stdout(commandHelpText(serveCommand));
      return 0;
    }
    const parsed = parseServeFlags(args, io.env);
    if (!parsed.ok) return refuseUsage(io, parsed);
    const { runServe } = await import('../serve.js');
    return runServe(parsed.config, io);
  },
};
