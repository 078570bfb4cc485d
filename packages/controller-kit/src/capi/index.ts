export * from './conditions.js';
export * from './constants.js';
export * from './pause.js';
export * from './predicates.js';
