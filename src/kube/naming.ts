// Which pool an imported EndpointSlice belongs to: the mcs and karmada naming rules of docs/contract.md §2,
// as test/kube/fixtures/README.md §4 derives them from each implementation's source. Pure: the caller logs
// the warnings, once per slice.
import { poolKey, type PoolKey } from '../contract/index.js';
import { annotation, label, type EndpointSlice } from './slice.js';

export type SliceMode = 'mcs' | 'karmada';
export type SliceRole = 'relay' | 'frontend' | 'router';

/** The one cache key of every Global Router slice (no pool key looks like it: those hold two '/'). */
export const ROUTERS_KEY = 'routers';

export interface NamingOptions {
  mode: SliceMode;
  /** `--relay-service-suffix`, default `-pool-relay` */
  relayServiceSuffix: string;
  /** `--frontend-service-suffix`, default `-frontend` */
  frontendServiceSuffix: string;
  /** `--router-service-name`: the Global Router Service, whose slices are routers (none: no routers read). */
  routerServiceName?: string;
}

/** A slice that names a pool: its source cluster, the Service it belongs to and the pool's name. */
export interface PoolSliceNaming {
  kind: 'pool';
  cluster: string;
  namespace: string;
  service: string;
  role: SliceRole;
  /** The pool's name: the service minus its suffix. */
  name: string;
  key: PoolKey;
  /** The slice is used, but two of its marks disagree; log once per slice. */
  warning?: string;
}

export interface SkippedSlice {
  kind: 'skip';
  reason: string;
  /** true when skipping hides what looks like a pool's slice: log once per slice. */
  warn: boolean;
}

export type SliceNaming = PoolSliceNaming | SkippedSlice;

// KEP-1645 (mcs-api pkg/apis/v1beta1/well_known_labels.go).
const MCS_SERVICE_NAME = 'multicluster.kubernetes.io/service-name';
const MCS_SOURCE_CLUSTER = 'multicluster.kubernetes.io/source-cluster';
// Lighthouse keeps a copy of every slice in the broker namespace; its own DNS skips a slice whose
// namespace differs from this label (lighthouse coredns/resolver/controller.go `isOnBroker`).
const LIGHTHOUSE_SOURCE_NAMESPACE = 'lighthouse.submariner.io/sourceNamespace';

const MANAGED_BY = 'endpointslice.kubernetes.io/managed-by';
const K8S_SERVICE_NAME = 'kubernetes.io/service-name';
const KARMADA_MANAGED = 'karmada.io/managed';
const KARMADA_IMPORT_CONTROLLER = 'endpointslice-controller.karmada.io';
const KARMADA_DISPATCH_CONTROLLER = 'endpointslice-dispatch-controller.karmada.io';
const KARMADA_WORK_NAMESPACE = 'work.karmada.io/namespace';
const KARMADA_PROVISION_CLUSTER = 'endpointslice.karmada.io/provision-cluster';
const KARMADA_DERIVED_PREFIX = 'derived-';
const KARMADA_IMPORTED_PREFIX = 'imported-';
const KARMADA_EXECUTION_SPACE_PREFIX = 'karmada-es-';

// Kubernetes' generateName (apiserver names.SimpleNameGenerator): the base cut to 63 - 5 characters,
// then 5 characters of this alphabet (k8s.io/apimachinery/pkg/util/rand `String`). The kube
// EndpointSlice controller generates `<service>-`, so a member slice is named `<service>-xxxxx`.
const GENERATED_NAME_MAX_BASE = 58;
const GENERATED_SUFFIX = '[bcdfghjklmnpqrstvwxz2456789]{5}';

export function nameSlice(slice: EndpointSlice, options: NamingOptions): SliceNaming {
  return options.mode === 'mcs' ? nameMcsSlice(slice, options) : nameKarmadaSlice(slice, options);
}

