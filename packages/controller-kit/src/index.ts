// Public surface of the controller kit. Each area re-exports its own public names from its folder's index.
export * from './app/index.js';
export * from './cache/index.js';
export * from './capi/index.js';
export * from './client/index.js';
export * from './controller/index.js';
export * from './manager/index.js';
export * from './queue/index.js';
export * from './webhook/index.js';
