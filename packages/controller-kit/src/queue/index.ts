// @tally-ipam/controller-kit/queue: a controller's retry policy (client-go's default controller rate limiter) and the
// clock it runs on. The work queues and their metrics are the controller's plumbing and stay unexported.
export type { Clock } from './clock.js';
export { type DefaultRateLimiterOptions, defaultControllerRateLimiter, type RateLimiter } from './rate-limiter.js';