function nameMcsSlice(slice: EndpointSlice, options: NamingOptions): SliceNaming {
  const service = label(slice, MCS_SERVICE_NAME);
  const cluster = label(slice, MCS_SOURCE_CLUSTER);
  if (!service || !cluster) return skip('not an MCS-imported slice (no service-name/source-cluster labels)');
  const sourceNamespace = label(slice, LIGHTHOUSE_SOURCE_NAMESPACE);
  if (sourceNamespace !== undefined && sourceNamespace !== slice.metadata.namespace) {
    return skip('Lighthouse broker copy (sourceNamespace differs from the slice namespace)');
  }
  // The KEP's labels win over any implementation label (submariner-io/clusterID): names are never parsed.
  return poolSlice(slice, service, cluster, options);
}

function nameKarmadaSlice(slice: EndpointSlice, options: NamingOptions): SliceNaming {
  const managedBy = label(slice, MANAGED_BY);
  if (managedBy === KARMADA_IMPORT_CONTROLLER) return nameServiceImportSlice(slice, options);
  if (managedBy === KARMADA_DISPATCH_CONTROLLER) return nameDispatchedSlice(slice, options);
  // Native slices (a consumer's own pools included) carry no source-cluster mark.
  return skip(`not imported by Karmada (managed-by ${managedBy ?? 'unset'})`);
}

/**
 * ServiceImport flow. On the control plane Karmada's EndpointSliceController takes the cluster name from
 * the Work's execution namespace (`names.GetClusterName`: `karmada-es-<cluster>` minus the prefix) and
 * names the copy `names.GenerateEndpointSliceName(slice, cluster)` = `imported-<cluster>-<member slice>`
 * (karmada-io/karmada pkg/util/names/names.go; pkg/controllers/mcs/endpointslice_controller.go
 * `collectEndpointSliceFromWork`, `deriveEndpointSlice`). It records the namespace in the annotation
 * `work.karmada.io/namespace`. A consumer member's copy has that annotation overwritten with its own
 * execution namespace, so there only the name tells the source cluster.
 */
function nameServiceImportSlice(slice: EndpointSlice, options: NamingOptions): SliceNaming {
  const derived = label(slice, K8S_SERVICE_NAME) ?? '';
  if (!derived.startsWith(KARMADA_DERIVED_PREFIX) || derived.length === KARMADA_DERIVED_PREFIX.length) {
    return skip(`Karmada-imported slice whose service-name label ${JSON.stringify(derived)} lacks "derived-"`, true);
  }
  const service = derived.slice(KARMADA_DERIVED_PREFIX.length);
  const role = roleOf(service, options);
  if (!role) return skip(`service ${service} matches neither suffix`);
  const name = slice.metadata.name;

  if (label(slice, KARMADA_MANAGED) === 'true') {
    const cluster = clusterFromGeneratedName(name, KARMADA_IMPORTED_PREFIX, service);
    if (cluster === undefined) {
      return skip(
        `Karmada member copy whose name does not read imported-<cluster>-${service}-xxxxx, so its source cluster is unknown`,
        true,
      );
    }
    return poolSlice(slice, service, cluster, options);
  }

  // Stryker disable next-line StringLiteral: equivalent, any fallback without the karmada-es- prefix reads as no cluster
  const workNamespace = annotation(slice, KARMADA_WORK_NAMESPACE) ?? '';
  const fromAnnotation = workNamespace.startsWith(KARMADA_EXECUTION_SPACE_PREFIX)
    ? workNamespace.slice(KARMADA_EXECUTION_SPACE_PREFIX.length)
    : '';
  if (fromAnnotation) {
    const named = poolSlice(slice, service, fromAnnotation, options);
    if (named.kind === 'pool' && !name.startsWith(`${KARMADA_IMPORTED_PREFIX}${fromAnnotation}-`)) {
      named.warning = `slice name does not start with imported-${fromAnnotation}-; using the cluster of annotation ${KARMADA_WORK_NAMESPACE}`;
    }
    return named;
  }
  const cluster = clusterFromGeneratedName(name, KARMADA_IMPORTED_PREFIX, service);
  if (cluster === undefined) {
    return skip(`Karmada-imported slice without a usable ${KARMADA_WORK_NAMESPACE} annotation or imported-<cluster>- name`, true);
  }
  const named = poolSlice(slice, service, cluster, options);
  if (named.kind === 'pool') {
    named.warning = `annotation ${KARMADA_WORK_NAMESPACE} missing or not karmada-es-<cluster>; using the cluster in the slice name`;
  }
  return named;
}

