// @tally-ipam/controller-kit/manager: the Manager and what it runs (runnables, leader election, probes, metrics and
// diagnostics endpoints), its flags, kubeconfig loading, logging and signals. The Lease arithmetic of leader election
// and TLS plumbing stay unexported.
export {
  APIServerMonitor,
  type APIServerMonitorOptions,
  APIServerUnreachableError,
  CacheSyncTimeoutError,
} from './api-server-monitor.js';
export * from './bind-address.js';
export * from './diagnostics.js';
export { FlagError } from './flag-error.js';
export * from './flags.js';
export { loadKubeConfig, readInClusterNamespace } from './kubeconfig.js';
export * from './leader-election.js';
export { LEASE_RESOURCE } from './lease.js';
export { type CreateLoggerOptions, createLogger } from './logger.js';
export * from './manager.js';
export {
  type Checker,
  type MetricsServerOptions,
  type NamedChecker,
  type ProbeServerOptions,
  type RunningServer,
  startMetricsServer,
  startProbeServer,
} from './probes.js';
export { type DelayedStopRunnable, hasShutdownDelay, type Runnable, type SyncingRunnable } from './runnable.js';
export * from './signals.js';
export { DEFAULT_TLS_OPTIONS, parseTLSOptions, type TLSOptions } from './tls-options.js';
