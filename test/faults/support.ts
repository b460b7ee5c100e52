// Helpers of the fault tests: a metric read the way Prometheus reads it.

/** The value of an unlabelled metric in GET /metrics (0 when absent). */
export async function metricValue(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? 0 : Number(line.slice(name.length + 1));
}
