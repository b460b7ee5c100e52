// The first step of `npm test`: are the system programs the suite runs here? redis-server (every Redis test;
// Sentinel is `redis-server --sentinel`), redis-cli (the Redis Cluster test joins its nodes with it),
// openssl (the relay's TLS certificate), Chromium (the /debug page tests; CHROMIUM_PATH, default
// /usr/bin/chromium), prometheus and promtool (the monitoring tests). When any is missing it prints one line
// naming the Debian packages that bring them, and exits 1; otherwise it prints nothing.
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** [program, Debian package]; a program with a slash is a path, the others are looked up on PATH. */
const NEEDED = [
  ['redis-server', 'redis-server'],
  ['redis-cli', 'redis-tools'],
  ['openssl', 'openssl'],
  [chromium, 'chromium'],
  ['prometheus', 'prometheus'],
  ['promtool', 'prometheus'],
];

function executable(path) {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function found(program) {
  if (program.includes('/')) return executable(program);
  return (process.env.PATH ?? '').split(delimiter).some((dir) => dir !== '' && executable(join(dir, program)));
}

const missing = NEEDED.filter(([program]) => !found(program));
if (missing.length > 0) {
  const programs = missing.map(([program]) => program).join(', ');
  const packages = [...new Set(missing.map(([, pkg]) => pkg))].join(' ');
  process.stderr.write(`npm test needs ${programs}: apt-get install -y ${packages}\n`);
  process.exit(1);
}
