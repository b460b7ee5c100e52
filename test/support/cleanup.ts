// What a test starts and must not outlive it (services, relays, fake servers): registered as the test goes
// and stopped, all at once, after it, so nothing a test started is left for the next one.
import { afterEach } from 'vitest';

export interface Stoppable {
  stop(): unknown;
}

/** Call in a file or describe block; the function it returns registers a thing and hands it back. */
export function stopAfterEach(): <T extends Stoppable>(thing: T) => T {
  const started: Stoppable[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((thing) => thing.stop()));
  });
  return (thing) => {
    started.push(thing);
    return thing;
  };
}