/**
 * MultiClusterService flow: the dispatch controller names the copy `<provider cluster>-<member slice>` and
 * sets the annotation `endpointslice.karmada.io/provision-cluster` (karmada-io/karmada
 * pkg/controllers/multiclusterservice/endpointslice_dispatch_controller.go `ensureEndpointSliceWork`).
 * The annotation wins; the name is the fallback.
 */
function nameDispatchedSlice(slice: EndpointSlice, options: NamingOptions): SliceNaming {
  const service = label(slice, K8S_SERVICE_NAME);
  if (!service) return skip('Karmada-dispatched slice without a kubernetes.io/service-name label', true);
  const role = roleOf(service, options);
  if (!role) return skip(`service ${service} matches neither suffix`);
  const name = slice.metadata.name;
  const provider = annotation(slice, KARMADA_PROVISION_CLUSTER);
  if (provider) {
    const named = poolSlice(slice, service, provider, options);
    if (named.kind === 'pool' && !name.startsWith(`${provider}-`)) {
      named.warning = `slice name does not start with ${provider}-; using annotation ${KARMADA_PROVISION_CLUSTER}`;
    }
    return named;
  }
  const cluster = clusterFromGeneratedName(name, '', service);
  if (cluster === undefined) {
    return skip(
      `Karmada-dispatched slice without ${KARMADA_PROVISION_CLUSTER} whose name does not read <cluster>-${service}-xxxxx`,
      true,
    );
  }
  return poolSlice(slice, service, cluster, options);
}

/**
 * X in `prefix + X + "-" + generateName(service + "-")`. The tail has a fixed length once the service is
 * known, so X is unique even when cluster names hold dashes; splitting the name at a dash is not.
 */
export function clusterFromGeneratedName(name: string, prefix: string, service: string): string | undefined {
  const base = `${service}-`.slice(0, GENERATED_NAME_MAX_BASE);
  const tail = new RegExp(`-${escapeRegExp(base)}${GENERATED_SUFFIX}$`);
  if (!name.startsWith(prefix)) return undefined;
  const match = tail.exec(name);
  if (!match) return undefined;
  const cluster = name.slice(prefix.length, match.index);
  return cluster.length > 0 ? cluster : undefined;
}

function poolSlice(slice: EndpointSlice, service: string, cluster: string, options: NamingOptions): SliceNaming {
  const role = roleOf(service, options);
  if (!role) return skip(`service ${service} matches neither suffix`);
  // The Global Router Service's slices, in any cluster and namespace, are one list of routers.
  if (role === 'router') return { kind: 'pool', cluster, namespace: slice.metadata.namespace, service, role, name: service, key: ROUTERS_KEY };
  const suffix = role === 'relay' ? options.relayServiceSuffix : options.frontendServiceSuffix;
  const name = service.slice(0, service.length - suffix.length);
  if (!name) return skip(`service ${service} is only the suffix`);
  const namespace = slice.metadata.namespace;
  return {
    kind: 'pool',
    cluster,
    namespace,
    service,
    role,
    name,
    key: poolKey({ cluster_id: cluster, namespace, name }),
  };
}

/**
 * The Global Router Service first (its name need not end with either suffix); then the suffixes: the flags
 * guarantee that neither ends the other, so at most one matches.
 */
function roleOf(service: string, options: NamingOptions): SliceRole | undefined {
  if (options.routerServiceName !== undefined && service === options.routerServiceName) return 'router';
  if (service.endsWith(options.relayServiceSuffix)) return 'relay';
  if (service.endsWith(options.frontendServiceSuffix)) return 'frontend';
  return undefined;
}

function skip(reason: string, warn = false): SkippedSlice {
  return { kind: 'skip', reason, warn };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
