import type { ControllerAppSetup } from '@tally-ipam/controller-kit/app';
import { registerSimWebhooks, setupSimInfraProvider } from '@tally-ipam/sim-infra';
import { SIM_INFRA_CONTROLLER_APP } from './app-flags.js';

/** The manager's name: field manager of its writes and the prefix of its Events' reporting controller. */
export const MANAGER_NAME = SIM_INFRA_CONTROLLER_APP.name;

/** The app's own part of the process: the Sim controllers and, when the webhook server is on, the template rules. */
export const setupSimInfraController: ControllerAppSetup = ({ manager, flags, webhooks }) => {
  setupSimInfraProvider(manager, {
    concurrency: flags.manager.concurrency,
    namespace: flags.manager.namespace,
    watchFilter: flags.manager.watchFilter,
    fieldManager: MANAGER_NAME,
  });
  if (webhooks) registerSimWebhooks(webhooks);
};
