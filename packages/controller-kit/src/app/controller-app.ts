import { setMaxListeners } from 'node:events';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { FlagError } from '../manager/flag-error.js';
import { kubeConfigNamedExplicitly, loadKubeConfig, readInClusterNamespace } from '../manager/kubeconfig.js';
import { createLogger } from '../manager/logger.js';
import { Manager } from '../manager/manager.js';
import { setupSignalHandler } from '../manager/signals.js';
import { WebhookServer } from '../webhook/server.js';
import {
  type ControllerAppIdentity,
  type ControllerFlags,
  controllerFlagsUsage,
  parseControllerFlags,
} from './controller-flags.js';

/** The exit codes of a controller executable: the contract with the kubelet and with scripts. */
export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_BAD_FLAGS = 2;

/** What an app's `setup` receives to register its controllers and webhook handlers. */
export interface ControllerAppContext {
  readonly manager: Manager;
  readonly flags: ControllerFlags;
  readonly logger: Logger;
  /** The admission webhook server, added to the manager after `setup`; undefined with `--webhook-port=0`. */
  readonly webhooks: WebhookServer | undefined;
}

/** The app's own part: registers its provider's controllers on the manager and its handlers on the webhook server. */
export type ControllerAppSetup = (context: ControllerAppContext) => void;

export interface ControllerManagerOptions {
  readonly kubeConfig: KubeConfig;
  /** The manager's name (field manager, Events' reporting controller). */
  readonly name: string;
  readonly flags: ControllerFlags;
  readonly logger: Logger;
  readonly setup: ControllerAppSetup;
  /** Where the webhook server listens; every interface unless given. */
  readonly webhookHost?: string;
  /** Overrides `--webhook-port` when the server is enabled (0 picks a free port); `--webhook-port=0` still disables. */
  readonly webhookPort?: number;
  /**
   * Plain-HTTP metrics at this address instead of the flags' diagnostics server (e.g. `127.0.0.1:0` for a local
   * run); the flags' `--diagnostics-address` is then not served.
   */
  readonly metricsBindAddress?: string;
  readonly healthProbeBindAddress?: string;
  readonly gracefulShutdownTimeoutMs?: number;
}

export interface ControllerManager {
  readonly manager: Manager;
  /** Undefined when `--webhook-port=0`. */
  readonly webhooks: WebhookServer | undefined;
}

/**
 * The process's parts, wired as a CAPI provider's main does: a manager from the flags (cache, leader election,
 * probes, metrics), the app's controllers (`setup`), and the admission webhook server, which serves on every replica
 * and is part of readiness.
 */
export function buildControllerManager(options: ControllerManagerOptions): ControllerManager {
  const { flags, logger } = options;
  const insecureMetrics =
    options.metricsBindAddress ?? (flags.manager.insecureDiagnostics ? flags.manager.diagnosticsAddress : undefined);
  const manager = new Manager({
    kubeConfig: options.kubeConfig,
    name: options.name,
    logger,
    metricsBindAddress: insecureMetrics ?? '0',
    diagnostics:
      insecureMetrics === undefined
        ? {
            address: flags.manager.diagnosticsAddress,
            tls: flags.manager.tls,
            certDir: flags.manager.diagnosticsCertDir,
          }
        : undefined,
    healthProbeBindAddress: options.healthProbeBindAddress ?? flags.manager.healthProbeBindAddress,
    syncPeriodMs: flags.manager.syncPeriodMs,
    cacheSyncTimeoutMs: flags.manager.cacheSyncTimeoutMs,
    apiServerUnreachableTimeoutMs: flags.manager.apiServerUnreachableTimeoutMs,
    kubeAPIRateLimit: { qps: flags.manager.kubeAPIQPS, burst: flags.manager.kubeAPIBurst },
    ...(options.gracefulShutdownTimeoutMs === undefined
      ? {}
      : { gracefulShutdownTimeoutMs: options.gracefulShutdownTimeoutMs }),
    leaderElection: flags.manager.leaderElect
      ? {
          namespace: flags.manager.leaderElectionNamespace ?? readInClusterNamespace() ?? 'default',
          id: flags.manager.leaderElectionId,
          leaseDurationMs: flags.manager.leaseDurationMs,
          renewDeadlineMs: flags.manager.renewDeadlineMs,
          retryPeriodMs: flags.manager.retryPeriodMs,
        }
      : undefined,
  });
  const webhooks =
    flags.webhook.port === 0
      ? undefined
      : new WebhookServer({
          ...(options.webhookHost ? { host: options.webhookHost } : {}),
          port: options.webhookPort ?? flags.webhook.port,
          certDir: flags.webhook.certDir,
          certName: flags.webhook.certName,
          keyName: flags.webhook.keyName,
          shutdownDelayMs: flags.webhook.shutdownDelayMs,
          tls: flags.manager.tls,
          registry: manager.registry,
          logger,
        });
  options.setup({ manager, flags, logger, webhooks });
  if (webhooks) {
    manager.add(webhooks);
    manager.addReadyzCheck('webhook', webhooks.startedChecker());
  }
  return { manager, webhooks };
}

