import { METAL3_IPAM_GROUP, METAL3_IPAM_V1ALPHA1_VERSION } from '@tally-ipam/api-types';
import {
  type Cache,
  type ServiceClientMode,
  type UrlClientMode,
  type ValidatingWebhookSpec,
  validatingWebhookConfiguration,
  type WebhookServer,
} from '@tally-ipam/controller-kit';
import { addressPoolIndex, METAL3_ADDRESS_RESOURCE, METAL3_POOL_INDEX } from '../resources.js';
import {
  IPPOOL_WEBHOOK_NAME,
  IPPOOL_WEBHOOK_PATH,
  ipPoolAdmissionHandler,
  type Metal3AddressesView,
} from './ippool-admission.js';

type ValidatingWebhookConfiguration = ReturnType<typeof validatingWebhookConfiguration>;
type ValidatingWebhook = NonNullable<ValidatingWebhookConfiguration['webhooks']>[number];
type LabelSelector = NonNullable<ValidatingWebhookSpec['namespaceSelector']>;

/** How long a review waits for an IPAddress cache that has not listed yet before it fails (the API server retries). */
const SYNC_WAIT_MS = 10_000;

/**
 * The Metal3 IPAddresses of a pool, from the cache's IPAddress informer (the one the Metal3 controllers use when they
 * run on the same cache and namespace: same resource, scope and index function).
 */
export function cacheMetal3AddressesView(cache: Cache, namespace?: string): Metal3AddressesView {
  const informer = cache.informerFor(METAL3_ADDRESS_RESOURCE, {
    namespace: namespace || undefined,
    indexers: { [METAL3_POOL_INDEX]: addressPoolIndex },
  });
  return {
    async addressesOfPool(poolNamespace, pool) {
      if (!informer.hasSynced()) {
        await informer.whenSynced(AbortSignal.timeout(SYNC_WAIT_MS));
        if (!informer.hasSynced()) {
          throw new Error(`the Metal3 IPAddress cache has not synced after ${SYNC_WAIT_MS / 1000} s; try again`);
        }
      }
      return informer.store.byIndex(METAL3_POOL_INDEX, `${poolNamespace}/${pool}`).map((address) => ({
        name: address.metadata.name,
        address: address.spec.address ?? '',
      }));
    },
  };
}

/** Serves the IPPool update rule on `server`, reading IPAddresses through `view`. */
export function registerMetal3Webhooks(server: WebhookServer, view: Metal3AddressesView): void {
  server.register(IPPOOL_WEBHOOK_PATH, ipPoolAdmissionHandler(view));
}

export interface Metal3WebhookOptions {
  readonly client: ServiceClientMode | UrlClientMode;
  /**
   * A CEL expression deciding whether the API server calls the webhook at all. The shipped components put the
   * clusterctl variable in it (`'${TALLY_IPAM_ENABLE_METAL3:=false}' == 'true'`), so with Metal3 off no IPPool update
   * reaches Tally (Metal3's own webhook may be serving them). Absent: always called.
   */
  readonly enabledExpression?: string;
  readonly namespaceSelector?: LabelSelector;
  readonly objectSelector?: LabelSelector;
}

/** The match condition's name in the shipped configuration. */
export const METAL3_ENABLED_MATCH_CONDITION = 'metal3-ipam-enabled';

/** The ValidatingWebhook entry routing IPPool UPDATEs to the handler registered by `registerMetal3Webhooks`. */
export function metal3IPPoolWebhook(options: Metal3WebhookOptions): ValidatingWebhook {
  const configuration = metal3WebhookConfiguration({ ...options, name: 'metal3-ipam-webhook' });
  const [webhook] = configuration.webhooks ?? [];
  if (!webhook) throw new Error('the Metal3 webhook configuration has no webhook');
  return webhook;
}

/** A ValidatingWebhookConfiguration with only the Metal3 IPPool webhook (tests, out-of-cluster runs). */
export function metal3WebhookConfiguration(
  options: Metal3WebhookOptions & { readonly name: string; readonly labels?: Readonly<Record<string, string>> },
): ValidatingWebhookConfiguration {
  return validatingWebhookConfiguration({
    name: options.name,
    ...(options.labels ? { labels: options.labels } : {}),
    client: options.client,
    webhooks: [
      {
        name: IPPOOL_WEBHOOK_NAME,
        path: IPPOOL_WEBHOOK_PATH,
        rules: [
          {
            apiGroups: [METAL3_IPAM_GROUP],
            apiVersions: [METAL3_IPAM_V1ALPHA1_VERSION],
            resources: ['ippools'],
            operations: ['UPDATE'],
            scope: 'Namespaced',
          },
        ],
        ...(options.enabledExpression
          ? { matchConditions: [{ name: METAL3_ENABLED_MATCH_CONDITION, expression: options.enabledExpression }] }
          : {}),
        ...(options.namespaceSelector ? { namespaceSelector: options.namespaceSelector } : {}),
        ...(options.objectSelector ? { objectSelector: options.objectSelector } : {}),
      },
    ],
  });
}

/** `configuration` with the Metal3 IPPool webhook appended (how the IPAM controller's components ship it). */
export function withMetal3IPPoolWebhook(
  configuration: ValidatingWebhookConfiguration,
  options: Metal3WebhookOptions,
): ValidatingWebhookConfiguration {
  return { ...configuration, webhooks: [...(configuration.webhooks ?? []), metal3IPPoolWebhook(options)] };
}
