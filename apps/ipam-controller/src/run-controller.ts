import type { KubeConfig } from '@kubernetes/client-node';
import {
  buildControllerManager,
  type ControllerAppSetup,
  type ControllerManager,
  type ControllerManagerOptions,
} from '@tally-ipam/controller-kit';
import { registerPoolWebhooks, setupIPAMProvider } from '@tally-ipam/ipam-provider';
import type { Logger } from 'pino';
import { type AppFlags, IPAM_CONTROLLER_APP } from './app-flags.js';

/** The manager's name: field manager of every write, and the prefix of the Events' reporting controller. */
export const MANAGER_NAME = IPAM_CONTROLLER_APP.name;

/**
 * The app's own part of the process: the IPAM provider's controllers and, when the webhook server is on, the pool
 * admission rules. The webhooks read the provider's caches, so they see exactly the namespaces the controllers see.
 */
export const setupIPAMController: ControllerAppSetup = ({ manager, flags, webhooks }) => {
  const provider = setupIPAMProvider(manager, {
    concurrency: flags.manager.concurrency,
    namespace: flags.manager.namespace,
    watchFilter: flags.manager.watchFilter,
  });
  if (webhooks) registerPoolWebhooks(webhooks, provider);
};

export interface ControllerOptions
  extends Pick<
    ControllerManagerOptions,
    'webhookHost' | 'webhookPort' | 'metricsBindAddress' | 'healthProbeBindAddress'
  > {
  readonly kubeConfig: KubeConfig;
  readonly flags: AppFlags;
  readonly logger: Logger;
}

/** The manager with the IPAM provider and the pool webhooks, for the demo (which chooses its own addresses). */
export function buildController(options: ControllerOptions): ControllerManager {
  return buildControllerManager({ ...options, name: MANAGER_NAME, setup: setupIPAMController });
}
