// Which URL a frontend pod is listed at when its slices offer it more than one (docs/contract.md §4: each
// frontend pod once): IPv4 first, then the smallest URL, so every replica lists the same one whatever
// order the slices came in.
import { describe, expect, it } from 'vitest';
import { computePoolEndpoints, type RoledSlice } from '../../src/kube/endpoints.js';
import type { EndpointSlice, SliceEndpoint } from '../../src/kube/slice.js';
import { fixtureSlice } from './helpers.js';

const base = fixtureSlice('mcs/frontend-ipv4.json');

/** A frontend slice of the fixture's Service holding `endpoints`, on `port`. */
function slice(name: string, addressType: 'IPv4' | 'IPv6', port: number, endpoints: SliceEndpoint[]): RoledSlice {
  const copy: EndpointSlice = structuredClone(base);
  copy.metadata.name = name;
  copy.addressType = addressType;
  copy.ports = [{ name: 'http', protocol: 'TCP', port }];
  copy.endpoints = endpoints;
  return { role: 'frontend', slice: copy };
}

const pod = (uid: string, address: string): SliceEndpoint => ({
  addresses: [address],
  conditions: { ready: true },
  targetRef: { kind: 'Pod', namespace: 'dynamo', name: `pod-${uid}`, uid },
});

const frontends = (...slices: RoledSlice[]) => computePoolEndpoints(slices, { frontendPortName: 'http' }).endpoints.frontends;

describe('one URL per frontend pod', () => {
  it('of two IPv4 URLs of one pod, the smaller, in either slice order', () => {
    const a = slice('a', 'IPv4', 8000, [pod('p1', '10.0.0.9')]);
    const b = slice('b', 'IPv4', 8000, [pod('p1', '10.0.0.10')]);
    // '10.0.0.10' sorts before '10.0.0.9' as text: the rule is the smallest URL, not the smallest address.
    expect(frontends(a, b)).toEqual(['http://10.0.0.10:8000']);
    expect(frontends(b, a)).toEqual(['http://10.0.0.10:8000']);
  });

  it('of two IPv6 URLs of one pod without an IPv4 one, the smaller, in either slice order', () => {
    const a = slice('a', 'IPv6', 8000, [pod('p1', 'fd00::b')]);
    const b = slice('b', 'IPv6', 8000, [pod('p1', 'fd00::a')]);
    expect(frontends(a, b)).toEqual(['http://[fd00::a]:8000']);
    expect(frontends(b, a)).toEqual(['http://[fd00::a]:8000']);
  });

  it('the IPv4 URL of a dual-stack pod, whatever the ports, in either slice order', () => {
    const v4 = slice('v4', 'IPv4', 9000, [pod('p1', '10.0.0.1')]);
    const v6 = slice('v6', 'IPv6', 1000, [pod('p1', '1::1')]);
    expect(frontends(v4, v6)).toEqual(['http://10.0.0.1:9000']);
    expect(frontends(v6, v4)).toEqual(['http://10.0.0.1:9000']);
  });

  it('two pods are two URLs, sorted', () => {
    const both = slice('a', 'IPv4', 8000, [pod('p2', '10.0.0.2'), pod('p1', '10.0.0.1')]);
    expect(frontends(both)).toEqual(['http://10.0.0.1:8000', 'http://10.0.0.2:8000']);
  });

  it('a pod named by kind, namespace and name is one pod across its slices', () => {
    const byName = (address: string): SliceEndpoint => ({
      addresses: [address],
      targetRef: { kind: 'Pod', namespace: 'dynamo', name: 'frontend-0' },
    });
    const otherNamespace: SliceEndpoint = { addresses: ['10.0.0.3'], targetRef: { kind: 'Pod', namespace: 'other', name: 'frontend-0' } };
    expect(frontends(slice('a', 'IPv4', 8000, [byName('10.0.0.2')]), slice('b', 'IPv4', 8000, [byName('10.0.0.1')]))).toEqual([
      'http://10.0.0.1:8000',
    ]);
    // The same name in another namespace is another pod.
    expect(frontends(slice('a', 'IPv4', 8000, [byName('10.0.0.2'), otherNamespace]))).toEqual([
      'http://10.0.0.2:8000',
      'http://10.0.0.3:8000',
    ]);
  });

  it('an endpoint whose targetRef names nothing counts as anonymous', () => {
    const anonymousV6: SliceEndpoint = { addresses: ['fd00::1'], targetRef: { kind: 'Pod' } };
    const anonymousV4: SliceEndpoint = { addresses: ['10.0.0.1'], targetRef: {} };
    // Anonymous IPv6 endpoints are left out once any anonymous IPv4 endpoint is Ready.
    expect(frontends(slice('v6', 'IPv6', 8000, [anonymousV6]), slice('v4', 'IPv4', 8000, [anonymousV4]))).toEqual(['http://10.0.0.1:8000']);
    expect(frontends(slice('v6', 'IPv6', 8000, [anonymousV6]))).toEqual(['http://[fd00::1]:8000']);
  });

  it('an IPv6 address in a slice that does not say IPv6 is still bracketed and counts as IPv6', () => {
    const mixed = slice('m', 'IPv4', 8000, [pod('p1', 'fd00::1'), pod('p1', '10.0.0.1')]);
    expect(frontends(mixed)).toEqual(['http://10.0.0.1:8000']);
    expect(frontends(slice('m', 'IPv4', 8000, [pod('p1', 'fd00::1')]))).toEqual(['http://[fd00::1]:8000']);
  });
});
