// EndpointSlices as each MCS implementation imports them, built per test (the recorded fixtures under
// test/kube/fixtures are used by the end-to-end tests). One builder, three flavours, so a test runs
// unchanged against the naming rules of docs/contract.md §2:
//   mcs              KEP-1645 labels (service-name, source-cluster); the name is never read
//   karmada          ServiceImport flow on the control plane: `imported-<cluster>-<member slice>`,
//                    service-name `derived-<svc>`, annotation `work.karmada.io/namespace: karmada-es-<cluster>`
//   karmada-dispatch MultiClusterService flow: `<cluster>-<member slice>`, service-name `<svc>`,
//                    annotation `endpointslice.karmada.io/provision-cluster`

export type Flavour = 'mcs' | 'karmada' | 'karmada-dispatch';
export const FLAVOURS: readonly Flavour[] = ['mcs', 'karmada', 'karmada-dispatch'];

/** The `--pool-discovery` value a flavour is read under. */
export const modeOf = (flavour: Flavour): 'mcs' | 'karmada' => (flavour === 'mcs' ? 'mcs' : 'karmada');

export type KubeObject = { metadata: { name: string; namespace: string } } & Record<string, unknown>;

export interface EndpointSpec {
  ip: string;
  /** undefined: Ready (all three conditions set); null: `conditions: {}` (a missing ready means ready). */
  ready?: boolean | null;
  /** The pod's uid for `targetRef`; default `uid-<ip>`; null: no targetRef (Lighthouse ClusterIP, hand-made). */
  uid?: string | null;
}

export interface PortSpec {
  name?: string;
  port?: number | null;
  protocol?: string;
  appProtocol?: string;
}

export interface SliceSpec {
  flavour: Flavour;
  cluster: string;
  namespace: string;
  pool: string;
  role: 'relay' | 'frontend';
  addressType?: 'IPv4' | 'IPv6';
  endpoints: EndpointSpec[];
  /** Default: relay `relay`/9000, frontend `http`/8000, TCP. */
  ports?: PortSpec[];
  /** Tells apart several slices of one Service and family (default 0). */
  index?: number;
  /** Default `-pool-relay` / `-frontend`. */
  suffix?: string;
}

export const poolKeyOf = (spec: Pick<SliceSpec, 'cluster' | 'namespace' | 'pool'>): string =>
  `${spec.cluster}/${spec.namespace}/${spec.pool}`;

// Kubernetes' generateName alphabet (k8s.io/apimachinery/pkg/util/rand): Karmada's name rules expect it.
const ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** Five generateName characters, distinct per (index, family). */
function generatedSuffix(index: number, family: 'IPv4' | 'IPv6'): string {
  let n = index * 2 + (family === 'IPv6' ? 1 : 0) + 12345;
  let out = '';
  for (let i = 0; i < 5; i += 1) {
    out += ALPHABET[n % ALPHABET.length];
    n = Math.floor(n / ALPHABET.length);
  }
  return out;
}

export function sliceName(spec: SliceSpec): string {
  const service = `${spec.pool}${spec.suffix ?? defaultSuffix(spec.role)}`;
  // The member cluster's own slice, as its EndpointSlice controller names it.
  const memberSlice = `${service}-${generatedSuffix(spec.index ?? 0, spec.addressType ?? 'IPv4')}`;
  switch (spec.flavour) {
    case 'mcs':
      // Names are not specified by the KEP (and never read): one per source cluster, as the KEP's example.
      return `imported-${service}-${spec.cluster}-${generatedSuffix(spec.index ?? 0, spec.addressType ?? 'IPv4')}`;
    case 'karmada':
      return `imported-${spec.cluster}-${memberSlice}`;
    case 'karmada-dispatch':
      return `${spec.cluster}-${memberSlice}`;
  }
}

export function slice(spec: SliceSpec): KubeObject {
  const service = `${spec.pool}${spec.suffix ?? defaultSuffix(spec.role)}`;
  const addressType = spec.addressType ?? 'IPv4';
  return {
    kind: 'EndpointSlice',
    apiVersion: 'discovery.k8s.io/v1',
    metadata: {
      name: sliceName(spec),
      namespace: spec.namespace,
      ...marks(spec.flavour, spec.cluster, service),
    },
    addressType,
    endpoints: spec.endpoints.map((endpoint) => ({
      addresses: [endpoint.ip],
      conditions:
        endpoint.ready === null ? {} : { ready: endpoint.ready ?? true, serving: endpoint.ready ?? true, terminating: false },
      ...(endpoint.uid === null
        ? {}
        : {
            targetRef: {
              kind: 'Pod',
              namespace: spec.namespace,
              name: `${spec.pool}-pod-${endpoint.uid ?? endpoint.ip}`,
              uid: endpoint.uid ?? `uid-${endpoint.ip}`,
            },
          }),
    })),
    ports: (spec.ports ?? [defaultPort(spec.role)]).map((port) => ({ protocol: 'TCP', ...port })),
  };
}

/** A relay and a frontend slice of one pool, both Ready, one endpoint each (`n` picks the addresses). */
export function joinedPoolSlices(spec: Omit<SliceSpec, 'role' | 'endpoints'> & { n: number }): KubeObject[] {
  return [
    slice({ ...spec, role: 'relay', endpoints: [{ ip: `10.1.0.${spec.n}` }] }),
    slice({ ...spec, role: 'frontend', endpoints: [{ ip: `10.2.0.${spec.n}` }] }),
  ];
}

export const relayUrl = (n: number): string => `http://10.1.0.${n}:9000`;
export const frontendUrl = (n: number): string => `http://10.2.0.${n}:8000`;

function defaultSuffix(role: 'relay' | 'frontend'): string {
  return role === 'relay' ? '-pool-relay' : '-frontend';
}

function defaultPort(role: 'relay' | 'frontend'): PortSpec {
  return role === 'relay' ? { name: 'relay', port: 9000 } : { name: 'http', port: 8000 };
}

function marks(
  flavour: Flavour,
  cluster: string,
  service: string,
): { labels: Record<string, string>; annotations?: Record<string, string> } {
  switch (flavour) {
    case 'mcs':
      return {
        labels: {
          'endpointslice.kubernetes.io/managed-by': 'lighthouse-agent.submariner.io',
          'multicluster.kubernetes.io/service-name': service,
          'multicluster.kubernetes.io/source-cluster': cluster,
        },
      };
    case 'karmada':
      return {
        labels: {
          'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.karmada.io',
          'kubernetes.io/service-name': `derived-${service}`,
        },
        annotations: { 'work.karmada.io/namespace': `karmada-es-${cluster}` },
      };
    case 'karmada-dispatch':
      return {
        labels: {
          'endpointslice.kubernetes.io/managed-by': 'endpointslice-dispatch-controller.karmada.io',
          'karmada.io/managed': 'true',
          'kubernetes.io/service-name': service,
        },
        annotations: { 'endpointslice.karmada.io/provision-cluster': cluster },
      };
  }
}
