export { createRedisStore, createRedisRouterStore, DEFAULT_CHANGE_LOG_CAP, type RedisStoreOptions } from './store.js';
export { createRedisReader, type RedisReaderOptions } from './reader.js';
export { parseRedisUrl, redactRedisUrl, describeRedisTarget, RedisUrlError, type RedisTarget } from './url.js';
