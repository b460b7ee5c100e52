// `poolscope/client`: what a router needs to follow the listed pools of a poolscope service.
export { watchPools, type PoolWatch, type WatchPoolsOptions, type WatchStatus, type WatchTransport } from './watch-pools.js';
export { getPools, type GetPoolsOptions } from './get-pools.js';
export { droppedEverywhere, PoolMap, samePool, type PoolChange } from './pool-map.js';
export type { HttpTransportOptions } from './http-transport.js';
export type { ListedPool, PoolId, PoolKey, PoolList, RegionStatus, WatchEvent } from '../contract/index.js';
export { poolKey, parsePoolKey } from '../contract/index.js';
