import type { KubeConfig } from '@kubernetes/client-node';
import { Manager, readInClusterNamespace, WebhookServer } from '@tally-ipam/controller-kit';
import { registerSimWebhooks, setupSimInfraProvider } from '@tally-ipam/sim-infra';
import type { Logger } from 'pino';
import type { AppFlags } from './app-flags.js';

/** The manager's name: field manager of its writes and the prefix of its Events' reporting controller. */
export const MANAGER_NAME = 'sim-infra-controller';

export interface ControllerSetup {
  readonly manager: Manager;
  /** Undefined when `--webhook-port=0`. */
  readonly webhooks: WebhookServer | undefined;
}

export interface ControllerOptions {
  readonly kubeConfig: KubeConfig;
  readonly flags: AppFlags;
  readonly logger: Logger;
}

/**
 * The process's parts, wired as a CAPI provider's main does (and as apps/ipam-controller does): a manager (cache,
 * leader election, probes, metrics), the Sim controllers, and the template webhook server, which serves on every
 * replica and is part of readiness.
 */
export function buildController(options: ControllerOptions): ControllerSetup {
  const { flags, logger } = options;
  const manager = new Manager({
    kubeConfig: options.kubeConfig,
    name: MANAGER_NAME,
    logger,
    metricsBindAddress: flags.manager.metricsBindAddress,
    healthProbeBindAddress: flags.manager.healthProbeBindAddress,
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
  setupSimInfraProvider(manager, {
    concurrency: flags.manager.concurrency,
    namespace: flags.manager.namespace,
    watchFilter: flags.manager.watchFilter,
    fieldManager: MANAGER_NAME,
  });
  if (flags.webhook.port === 0) return { manager, webhooks: undefined };
  const webhooks = new WebhookServer({
    port: flags.webhook.port,
    certDir: flags.webhook.certDir,
    certName: flags.webhook.certName,
    keyName: flags.webhook.keyName,
    registry: manager.registry,
    logger,
  });
  registerSimWebhooks(webhooks);
  manager.add(webhooks);
  manager.addReadyzCheck('webhook', webhooks.startedChecker());
  return { manager, webhooks };
}
