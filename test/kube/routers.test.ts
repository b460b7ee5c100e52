// The routers of the Global Router Service's slices (docs/contract.md §10), as computeRouters reads them:
// router slices only, Ready endpoints on the named TCP port, one per pod (IPv4 preferred, IPv6 bracketed),
// `https://` for an `appProtocol: https` port, the pod's name as id (else the address), sorted by id.
import { describe, expect, it } from 'vitest';
import { computeRouters, type RoledSlice } from '../../src/kube/endpoints.js';
import type { EndpointSlice, SliceEndpoint } from '../../src/kube/slice.js';
import { fixtureSlice } from './helpers.js';

const base = fixtureSlice('mcs/frontend-ipv4.json');

function slice(
  name: string,
  addressType: 'IPv4' | 'IPv6',
  endpoints: SliceEndpoint[],
  options: { role?: RoledSlice['role']; portName?: string; port?: number; appProtocol?: string; protocol?: string } = {},
): RoledSlice {
  const copy: EndpointSlice = structuredClone(base);
  copy.metadata.name = name;
  copy.addressType = addressType;
  copy.ports = [
    {
      name: options.portName ?? 'relay',
      protocol: options.protocol ?? 'TCP',
      port: options.port ?? 7000,
      ...(options.appProtocol === undefined ? {} : { appProtocol: options.appProtocol }),
    },
  ];
  copy.endpoints = endpoints;
  return { role: options.role ?? 'router', slice: copy };
}

const pod = (name: string, address: string, ready = true): SliceEndpoint => ({
  addresses: [address],
  conditions: { ready },
  targetRef: { kind: 'Pod', namespace: 'routing', name, uid: `uid-${name}` },
});
const anonymous = (address: string): SliceEndpoint => ({ addresses: [address], conditions: { ready: true } });

describe('computeRouters', () => {
  it('lists the Ready endpoints of router slices on the named port, by pod name, sorted by id', () => {
    const routers = slice('r', 'IPv4', [pod('router-b', '10.0.0.2'), pod('router-a', '10.0.0.1'), pod('router-c', '10.0.0.3', false)]);
    expect(computeRouters([routers], 'relay')).toEqual([
      { id: 'router-a', url: 'http://10.0.0.1:7000' },
      { id: 'router-b', url: 'http://10.0.0.2:7000' },
    ]);
  });

  it('reads no slice of another role, and nothing from a slice without the named port', () => {
    const frontend = slice('f', 'IPv4', [pod('router-a', '10.0.0.1')], { role: 'frontend' });
    const otherPort = slice('o', 'IPv4', [pod('router-b', '10.0.0.2')], { portName: 'grpc' });
    const udp = slice('u', 'IPv4', [pod('router-c', '10.0.0.3')], { protocol: 'UDP' });
    expect(computeRouters([frontend, otherPort, udp], 'relay')).toEqual([]);
    expect(computeRouters([otherPort], 'grpc')).toEqual([{ id: 'router-b', url: 'http://10.0.0.2:7000' }]);
  });

  it('a dual-stack pod once, at its IPv4 address, in either slice order; an IPv6-only pod bracketed', () => {
    const v4 = slice('v4', 'IPv4', [pod('router-a', '10.0.0.1')]);
    const v6 = slice('v6', 'IPv6', [pod('router-a', 'fd00::1'), pod('router-b', 'fd00::2')]);
    const expected = [
      { id: 'router-a', url: 'http://10.0.0.1:7000' },
      { id: 'router-b', url: 'http://[fd00::2]:7000' },
    ];
    expect(computeRouters([v4, v6], 'relay')).toEqual(expected);
    expect(computeRouters([v6, v4], 'relay')).toEqual(expected);
  });

  it('https:// for a port whose appProtocol is https, http:// for any other', () => {
    expect(computeRouters([slice('s', 'IPv4', [pod('router-a', '10.0.0.1')], { appProtocol: 'https', port: 7443 })], 'relay')).toEqual([
      { id: 'router-a', url: 'https://10.0.0.1:7443' },
    ]);
    expect(computeRouters([slice('s', 'IPv4', [pod('router-a', '10.0.0.1')], { appProtocol: 'h2c' })], 'relay')).toEqual([
      { id: 'router-a', url: 'http://10.0.0.1:7000' },
    ]);
  });

  it('an endpoint without a targetRef is named by its address', () => {
    expect(computeRouters([slice('s', 'IPv4', [anonymous('10.0.0.9'), anonymous('10.0.0.10')])], 'relay')).toEqual([
      { id: '10.0.0.10', url: 'http://10.0.0.10:7000' },
      { id: '10.0.0.9', url: 'http://10.0.0.9:7000' },
    ]);
  });

  it('one router per id: a name in two clusters keeps the smallest URL, in either slice order', () => {
    const east = slice('east', 'IPv4', [{ ...pod('router-a', '10.0.0.9'), targetRef: { kind: 'Pod', namespace: 'routing', name: 'router-a', uid: 'east' } }]);
    const west = slice('west', 'IPv4', [{ ...pod('router-a', '10.0.0.10'), targetRef: { kind: 'Pod', namespace: 'routing', name: 'router-a', uid: 'west' } }]);
    expect(computeRouters([east, west], 'relay')).toEqual([{ id: 'router-a', url: 'http://10.0.0.10:7000' }]);
    expect(computeRouters([west, east], 'relay')).toEqual([{ id: 'router-a', url: 'http://10.0.0.10:7000' }]);
  });
});
