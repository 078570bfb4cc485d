import type { KubeConfig } from '@kubernetes/client-node';
import { Manager, readInClusterNamespace, WebhookServer } from '@tally-ipam/controller-kit';
import { registerPoolWebhooks, setupIPAMProvider } from '@tally-ipam/ipam-provider';
import type { Logger } from 'pino';
import type { AppFlags } from './app-flags.js';

/** The manager's name: field manager of every write, and the prefix of the Events' reporting controller. */
export const MANAGER_NAME = 'tally-ipam';

export interface ControllerSetup {
  readonly manager: Manager;
  /** Undefined when `--webhook-port=0`. */
  readonly webhooks: WebhookServer | undefined;
}

export interface ControllerOptions {
  readonly kubeConfig: KubeConfig;
  readonly flags: AppFlags;
  readonly logger: Logger;
  /** Where the webhook server listens; every interface unless given (the demo binds to loopback). */
  readonly webhookHost?: string;
  /** Overrides the flag's port (the demo asks for a free one with 0). */
  readonly webhookPort?: number;
  readonly metricsBindAddress?: string;
  readonly healthProbeBindAddress?: string;
}

/**
 * The process's parts, wired as a CAPI provider's main does: a manager (cache, leader election, probes, metrics),
 * the IPAM provider's controllers, and the admission webhook server with the pool rules, which serves on every
 * replica and is part of readiness.
 */
export function buildController(options: ControllerOptions): ControllerSetup {
  const { flags, logger } = options;
  const manager = new Manager({
    kubeConfig: options.kubeConfig,
    name: MANAGER_NAME,
    logger,
    metricsBindAddress: options.metricsBindAddress ?? flags.manager.metricsBindAddress,
    healthProbeBindAddress: options.healthProbeBindAddress ?? flags.manager.healthProbeBindAddress,
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
  const provider = setupIPAMProvider(manager, {
    concurrency: flags.manager.concurrency,
    namespace: flags.manager.namespace,
    watchFilter: flags.manager.watchFilter,
  });
  const port = options.webhookPort ?? flags.webhook.port;
  if (flags.webhook.port === 0) return { manager, webhooks: undefined };
  const webhooks = new WebhookServer({
    ...(options.webhookHost ? { host: options.webhookHost } : {}),
    port,
    certDir: flags.webhook.certDir,
    certName: flags.webhook.certName,
    keyName: flags.webhook.keyName,
    registry: manager.registry,
    logger,
  });
  // The webhooks read the provider's caches, so they see exactly the namespaces the controllers see.
  registerPoolWebhooks(webhooks, provider);
  manager.add(webhooks);
  manager.addReadyzCheck('webhook', webhooks.startedChecker());
  return { manager, webhooks };
}
