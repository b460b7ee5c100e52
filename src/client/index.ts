// `poolscope/client`: what a router needs to follow the listed pools of a poolscope service, register itself
// (startRouterHeartbeat) and follow the routers (watchRouters).
export { watchRouters, type RouterWatch } from './watch-pools.js';
export { RouterMap, type RouterChange } from './router-map.js';
export { startRouterHeartbeat, type RouterHeartbeat, type RouterHeartbeatOptions } from './router-heartbeat.js';
export { watchPools, type PoolWatch, type WatchPoolsOptions, type WatchStatus, type WatchTransport } from './watch-pools.js';
export { getPools, getRouters, NoReplicaListedError, type GetPoolsOptions, type ReplicaFailure } from './get-pools.js';
export { droppedEverywhere, PoolMap, samePool, settledEverywhere, type PoolChange } from './pool-map.js';
export type { HttpTransportOptions, TlsProblem } from './http-transport.js';
export type { ListedPool, PoolId, PoolKey, PoolList, RegionStatus, WatchEvent } from '../contract/index.js';
export type { ListedRouter, RouterList, RouterRegistration, RouterHeartbeatReply, RouterWatchEvent } from '../contract/index.js';
export { poolKey, parsePoolKey } from '../contract/index.js';