export interface ControllerAppOptions {
  readonly app: ControllerAppIdentity;
  readonly setup: ControllerAppSetup;
  /**
   * Runs instead of the manager when no cluster was named explicitly (no `--kubeconfig`, no `$KUBECONFIG`, not in a
   * pod; see `kubeConfigNamedExplicitly`), e.g. a demo on a local control plane; resolves with the exit code. Without
   * it, the manager uses `~/.kube/config` as kubectl does.
   */
  readonly withoutExplicitCluster?: (flags: ControllerFlags, signal: AbortSignal) => Promise<number>;
  /** Defaults to `process.argv.slice(2)`. */
  readonly argv?: readonly string[];
  /** Stops the manager; defaults to `setupSignalHandler` (SIGTERM/SIGINT, a second one exits 1 at once). */
  readonly signal?: AbortSignal;
  /**
   * A stop asked for other than by a signal, e.g. by the parent process that runs the app (`npm start`'s script,
   * which is sent SIGTERM itself): stops as the first SIGTERM/SIGINT does, but is never counted as a signal. The
   * parent may pass on the very Ctrl-C the app receives too (the terminal signals the whole process group): counted
   * as two signals, that stop would become the second signal's immediate exit 1.
   */
  readonly stopRequest?: AbortSignal;
  /** Where usage and flag errors go; default process stdout and stderr. */
  readonly stdout?: (text: string) => void;
  readonly stderr?: (text: string) => void;
  /** The process logger; defaults to `createLogger` (JSON lines on stdout) at `--log-level`. */
  readonly logger?: (flags: ControllerFlags) => Logger;
  readonly gracefulShutdownTimeoutMs?: number;
}

function orStopRequest(signal: AbortSignal, stopRequest: AbortSignal | undefined): AbortSignal {
  return stopRequest === undefined ? signal : AbortSignal.any([signal, stopRequest]);
}

/**
 * A controller executable's main, as CAPI providers write it: parses the manager and webhook flags, loads the
 * kubeconfig, builds the manager with the app's `setup`, runs it until the signal, and resolves with the exit code —
 * 0 after a clean stop (SIGTERM/SIGINT) or `--help`; 2 on a bad flag, with the flag, the value and the usage on
 * stderr; 1 when the manager fails (lost Lease, no kubeconfig, a runnable that failed), logged as `manager failed`.
 * Call as `process.exit(await runControllerApp(...))`: the exit code is the contract with the kubelet.
 */
export async function runControllerApp(options: ControllerAppOptions): Promise<number> {
  const stdout = options.stdout ?? ((text: string) => process.stdout.write(text));
  const stderr = options.stderr ?? ((text: string) => process.stderr.write(text));
  // Without an explicit cluster the app runs something else, so ~/.kube/config is no default of --kubeconfig.
  const usageOf = {
    ...options.app,
    explicitClusterOnly: options.app.explicitClusterOnly || !!options.withoutExplicitCluster,
  };
  let flags: ControllerFlags;
  try {
    flags = parseControllerFlags(options.argv ?? process.argv.slice(2), options.app);
  } catch (error) {
    if (!(error instanceof FlagError)) throw error;
    stderr(`${error.message}\n\n${controllerFlagsUsage(usageOf)}\n`);
    return EXIT_BAD_FLAGS;
  }
  if (flags.help) {
    stdout(`${controllerFlagsUsage(usageOf)}\n`);
    return EXIT_OK;
  }
  if (flags.manager.version) {
    stdout(`${options.app.command} ${options.app.version ?? 'unknown'}\n`);
    return EXIT_OK;
  }
  if (options.withoutExplicitCluster && !kubeConfigNamedExplicitly(flags.manager.kubeconfig)) {
    const signal = orStopRequest(options.signal ?? setupSignalHandler(), options.stopRequest);
    try {
      return await options.withoutExplicitCluster(flags, signal);
    } catch (error) {
      stderr(
        `${options.app.command} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      return EXIT_FAILED;
    }
  }
  const logger =
    options.logger?.(flags) ??
    createLogger({ name: options.app.name, level: flags.manager.logLevel, format: flags.manager.loggingFormat });
  for (const deprecation of flags.manager.deprecations) logger.warn(deprecation);
  const signal = orStopRequest(options.signal ?? setupSignalHandler(logger), options.stopRequest);
  // The signal handler logs the signals; this says why a stop came without one.
  const { stopRequest } = options;
  stopRequest?.addEventListener(
    'abort',
    () => {
      const reason = stopRequest.reason instanceof Error ? stopRequest.reason.message : String(stopRequest.reason);
      logger.info({ reason }, 'stop requested, shutting down gracefully');
    },
    { once: true },
  );
  // Each informer and controller listens on this signal; the default limit of 10 listeners would warn.
  setMaxListeners(100, signal);
  try {
    const { manager } = buildControllerManager({
      kubeConfig: loadKubeConfig(flags.manager.kubeconfig),
      name: options.app.name,
      flags,
      logger,
      setup: options.setup,
      ...(options.gracefulShutdownTimeoutMs === undefined
        ? {}
        : { gracefulShutdownTimeoutMs: options.gracefulShutdownTimeoutMs }),
    });
    await manager.start(signal);
    logger.info('stopped');
    return EXIT_OK;
  } catch (error) {
    logger.error({ err: error }, 'manager failed');
    // The last line a person reads in `kubectl logs --previous`, plain even when the log format is JSON.
    stderr(`${options.app.command}: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_FAILED;
  }
}
