import type { KubeConfig } from '@kubernetes/client-node';
import {
  buildControllerManager,
  type ControllerAppSetup,
  type ControllerManager,
  type ControllerManagerOptions,
} from '@tally-ipam/controller-kit';
import {
  AddressLedgers,
  LEDGER_RESOURCE,
  LedgerEntryView,
  registerPoolWebhooks,
  setupIPAMProvider,
} from '@tally-ipam/ipam-provider';
import { setupMetal3IPAM } from '@tally-ipam/metal3-ipam';
import type { Logger } from 'pino';
import { type AppFlags, IPAM_CONTROLLER_APP } from './app-flags.js';

/** The manager's name: field manager of every write, and the prefix of the Events' reporting controller. */
export const MANAGER_NAME = IPAM_CONTROLLER_APP.name;

/**
 * The app's own part of the process: the IPAM provider's controllers and, when the webhook server is on, the pool
 * admission rules. The webhooks read the provider's caches, so they see exactly the namespaces the controllers see.
 */
export const setupIPAMController: ControllerAppSetup = (context) =>
  ipamControllerSetup({ enableMetal3: false })(context);

/** The provider's opt-in to address ledgers (a no-op where ledgers are its default). */
const LEDGER_MODE = { addressLedgers: true };

/**
 * The app's setup with its own options: `enableMetal3` (`--enable-metal3-ipam`) also serves Metal3's IPAM API, its
 * allocations held in the same address ledgers as Tally's (so the provider runs in ledger mode).
 */
export function ipamControllerSetup(options: { readonly enableMetal3: boolean }): ControllerAppSetup {
  return ({ manager, flags, webhooks }) => {
    const scope = {
      concurrency: flags.manager.concurrency,
      namespace: flags.manager.namespace,
      watchFilter: flags.manager.watchFilter,
    };
    const provider = setupIPAMProvider(manager, {
      ...scope,
      ...(options.enableMetal3 ? LEDGER_MODE : {}),
    });
    if (options.enableMetal3) {
      // The provider's own writer and entry view when it hands them out (one batching writer for both APIs), else a
      // writer and a view of the Metal3 controllers' own on the manager's one ledger informer.
      const ledgerInformer = manager.cache.informerFor(LEDGER_RESOURCE);
      const shared = provider as object;
      const ledgers =
        'ledgers' in shared && shared.ledgers instanceof AddressLedgers
          ? shared.ledgers
          : new AddressLedgers({ client: manager.client, store: ledgerInformer.store, now: Date.now });
      const ledgerEntries =
        'ledgerEntries' in shared && shared.ledgerEntries instanceof LedgerEntryView
          ? shared.ledgerEntries
          : new LedgerEntryView(ledgerInformer);
      setupMetal3IPAM(manager, { ...scope, ledgers, ledgerEntries });
    }
    if (webhooks) registerPoolWebhooks(webhooks, provider);
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
