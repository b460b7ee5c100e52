// Every pino line the suite logs is checked for a key that appears twice in one object (`"region"` bound to
// a child logger and given again as a field, say): JSON.parse keeps the last one silently, and a log
// pipeline may keep either. The test helpers that see log lines (captureLogs, silentLogger, captureCliIo,
// startPoolscope, runPoolscope) hand each line to checkLogLine; test/support/log-lines.setup.ts, a setup
// file of every test file (vitest.config.ts), fails the file that logged such a line.

export interface LogLineProblem {
  /** Which helper saw the line (e.g. `captureLogs`, `poolscope serve stdout`). */
  where: string;
  /** The duplicated keys, as paths (`region`, `err.code`). */
  keys: string[];
  line: string;
}

const problems: LogLineProblem[] = [];

/** Checks one line; a line that is not a JSON object (a table, a help text) is not a log line. */
export function checkLogLine(line: string, where: string): void {
  const text = line.trim();
  if (!text.startsWith('{')) return;
  let keys: string[];
  try {
    keys = duplicateKeys(text);
  } catch {
    return; // not JSON: not a pino line
  }
  if (keys.length > 0) problems.push({ where, keys, line: text });
}

/** Checks each line of a chunk of output (what a command wrote to stdout). */
export function checkLogText(text: string, where: string): void {
  for (const line of text.split('\n')) checkLogLine(line, where);
}

/** The problems found since the last call, which forgets them. */
export function takeLogLineProblems(): LogLineProblem[] {
  return problems.splice(0, problems.length);
}

/**
 * The keys that appear more than once in the same object of a JSON text, as dotted paths; throws for text
 * that is not JSON. A small scanner of its own: JSON.parse cannot tell (it keeps the last value).
 */
export function duplicateKeys(json: string): string[] {
  let at = 0;
  const found: string[] = [];
  const fail = (): never => {
    throw new SyntaxError(`not JSON at ${at}`);
  };
  const space = () => {
    while (at < json.length && ' \t\r\n'.includes(json[at]!)) at++;
  };
  const string = (): string => {
    if (json[at] !== '"') fail();
    at++;
    let out = '';
    while (at < json.length && json[at] !== '"') {
      if (json[at] === '\\') {
        out += json.slice(at, at + 2);
        at += 2;
      } else {
        out += json[at++];
      }
    }
    if (json[at] !== '"') fail();
    at++;
    return JSON.parse(`"${out}"`) as string;
  };
  const value = (path: string): void => {
    space();
    const c = json[at];
    if (c === '{') {
      at++;
      const keys = new Set<string>();
      space();
      if (json[at] === '}') {
        at++;
        return;
      }
      for (;;) {
        space();
        const key = string();
        const keyPath = path === '' ? key : `${path}.${key}`;
        if (keys.has(key)) found.push(keyPath);
        keys.add(key);
        space();
        if (json[at++] !== ':') fail();
        value(keyPath);
        space();
        const next = json[at++];
        if (next === '}') return;
        if (next !== ',') fail();
      }
    }
    if (c === '[') {
      at++;
      space();
      if (json[at] === ']') {
        at++;
        return;
      }
      for (let i = 0; ; i++) {
        value(`${path}[${i}]`);
        space();
        const next = json[at++];
        if (next === ']') return;
        if (next !== ',') fail();
      }
    }
    if (c === '"') {
      string();
      return;
    }
    const literal = /^(?:-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(json.slice(at, at + 64));
    if (literal === null) fail();
    at += literal![0].length;
  };
  value('');
  space();
  if (at !== json.length) fail();
  return found;
}
