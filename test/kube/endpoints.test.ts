import { describe, expect, it } from 'vitest';
import { computePoolEndpoints, type RoledSlice } from '../../src/kube/endpoints.js';
import type { EndpointSlice } from '../../src/kube/slice.js';
import { fixtureSlice } from './helpers.js';

const options = { frontendPortName: 'http' };
const frontend = (slice: EndpointSlice): RoledSlice => ({ role: 'frontend', slice });
const relay = (slice: EndpointSlice): RoledSlice => ({ role: 'relay', slice });

function edit(slice: EndpointSlice, change: (copy: EndpointSlice) => void): EndpointSlice {
  const copy = structuredClone(slice);
  change(copy);
  return copy;
}

const setReady = (ready: boolean | undefined) => (copy: EndpointSlice) => {
  for (const endpoint of copy.endpoints ?? []) endpoint.conditions = ready === undefined ? {} : { ready };
};
const dropTargetRefs = (copy: EndpointSlice) => {
  for (const endpoint of copy.endpoints ?? []) delete endpoint.targetRef;
};

const ipv4 = fixtureSlice('mcs/frontend-ipv4.json');
const ipv6 = fixtureSlice('mcs/frontend-ipv6-dualstack.json');
const V4_URL = 'http://10.12.5.17:8000';
const V6_URL = 'http://[fd00:10:12:5::11]:8000';

function frontends(...slices: EndpointSlice[]): string[] {
  return computePoolEndpoints(slices.map(frontend), options).endpoints.frontends;
}

describe('relays', () => {
  it('lists Ready relay endpoints at the port named relay', () => {
    const { endpoints } = computePoolEndpoints([relay(fixtureSlice('mcs/relay-ready.json'))], options);
    expect(endpoints).toEqual({ relays: ['http://10.12.3.41:9000'], frontends: [], frontendSlicesWithPort: false });
  });

  it('leaves out ready:false endpoints', () => {
    const { endpoints } = computePoolEndpoints([relay(fixtureSlice('mcs/endpoint-not-ready.json'))], options);
    expect(endpoints.relays).toEqual([]);
  });

  it('prefers the port named relay, else the first TCP port other than 0, else the bare address', () => {
    const base = fixtureSlice('mcs/relay-ready.json');
    const withPorts = (ports: EndpointSlice['ports']) => edit(base, (copy) => void (copy.ports = ports));
    const relaysOf = (slice: EndpointSlice) => computePoolEndpoints([relay(slice)], options).endpoints.relays;
    expect(
      relaysOf(withPorts([{ name: 'metrics', protocol: 'TCP', port: 9090 }, { name: 'relay', protocol: 'TCP', port: 9000 }])),
    ).toEqual(['http://10.12.3.41:9000']);
    expect(
      relaysOf(withPorts([{ name: 'zero', protocol: 'TCP', port: 0 }, { name: 'dns', protocol: 'UDP', port: 53 }, { name: 'grpc', port: 7000 }])),
    ).toEqual(['http://10.12.3.41:7000']);
    expect(relaysOf(withPorts(null))).toEqual(['10.12.3.41']);
  });

  it('sorts and deduplicates, and brackets IPv6', () => {
    const a = edit(fixtureSlice('mcs/relay-ready.json'), (copy) => {
      copy.addressType = 'IPv6';
      copy.endpoints = [{ addresses: ['fd00::2'] }, { addresses: ['fd00::1'] }, { addresses: ['fd00::2'] }];
    });
    expect(computePoolEndpoints([relay(a)], options).endpoints.relays).toEqual([
      'http://[fd00::1]:9000',
      'http://[fd00::2]:9000',
    ]);
  });
});

