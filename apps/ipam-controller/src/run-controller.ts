import type { KubeConfig } from '@kubernetes/client-node';
import {
  buildControllerManager,
  type ControllerAppSetup,
  type ControllerManager,
  type ControllerManagerOptions,
} from '@tally-ipam/controller-kit';
import {
  providerInClusterAddressesView,
  registerInClusterPoolWebhooks,
  registerPoolWebhooks,
  setupIPAMProvider,
} from '@tally-ipam/ipam-provider';
import { cacheMetal3AddressesView, registerMetal3Webhooks, setupMetal3IPAM } from '@tally-ipam/metal3-ipam';
import type { Logger } from 'pino';
import { type AppFlags, IPAM_CONTROLLER_APP } from './app-flags.js';

/** The manager's name: field manager of every write, and the prefix of the Events' reporting controller. */
export const MANAGER_NAME = IPAM_CONTROLLER_APP.name;

/**
 * The app's own part of the process: the IPAM provider's controllers and, when the webhook server is on, the pool
 * admission rules. The webhooks read the provider's caches, so they see exactly the namespaces the controllers see.
 */
export const setupIPAMController: ControllerAppSetup = (context) =>
  ipamControllerSetup({ enableMetal3: false, enableInCluster: false })(context);

/** The app's own options (its own flags). */
export interface IPAMControllerOptions {
  /** `--enable-metal3-ipam`. */
  readonly enableMetal3: boolean;
  /** `--enable-in-cluster-ipam`. */
  readonly enableInCluster: boolean;
}

/**
 * The app's setup with its own options: `enableMetal3` (`--enable-metal3-ipam`) also serves Metal3's IPAM API, its
 * allocations held through the provider's own ledger writer, entry view and overlay of its own writes (one address
 * space, one batching writer, one read-your-own-writes overlay), and the IPPool update webhook. `enableInCluster`
 * (`--enable-in-cluster-ipam`) also serves the in-cluster provider's IP and prefix pool kinds, from the provider
 * itself (their allocations are its own; its start-up adoption covers their IPAddresses), and their validating
 * webhooks.
 */
export function ipamControllerSetup(options: IPAMControllerOptions): ControllerAppSetup {
  return ({ manager, flags, webhooks }) => {
    const scope = {
      concurrency: flags.manager.concurrency,
      namespace: flags.manager.namespace,
      watchFilter: flags.manager.watchFilter,
    };
    const provider = setupIPAMProvider(manager, { ...scope, inClusterIPAM: options.enableInCluster });
    if (options.enableMetal3) {
      const metal3 = setupMetal3IPAM(manager, {
        ...scope,
        ledgers: provider.ledgers,
        ledgerEntries: provider.ledgerEntries,
        assumedEntries: provider.assumedEntries,
      });
      // Taking over from Metal3's controller: its IPAddresses are entered into the ledgers before any claim of
      // either API is given an address, so none of theirs can be handed out again.
      provider.addAllocationBarrier(() => metal3.addressesAdopted());
    }
    if (webhooks) {
      registerPoolWebhooks(webhooks, provider, { events: manager.getEventRecorderFor('pool-webhook') });
    }
    // Metal3's IPPool update rule, only with Metal3 on (off, the shipped match condition sends nothing here).
    if (webhooks && options.enableMetal3) {
      registerMetal3Webhooks(webhooks, cacheMetal3AddressesView(manager.cache, scope.namespace));
    }
    // The in-cluster pool rules (IP and prefix pools), only with those kinds served (off, the shipped match condition sends nothing here).
    if (webhooks && options.enableInCluster) {
      registerInClusterPoolWebhooks(webhooks, providerInClusterAddressesView(provider));
    }
  };
}

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
