// The Kubernetes side of the MCS join: what the service wires up.
export type { PoolEndpoints, SliceSource, SliceSourceListener } from './types.js';
export { createSliceSource } from './slice-source.js';
export type { KubeSliceSource, SliceSourceBackoff, SliceSourceOptions, SliceSourceStats } from './slice-source.js';
export { KubeConfigError, kubeConfigFor, type KubeConfigForOptions } from './kube-config.js';
export type { SliceMode } from './naming.js';
