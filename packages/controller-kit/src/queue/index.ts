export * from './clock.js';
export * from './prometheus-queue-metrics.js';
export * from './queue-metrics.js';
export * from './rate-limiter.js';
export * from './rate-limiting-queue.js';
export * from './register-once.js';
export * from './work-queue.js';
