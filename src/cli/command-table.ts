// Every `poolscope` command, in the order `--help` lists them. A command is one entry: its flag table
// gives its `--help`, its README table (flag-docs.ts) and its environment names (env-names.ts).
import type { Command } from './command.js';
import { healthcheckCommand } from './commands/healthcheck.js';
import { poolsCommand } from './commands/pools.js';
import { relayCommand } from './commands/relay.js';
import { routerHeartbeatCommand } from './commands/router-heartbeat.js';
import { routersCommand } from './commands/routers.js';
import { serveCommand } from './commands/serve.js';
import { simulateCommand } from './commands/simulate.js';

export const COMMANDS: readonly Command[] = [serveCommand, relayCommand, poolsCommand, routersCommand, routerHeartbeatCommand, simulateCommand, healthcheckCommand];
