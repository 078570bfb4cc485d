import type { KubeConfig } from '@kubernetes/client-node';
import {
  conversionDrift,
  parseCrd,
  parseService,
  parseWebhookConfiguration,
  repairedWebhooks,
  serviceDrift,
} from './capi-webhook-drift.js';
import {
  applyCapiWebhookService,
  CAPI_WEBHOOK_FIELD_MANAGER,
  CAPI_WEBHOOK_SERVICE,
  capiWebhookServicePath,
  capiWebhookServiceSpec,
  patchCapiConversion,
  type RegisteredCapiWebhooks,
} from './capi-webhooks.js';
import { errorMessage } from './format.js';
import { kubeRequest } from './kube-request.js';
import { type CollectionWatch, watchCollection } from './kube-watch.js';
import {
  expectSuccess,
  registerLoopbackWebhooks,
  type WebhookEndpoint,
  webhookConfigurationPath,
} from './webhook-configurations.js';

/**
 * Why a keeper: `clusterctl init` writes Cluster API's real core components over what `registerCapiWebhooks` set up
 * for a manager on this machine, each existing object with a JSON merge patch of the whole shipped object. Lists are
 * replaced: every webhook of both configurations then names the Service at port 443 with no caBundle (cert-manager's
 * CA injection is assumed), and the Service's ports become 443; every Cluster API write fails from then on. A CRD's
 * conversion keeps the manager's port and CA only because the shipped one leaves them out; a CRD clusterctl creates
 * has neither. The keeper watches these objects and writes testenv's fields back.
 */
export interface CapiWebhookKeeper {
  /** Stops watching and waits for a repair in flight: once it resolves, the keeper writes nothing more. */
  stop(): Promise<void>;
}

export interface CapiWebhookKeeperOptions extends RegisteredCapiWebhooks {
  readonly endpoint: WebhookEndpoint;
  /** One line per repair and per failure to repair. */
  readonly log: (message: string) => void;
}

/**
 * Starts keeping what `registerCapiWebhooks` registered: it watches the two webhook configurations, the Service and
 * the converted CRDs and, whenever one of them differs from testenv's settings in a field testenv set, writes those
 * fields back (the webhooks' `clientConfig`, the Service's type, externalName and ports, the CRD's conversion
 * `strategy` and `clientConfig`), logging each repair. A deleted configuration or Service is made again; a deleted CRD
 * has nothing to convert. Its own writes produce no further repair, since it compares only those fields. Repairs run
 * one at a time, with the latest state of each object.
 */
