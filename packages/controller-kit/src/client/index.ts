export * from './resource.js';
