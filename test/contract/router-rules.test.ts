// The router shapes' field rules (docs/contract.md §10) on their own: a router id (a DNS-1123 label) and
// the message of each rule it breaks, the registration, a `--router ID=URL` value, and the replies and
// debug list a router or an operator reads.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  debugRouterListSchema,
  parseStaticRouter,
  routerHeartbeatReplySchema,
  routerId,
  routerIdSchema,
  routerRegistrationSchema,
} from '../../src/contract/router.js';

const messageOf = (value: unknown) => {
  const result = routerId.safeParse(value);
  return result.success ? undefined : result.error.issues[0]!.message;
};

describe('a router id', () => {
  it.each(['a', '0', 'gr-0', 'a'.repeat(63), 'a-b-c', '9x'])('takes %j', (id) => {
    expect(routerId.safeParse(id).success).toBe(true);
  });

  it.each([
    ['', 'must not be empty'],
    ['a'.repeat(64), 'must be at most 63 characters'],
    ['-a', 'must be a DNS-1123 label'],
    ['a-', 'must be a DNS-1123 label'],
    ['A', 'must be a DNS-1123 label'],
    ['gr.0', 'must be a DNS-1123 label'],
    ['gr_0', 'must be a DNS-1123 label'],
  ])('refuses %j: %s', (id, rule) => {
    expect(messageOf(id)).toMatch(new RegExp(`^${rule.replace('.', '\\.')}`));
  });
});

describe('a router registration', () => {
  it('takes region and zone up to 253 characters, not longer, and no unknown key', () => {
    const base = { id: 'gr-0', url: 'http://10.0.1.5:9100' };
    expect(routerRegistrationSchema.parse({ ...base, region: 'r'.repeat(253), zone: 'z' })).toEqual({ ...base, region: 'r'.repeat(253), zone: 'z' });
    expect(routerRegistrationSchema.safeParse({ ...base, region: 'r'.repeat(254) }).success).toBe(false);
    expect(routerRegistrationSchema.safeParse({ ...base, zone: 'z'.repeat(254) }).success).toBe(false);
    expect(routerRegistrationSchema.safeParse({ ...base, weight: 1 }).success).toBe(false);
  });
});

describe('--router ID=URL', () => {
  it('reads the id and the url (the url may hold "=")', () => {
    expect(parseStaticRouter('gr-0=http://10.0.1.5:9100/a?b=c')).toEqual({ id: 'gr-0', url: 'http://10.0.1.5:9100/a?b=c' });
  });

  it.each([
    ['gr-0', '"gr-0": must be ID=URL (e.g. gr-0=http://10.0.1.5:9100)'],
    ['=http://10.0.1.5:9100', '"=http://10.0.1.5:9100": the id must not be empty'],
    ['GR=http://10.0.1.5:9100', '"GR=http://10.0.1.5:9100": the id must be a DNS-1123 label'],
    ['gr-0=ftp://10.0.1.5', '"gr-0=ftp://10.0.1.5": the url '],
    ['gr-0=', '"gr-0=": the url '],
  ])('refuses %j, naming the value and the rule', (value, start) => {
    const result = parseStaticRouter(value);
    expect(typeof result).toBe('string');
    expect((result as string).startsWith(start)).toBe(true);
  });
});

describe('what a router and an operator read', () => {
  it('the heartbeat reply: the id registered, positive whole lease and interval', () => {
    const reply = { router: 'gr-0', lease_ms: 15_000, heartbeat_interval_ms: 5000 };
    expect(routerHeartbeatReplySchema.parse(reply)).toEqual(reply);
    for (const broken of [{ ...reply, router: 1 }, { lease_ms: 1, heartbeat_interval_ms: 1 }, { ...reply, lease_ms: 0 }, { ...reply, heartbeat_interval_ms: 1.5 }]) {
      expect(routerHeartbeatReplySchema.safeParse(broken).success).toBe(false);
    }
    expect(z.toJSONSchema(routerHeartbeatReplySchema).properties?.router).toMatchObject({ description: 'the id registered' });
  });

  it('a delete event names the router by its id', () => {
    expect(routerIdSchema.parse({ id: 'gr-0' })).toEqual({ id: 'gr-0' });
    expect(routerIdSchema.safeParse({}).success).toBe(false);
  });

  it('GET /debug/routers: each region with its routers by source; a source outside the three is refused', () => {
    const list = {
      complete: false,
      reasons: ['kubernetes: not listed yet'],
      regions: [{ region: '', sources: [{ source: 'static', routers: [{ id: 'gr-0', url: 'http://10.0.1.5:9100', source: 'static' }] }] }],
    };
    expect(debugRouterListSchema.parse(list)).toEqual(list);
    const withSource = (source: string) => ({ ...list, regions: [{ region: '', sources: [{ source, routers: [] }] }] });
    expect(debugRouterListSchema.safeParse(withSource('gossip')).success).toBe(false);
    expect(debugRouterListSchema.safeParse({ ...list, regions: [{ sources: [] }] }).success).toBe(false);
    expect(debugRouterListSchema.safeParse({ ...list, reasons: undefined }).success).toBe(false);
    expect(debugRouterListSchema.safeParse({ ...list, regions: [{ region: '', sources: [{ source: 'mcs' }] }] }).success).toBe(false);
  });
});
