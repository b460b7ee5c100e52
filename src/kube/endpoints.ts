// A pool's addresses from its current slices (docs/contract.md §2, §4): Ready PoolRelay endpoints and
// Ready frontend URLs, each frontend pod once. Pure.
import type { PoolEndpoints, SliceRouter } from './types.js';
import type { SliceRole } from './naming.js';
import type { EndpointSlice, SliceEndpoint, SlicePort } from './slice.js';

export interface RoledSlice {
  role: SliceRole;
  slice: EndpointSlice;
}

export interface EndpointsOptions {
  /** `--frontend-port-name`, default `http` */
  frontendPortName: string;
}

export interface PoolEndpointsResult {
  endpoints: PoolEndpoints;
  /** Frontend slices without a usable TCP port of that name: their endpoints cannot be listed. */
  frontendSlicesWithoutPort: EndpointSlice[];
}

/** The port a PoolRelay slice is reached on: the TCP port named `relay`, else its first TCP port. */
const RELAY_PORT_NAME = 'relay';

export function computePoolEndpoints(slices: readonly RoledSlice[], options: EndpointsOptions): PoolEndpointsResult {
  const relays = new Set<string>();
  const frontendCandidates: FrontendCandidate[] = [];
  const frontendSlicesWithoutPort: EndpointSlice[] = [];
  let frontendSlicesWithPort = false;

  for (const { role, slice } of slices) {
    if (role === 'router') continue;
    if (role === 'relay') {
      const port = relayPort(slice.ports);
      for (const endpoint of readyEndpoints(slice)) relays.add(address(endpoint, slice, port));
      continue;
    }
    const port = namedTcpPort(slice.ports, options.frontendPortName);
    if (port === undefined) {
      frontendSlicesWithoutPort.push(slice);
      continue;
    }
    frontendSlicesWithPort = true;
    for (const endpoint of readyEndpoints(slice)) {
      frontendCandidates.push({
        url: address(endpoint, slice, port.port, schemeOf(port)),
        ipv6: isIPv6(slice, endpoint),
        pod: podIdentity(endpoint),
      });
    }
  }

  return {
    endpoints: {
      relays: [...relays].sort(),
      frontends: onePerPod(frontendCandidates),
      frontendSlicesWithPort,
    },
    frontendSlicesWithoutPort,
  };
}

interface FrontendCandidate {
  url: string;
  ipv6: boolean;
  pod: string | undefined;
}

/**
 * The routers of the Global Router Service's slices (docs/contract.md §10): its Ready endpoints on the TCP
 * port named `portName`, one per pod by the frontends' rule (IPv4 preferred, IPv6 bracketed), `https://`
 * when the port's appProtocol is `https`. A router's id is its pod's name (`targetRef.name`), else its
 * address. A slice without that port lists nothing. Sorted by id.
 */
