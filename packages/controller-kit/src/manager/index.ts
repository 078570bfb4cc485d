// @tally-ipam/controller-kit/manager: the Manager and what it runs (runnables, leader election, probes, metrics and
// diagnostics endpoints), its flags, kubeconfig loading, logging and signals. The Lease arithmetic of leader election
// and TLS plumbing stay unexported, and so do the servers and the leader elector the Manager starts itself.
export { APIServerUnreachableError, CacheSyncTimeoutError } from './api-server-monitor.js';
export type { DiagnosticsAuthOptions } from './diagnostics.js';
export { FlagError } from './flag-error.js';
export {
  LOG_LEVELS,
  LOGGING_FORMATS,
  type LoggingFormat,
  type LogLevel,
  type ManagerFlagDefaults,
  type ManagerFlags,
  managerFlagsUsage,
  parseManagerFlags,
} from './flags.js';
export { loadKubeConfig, readInClusterNamespace } from './kubeconfig.js';
export { LeaderElectionLostError, type LeaderElectionTimings } from './leader-election.js';
export { LEASE_RESOURCE } from './lease.js';
export { type CreateLoggerOptions, createLogger } from './logger.js';
export {
  type LeaderElectionOptions,
  Manager,
  type ManagerOptions,
  type SecureDiagnosticsOptions,
  ShutdownTimeoutError,
} from './manager.js';
export type { Checker } from './probes.js';
export type { DelayedStopRunnable, Runnable, SyncingRunnable } from './runnable.js';
export { setupSignalHandler } from './signals.js';
export { parseTLSOptions, type TLSOptions } from './tls-options.js';
