import type { V1LabelSelector, V1ValidatingWebhookConfiguration } from '@kubernetes/client-node';
import { TALLY_GROUP, TALLY_V1ALPHA1_VERSION, type TallyPoolKind } from '@tally-ipam/api-types';
import {
  Cache,
  type ServiceClientMode,
  type UrlClientMode,
  validatingWebhookConfiguration,
  type WebhookServer,
} from '@tally-ipam/controller-kit';
import type { IPAMProvider } from '../setup.js';
import { type PoolAdmissionOptions, poolAdmissionHandler } from './pool-admission.js';
import {
  cachePoolAllocationsView,
  type PoolAllocationsView,
  providerPoolAllocationsView,
} from './pool-allocations-view.js';
import { POOL_KINDS } from './pool-kinds.js';

/** The name of the ValidatingWebhookConfiguration the provider ships. */
export const POOL_WEBHOOK_CONFIGURATION_NAME = 'tally-ipam-validating-webhook-configuration';

/** `/validate-ipam-cluster-x-k8s-io-v1alpha1-tallyippool`: controller-runtime's path scheme for the kind. */
export function poolWebhookPath(kind: TallyPoolKind): string {
  return `/validate-${TALLY_GROUP.replaceAll('.', '-')}-${TALLY_V1ALPHA1_VERSION}-${kind.toLowerCase()}`;
}

/** `validation.tallyippool.ipam.cluster.x-k8s.io`, the reference provider's naming. */
export function poolWebhookName(kind: TallyPoolKind): string {
  return `validation.${kind.toLowerCase()}.${TALLY_GROUP}`;
}

/**
 * Serves the admission rules of the four pool kinds on `server`. Pass the provider (`setupIPAMProvider`'s result:
 * its caches, in its namespace scope), a cache (all namespaces; informers created here and synced with the
 * manager), or any `PoolAllocationsView`; `options.events` records the Event of a pool `clusterctl move` takes away
 * while claims here still hold its addresses. Returns the view it reads from.
 */
export function registerPoolWebhooks(
  server: WebhookServer,
  source: IPAMProvider | Cache | PoolAllocationsView,
  options: PoolAdmissionOptions = {},
): PoolAllocationsView {
  const view =
    source instanceof Cache
      ? cachePoolAllocationsView(source)
      : 'allocatedAddresses' in source
        ? providerPoolAllocationsView(source)
        : source;
  for (const kind of POOL_KINDS) {
    server.register(poolWebhookPath(kind.kind), poolAdmissionHandler(kind, view, options));
  }
  return view;
}

export interface PoolWebhookConfigurationOptions {
  /** Defaults to `POOL_WEBHOOK_CONFIGURATION_NAME`. */
  readonly name?: string;
  readonly labels?: Readonly<Record<string, string>>;
  /** In cluster: the webhook Service and the cert-manager Certificate; out of cluster: a URL and CA bundle. */
  readonly client: ServiceClientMode | UrlClientMode;
  /** Limits the namespaced kinds (e.g. to one test namespace); cluster-scoped pools ignore it. */
  readonly namespaceSelector?: V1LabelSelector;
  /** Limits every kind by the pool's labels. */
  readonly objectSelector?: V1LabelSelector;
  readonly timeoutSeconds?: number;
}

/** The ValidatingWebhookConfiguration routing CREATE, UPDATE and DELETE of every pool kind to its handler. */
export function poolWebhookConfiguration(options: PoolWebhookConfigurationOptions): V1ValidatingWebhookConfiguration {
  return validatingWebhookConfiguration({
    name: options.name ?? POOL_WEBHOOK_CONFIGURATION_NAME,
    ...(options.labels ? { labels: options.labels } : {}),
    client: options.client,
    webhooks: POOL_KINDS.map((kind) => ({
      name: poolWebhookName(kind.kind),
      path: poolWebhookPath(kind.kind),
      rules: [
        {
          apiGroups: [TALLY_GROUP],
          apiVersions: [TALLY_V1ALPHA1_VERSION],
          resources: [kind.plural],
          operations: ['CREATE', 'UPDATE', 'DELETE'],
          scope: kind.namespaced ? 'Namespaced' : 'Cluster',
        },
      ],
      // A delete by `clusterctl move` records an Event on the pool (never for a dry run).
      sideEffects: 'NoneOnDryRun',
      ...(options.namespaceSelector && kind.namespaced ? { namespaceSelector: options.namespaceSelector } : {}),
      ...(options.objectSelector ? { objectSelector: options.objectSelector } : {}),
      ...(options.timeoutSeconds !== undefined ? { timeoutSeconds: options.timeoutSeconds } : {}),
    })),
  });
}
