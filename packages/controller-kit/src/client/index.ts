export * from './client.js';
export * from './errors.js';
export * from './events.js';
export * from './finalizers.js';
export * from './object-schema.js';
export * from './owner-references.js';
export * from './resource.js';
export * from './transport.js';
