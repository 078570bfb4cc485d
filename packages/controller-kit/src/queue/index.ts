// @tally-ipam/controller-kit/queue: client-go's work queues and rate limiters, and their Prometheus metrics.
export * from './clock.js';
export * from './prometheus-queue-metrics.js';
export * from './queue-metrics.js';
export * from './rate-limiter.js';
export * from './rate-limiting-queue.js';
export * from './work-queue.js';
