/**
 * @tally-ipam/api-types: zod schemas as the single source of truth for the TypeScript types, the runtime parsing of
 * objects read from the API server, and the CRD YAML installed into it.
 */
export * from './cluster/v1beta2/index.js';
export * from './crd/index.js';
export * from './crds.js';
export * from './ipam/v1beta2/index.js';
export * from './meta/v1/index.js';
export * from './metal3/v1alpha1/index.js';
export * from './parse.js';
export * from './resources.js';
export * from './tally/v1alpha1/index.js';
export * from './text/index.js';
