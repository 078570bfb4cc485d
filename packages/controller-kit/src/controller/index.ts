export * from './predicate.js';