export function startCapiWebhookKeeper(kc: KubeConfig, options: CapiWebhookKeeperOptions): CapiWebhookKeeper {
  const { endpoint, log } = options;
  const pending = new Map<string, () => Promise<void>>();
  let draining: Promise<void> | undefined;
  let stopped = false;

  const drain = async (): Promise<void> => {
    for (let next = pending.entries().next(); !stopped && !next.done; next = pending.entries().next()) {
      const [key, repair] = next.value;
      pending.delete(key);
      try {
        await repair();
      } catch (error) {
        // A 409 means the object changed since this event: its next event (already on its way) is checked instead.
        if (!/HTTP 409/.test(errorMessage(error)))
          log(`webhook keeper: could not repair ${key}: ${errorMessage(error)}`);
      }
    }
    draining = undefined;
  };
  const enqueue = (key: string, repair: () => Promise<void>): void => {
    if (stopped) return;
    pending.set(key, repair);
    draining ??= drain();
  };
  // The latest state needs no repair: one queued for an older state would only fail (409) or repeat a no-op.
  const settled = (key: string): void => {
    pending.delete(key);
  };

  const watches: CollectionWatch[] = [];
  // One list+watch per kind. `onGone` runs when a list is empty or the object is deleted (each watch selects one
  // object by name, except the CRDs', which has no `onGone`).
  const keep = (path: string, onObject: (object: unknown) => void, onGone?: () => void): void => {
    // One line per outage, not one per retry: an API server that is down (or stopped before the manager) would
    // otherwise print every second.
    let failing = false;
    watches.push(
      watchCollection(kc, {
        path,
        onList: (items) => {
          if (failing) log(`webhook keeper: watching ${path} again`);
          failing = false;
          for (const item of items) onObject(item);
          if (items.length === 0) onGone?.();
        },
        onEvent: (type, object) => (type === 'DELETED' ? onGone?.() : onObject(object)),
        onError: (error) => {
          if (!failing) log(`webhook keeper: ${error.message}; retrying every second`);
          failing = true;
        },
      }),
    );
  };

  for (const configuration of options.configurations) {
    const key = `${configuration.kind} ${configuration.name}`;
    const path = webhookConfigurationPath(configuration.kind, configuration.name);
    const collection = path.slice(0, path.lastIndexOf('/'));
    const recreate = (): void =>
      enqueue(key, async () => {
        await registerLoopbackWebhooks(kc, configuration, endpoint, { fieldManager: CAPI_WEBHOOK_FIELD_MANAGER });
        log(`webhook keeper: ${key} was deleted; registered it again for 127.0.0.1:${endpoint.port}`);
      });
    keep(
      `${collection}?fieldSelector=${encodeURIComponent(`metadata.name=${configuration.name}`)}`,
      (object) => {
        const current = parseWebhookConfiguration(object);
        if (repairedWebhooks(current, configuration, endpoint) === undefined) return settled(key);
        enqueue(key, async () => {
          const repair = repairedWebhooks(current, configuration, endpoint);
          if (repair === undefined) return;
          await expectSuccess(
            `pointing ${key} back at the manager`,
            kubeRequest(kc, {
              method: 'PATCH',
              path,
              // A merge patch replaces the list whole; the resourceVersion makes it fail rather than undo a newer write.
              body: JSON.stringify({
                metadata: { resourceVersion: current.metadata.resourceVersion },
                webhooks: repair.webhooks,
              }),
              contentType: 'application/merge-patch+json',
            }),
          );
          log(
            `webhook keeper: ${key} had ${repair.changed} webhooks at ${repair.found}; pointed them back at ` +
              `https://127.0.0.1:${endpoint.port} with testenv's CA`,
          );
        });
      },
      recreate,
    );
  }

  const serviceKey = `Service ${CAPI_WEBHOOK_SERVICE.namespace}/${CAPI_WEBHOOK_SERVICE.name}`;
  keep(
    `/api/v1/namespaces/${CAPI_WEBHOOK_SERVICE.namespace}/services?fieldSelector=${encodeURIComponent(
      `metadata.name=${CAPI_WEBHOOK_SERVICE.name}`,
    )}`,
    (object) => {
      const current = parseService(object);
      const drift = serviceDrift(current, endpoint);
      if (drift === undefined) return settled(serviceKey);
      enqueue(serviceKey, async () => {
        const { name, resourceVersion, labels, annotations } = current.metadata;
        // A PUT, so the spec is exactly testenv's: a ClusterIP Service's clusterIP, selector and port 443 must go
        // (the API server releases the clusterIP when the type becomes ExternalName). Labels and annotations stay.
        await expectSuccess(
          `making ${serviceKey} an ExternalName Service again`,
          kubeRequest(kc, {
            method: 'PUT',
            path: capiWebhookServicePath(),
            body: JSON.stringify({
              apiVersion: 'v1',
              kind: 'Service',
              metadata: { name, namespace: CAPI_WEBHOOK_SERVICE.namespace, resourceVersion, labels, annotations },
              spec: capiWebhookServiceSpec(endpoint),
            }),
            contentType: 'application/json',
          }),
        );
        log(
          `webhook keeper: ${serviceKey} had ${drift}; set testenv's ExternalName spec (localhost:${endpoint.port}) again`,
        );
      });
    },
    () =>
      enqueue(serviceKey, async () => {
        await applyCapiWebhookService(kc, endpoint);
        log(`webhook keeper: ${serviceKey} was deleted; created it again`);
      }),
  );

  const conversions = new Map(options.conversions.map((c) => [c.crdName, c]));
  if (conversions.size > 0) {
    keep('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', (object) => {
      const current = parseCrd(object);
      const conversion = conversions.get(current.metadata.name);
      if (conversion === undefined) return;
      const drift = conversionDrift(current, conversion, endpoint);
      if (drift === undefined) return settled(`CRD ${conversion.crdName}`);
      enqueue(`CRD ${conversion.crdName}`, async () => {
        // The patch sets only testenv's fields; a CRD deleted meanwhile answers 404 and is left alone.
        if (await patchCapiConversion(kc, conversion, endpoint)) {
          log(`webhook keeper: CRD ${conversion.crdName} converted through ${drift}; pointed it back at the manager`);
        }
      });
    });
  }

  return {
    stop: async () => {
      stopped = true;
      await Promise.all(watches.map((watch) => watch.stop()));
      await draining;
    },
  };
}