describe('frontends', () => {
  it('counts conditions {} and ready-only as ready', () => {
    expect(frontends(fixtureSlice('mcs/endpoint-ready-absent.json'))).toEqual([
      'http://10.12.7.31:8000',
      'http://10.12.7.32:8000',
    ]);
  });

  it('leaves out ready:false endpoints', () => {
    expect(frontends(edit(ipv4, setReady(false)))).toEqual([]);
  });

  it('brackets IPv6 addresses of an IPv6-only pool', () => {
    expect(frontends(fixtureSlice('mcs/frontend-ipv6-only.json'))).toEqual(['http://[fd00:a10:6:2::2f]:8000']);
  });

  it('lists a dual-stack pod once, at its IPv4 address, in either slice order', () => {
    expect(frontends(ipv4, ipv6)).toEqual([V4_URL]);
    expect(frontends(ipv6, ipv4)).toEqual([V4_URL]);
  });

  it('dual-stack with targetRef: IPv6 while only IPv6 is Ready, IPv4 once both are, whichever came first', () => {
    expect(frontends(edit(ipv4, setReady(false)), ipv6)).toEqual([V6_URL]);
    expect(frontends(ipv4, edit(ipv6, setReady(false)))).toEqual([V4_URL]);
    expect(frontends(ipv4, ipv6)).toEqual([V4_URL]);
  });

  it('dual-stack without targetRef: once, at IPv4, whichever family became Ready first', () => {
    const v4 = edit(ipv4, dropTargetRefs);
    const v6 = edit(ipv6, dropTargetRefs);
    expect(frontends(v4, v6)).toEqual([V4_URL]);
    expect(frontends(v6, v4)).toEqual([V4_URL]);
    // IPv6 Ready first: the pod is reachable there until its IPv4 endpoint is Ready.
    expect(frontends(edit(v4, setReady(false)), v6)).toEqual([V6_URL]);
    // IPv4 Ready first.
    expect(frontends(v4, edit(v6, setReady(false)))).toEqual([V4_URL]);
    // An IPv6-only pool without targetRef still lists its pods.
    expect(frontends(v6)).toEqual([V6_URL]);
  });

  it('several dual-stack pods without targetRef: each once, at IPv4', () => {
    const v4 = edit(ipv4, (copy) => {
      dropTargetRefs(copy);
      copy.endpoints = [{ addresses: ['10.0.0.1'] }, { addresses: ['10.0.0.2'] }];
    });
    const v6 = edit(ipv6, (copy) => {
      dropTargetRefs(copy);
      copy.endpoints = [{ addresses: ['fd00::1'] }, { addresses: ['fd00::2'] }];
    });
    expect(frontends(v6, v4)).toEqual(['http://10.0.0.1:8000', 'http://10.0.0.2:8000']);
  });

  it('pairs pods by targetRef name when the uid is missing', () => {
    const byName = (copy: EndpointSlice) => {
      for (const endpoint of copy.endpoints ?? []) delete endpoint.targetRef?.uid;
    };
    expect(frontends(edit(ipv6, byName), edit(ipv4, byName))).toEqual([V4_URL]);
  });

  it('uses only the TCP port of the named port, never port 0, and tells which slices lack it', () => {
    const other = fixtureSlice('mcs/frontend-other-port-name.json');
    const result = computePoolEndpoints([frontend(other)], options);
    expect(result.endpoints).toEqual({ relays: [], frontends: [], frontendSlicesWithPort: false });
    expect(result.frontendSlicesWithoutPort.map((s) => s.metadata.name)).toEqual(['mistral-7b-frontend-w2lck']);

    expect(computePoolEndpoints([frontend(other)], { frontendPortName: 'grpc' }).endpoints.frontends).toEqual([
      'http://10.12.6.8:8001',
    ]);
    const zero = edit(ipv4, (copy) => void (copy.ports = [{ name: 'http', protocol: 'TCP', port: 0 }]));
    const udp = edit(ipv4, (copy) => void (copy.ports = [{ name: 'http', protocol: 'UDP', port: 8000 }]));
    for (const slice of [zero, udp]) {
      const { endpoints, frontendSlicesWithoutPort } = computePoolEndpoints([frontend(slice)], options);
      expect(endpoints.frontends).toEqual([]);
      expect(endpoints.frontendSlicesWithPort).toBe(false);
      expect(frontendSlicesWithoutPort).toHaveLength(1);
    }
  });

  it('frontendSlicesWithPort is true with the named port even when no endpoint is Ready', () => {
    const { endpoints } = computePoolEndpoints([frontend(edit(ipv4, setReady(false)))], options);
    expect(endpoints).toEqual({ relays: [], frontends: [], frontendSlicesWithPort: true });
  });

  it('keeps relays and frontends apart in one pool', () => {
    const { endpoints } = computePoolEndpoints(
      [relay(fixtureSlice('mcs/relay-ready.json')), frontend(ipv4), frontend(ipv6)],
      options,
    );
    expect(endpoints).toEqual({ relays: ['http://10.12.3.41:9000'], frontends: [V4_URL], frontendSlicesWithPort: true });
  });
});
