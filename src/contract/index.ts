export * from './registration.js';
export * from './pool-key.js';
export * from './pool.js';
export * from './errors.js';
export * from './regions.js';
export * from './registration-reader.js';
