export * from './label-selector.js';
export * from './object.js';