export function computeRouters(slices: readonly RoledSlice[], portName: string): SliceRouter[] {
  const candidates: (FrontendCandidate & { id: string })[] = [];
  for (const { role, slice } of slices) {
    if (role !== 'router') continue;
    const port = namedTcpPort(slice.ports, portName);
    if (port === undefined) continue;
    for (const endpoint of readyEndpoints(slice)) {
      candidates.push({
        url: address(endpoint, slice, port.port, schemeOf(port)),
        ipv6: isIPv6(slice, endpoint),
        pod: podIdentity(endpoint),
        id: endpoint.targetRef?.name ?? endpoint.addresses[0],
      });
    }
  }
  const chosen = new Set(onePerPod(candidates));
  const byId = new Map<string, SliceRouter>();
  // One router per id: the pod's chosen URL (a name in two namespaces or clusters keeps the smallest URL).
  for (const { id, url } of candidates.filter((c) => chosen.has(c.url)).sort((a, b) => (a.url < b.url ? -1 : 1))) {
    if (!byId.has(id)) byId.set(id, { id, url });
  }
  return [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * Each pod once, at its IPv4 address when it has a Ready one. A dual-stack Service has one slice per family
 * (addressType is immutable), so a pod shows up in an IPv4 slice and in an IPv6 slice.
 *
 * - A pod named by its targetRef (uid, else kind/namespace/name) is one pod across both families: its IPv4
 *   URL when that endpoint is Ready, else its IPv6 URL. The result does not depend on which family became
 *   Ready first.
 * - Endpoints without a targetRef (hand-made source slices, Lighthouse's ClusterIP export) cannot be paired
 *   one to one. Both families of a Service hold the same pods, so when any such endpoint is Ready in IPv4,
 *   the anonymous IPv6 endpoints are taken to be the same pods and left out; an IPv6-only pool (or one whose
 *   IPv4 side has no Ready endpoint yet) lists its IPv6 URLs. Pairing by hostname would merge distinct pods
 *   (a Deployment's replicas may share `spec.hostname`), so hostnames are not used.
 */
function onePerPod(candidates: readonly FrontendCandidate[]): string[] {
  const byPod = new Map<string, FrontendCandidate>();
  const anonymous: FrontendCandidate[] = [];
  for (const candidate of candidates) {
    if (candidate.pod === undefined) {
      anonymous.push(candidate);
      continue;
    }
    const chosen = byPod.get(candidate.pod);
    if (!chosen || prefer(candidate, chosen)) byPod.set(candidate.pod, candidate);
  }
  const anonymousIPv4 = anonymous.some((c) => !c.ipv6);
  const urls = new Set<string>([...byPod.values()].map((c) => c.url));
  for (const candidate of anonymous) {
    if (!candidate.ipv6 || !anonymousIPv4) urls.add(candidate.url);
  }
  return [...urls].sort();
}

/** IPv4 first; within a family the smallest URL, so the choice is stable across event orders. */
function prefer(candidate: FrontendCandidate, chosen: FrontendCandidate): boolean {
  // Stryker disable next-line ConditionalExpression: equivalent, an IPv4 URL always sorts before a bracketed IPv6 one ('0'-'9' < '['), so the smallest URL already prefers IPv4
  if (candidate.ipv6 !== chosen.ipv6) return !candidate.ipv6;
  // Stryker disable next-line EqualityOperator: equivalent, two equal URLs are the same choice
  return candidate.url < chosen.url;
}

function podIdentity(endpoint: SliceEndpoint): string | undefined {
  const ref = endpoint.targetRef;
  if (!ref) return undefined;
  if (ref.uid) return `uid:${ref.uid}`;
  if (ref.name) return `ref:${ref.kind ?? ''}/${ref.namespace ?? ''}/${ref.name}`;
  return undefined;
}

/** Endpoints whose `conditions.ready` is not false (a missing ready means ready), with an address. */
function* readyEndpoints(slice: EndpointSlice): Generator<SliceEndpoint & { addresses: [string, ...string[]] }> {
  // Stryker disable next-line ArrayDeclaration: equivalent, a made-up item has no addresses and is skipped like none
  for (const endpoint of slice.endpoints ?? []) {
    if (endpoint.conditions?.ready === false) continue;
    // The API says the addresses of one endpoint are fungible and clients may use only the first.
    const first = endpoint.addresses?.[0];
    if (!first) continue;
    yield endpoint as SliceEndpoint & { addresses: [string, ...string[]] };
  }
}

function relayPort(ports: readonly SlicePort[] | null | undefined): number | undefined {
  // Stryker disable next-line ArrayDeclaration: equivalent, a made-up item has no port number and is never usable
  return tcpPort(ports, RELAY_PORT_NAME) ?? (ports ?? []).find(isUsableTcp)?.port ?? undefined;
}

/** The TCP port of that name, when it has a number other than 0, with its appProtocol. */
function namedTcpPort(ports: readonly SlicePort[] | null | undefined, name: string): { port: number; appProtocol?: string | null } | undefined {
  const port = (ports ?? []).find((p) => (p.name ?? '') === name && isUsableTcp(p));
  return port ? { port: port.port!, appProtocol: port.appProtocol } : undefined;
}

/** `https` for a port whose appProtocol is `https` (docs/contract.md §10); `http` for any other, or none. */
function schemeOf(port: { appProtocol?: string | null }): 'http' | 'https' {
  return port.appProtocol === 'https' ? 'https' : 'http';
}

/** The TCP port of that name, when it has a number other than 0. */
function tcpPort(ports: readonly SlicePort[] | null | undefined, name: string): number | undefined {
  // Stryker disable next-line ArrayDeclaration,StringLiteral: equivalent, a made-up item has no port number and is never usable; port names are never empty, so any fallback name matches none
  const port = (ports ?? []).find((p) => (p.name ?? '') === name && isUsableTcp(p));
  return port?.port ?? undefined;
}

function isUsableTcp(port: SlicePort): boolean {
  return (port.protocol ?? 'TCP') === 'TCP' && typeof port.port === 'number' && port.port !== 0;
}

function isIPv6(slice: EndpointSlice, endpoint: { addresses: [string, ...string[]] }): boolean {
  // Stryker disable next-line ConditionalExpression,StringLiteral: equivalent, an IPv6 address always holds ':', so the addressType decides nothing the address does not
  return slice.addressType === 'IPv6' || endpoint.addresses[0].includes(':');
}

/** `http://ip:port` (IPv6 bracketed; `https` for a port that says so); the bare address when the slice has no usable TCP port. */
function address(endpoint: { addresses: [string, ...string[]] }, slice: EndpointSlice, port: number | undefined, scheme: 'http' | 'https' = 'http'): string {
  const ip = endpoint.addresses[0];
  if (port === undefined) return ip;
  return isIPv6(slice, endpoint) ? `${scheme}://[${ip}]:${port}` : `${scheme}://${ip}:${port}`;
}
