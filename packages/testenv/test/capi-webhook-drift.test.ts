import { expect, it } from 'vitest';
import {
  type CrdView,
  conversionDrift,
  parseCrd,
  parseService,
  repairedWebhooks,
  type ServiceView,
  serviceDrift,
} from '../src/capi-webhook-drift.js';
import {
  CAPI_WEBHOOK_SERVICE,
  capiConversionClientConfig,
  readCapiConversions,
  readCapiWebhookConfigurations,
} from '../src/capi-webhooks.js';
import { loopbackClientConfig } from '../src/webhook-configurations.js';

// The webhook keeper's comparisons, without a cluster: what counts as drift, and what a repair keeps.
const endpoint = { port: 40_000, caPem: 'CA' };
const CRD = 'ipaddressclaims.ipam.cluster.x-k8s.io';

it('repairs only the clientConfig of its own webhooks, keeps every other field and webhook, adds a missing one', async () => {
  const validating = (await readCapiWebhookConfigurations()).find((c) => c.kind === 'ValidatingWebhookConfiguration');
  if (!validating) throw new Error('no validating configuration');
  const [first, second] = validating.webhooks;
  if (!first || !second) throw new Error('expected at least two webhooks');
  const kept = { name: first.name, clientConfig: loopbackClientConfig(endpoint, first.path), rules: ['as written'] };
  const foreign = { name: 'someone-elses.example.com', clientConfig: { url: 'https://elsewhere' } };
  const asRegistered = validating.webhooks.map((w) => ({
    name: w.name,
    clientConfig: loopbackClientConfig(endpoint, w.path),
  }));
  const metadata = { name: validating.name, resourceVersion: '7' };
  expect(repairedWebhooks({ metadata, webhooks: [...asRegistered, foreign] }, validating, endpoint)).toBeUndefined();

  const clusterctl = {
    name: second.name,
    clientConfig: { service: { ...CAPI_WEBHOOK_SERVICE, path: second.path, port: 443 } },
  };
  const repair = repairedWebhooks({ metadata, webhooks: [kept, clusterctl, foreign] }, validating, endpoint);
  expect(repair?.found).toBe('service capi-system/capi-webhook-service:443, no caBundle');
  expect(repair?.webhooks.slice(0, 3)).toEqual([
    kept,
    { name: second.name, clientConfig: loopbackClientConfig(endpoint, second.path) },
    foreign,
  ]);
  // The other webhooks were missing: added as registered.
  expect(repair?.webhooks).toHaveLength(validating.webhooks.length + 1);
});

it("compares the Service's type, externalName and ports, not what the API server defaults", () => {
  const service = (spec: Record<string, unknown>): ServiceView =>
    parseService({ metadata: { name: CAPI_WEBHOOK_SERVICE.name, resourceVersion: '1' }, spec });
  const ports = [{ name: 'webhook-server', port: 40_000, protocol: 'TCP', targetPort: 40_000 }];
  expect(
    serviceDrift(
      service({ type: 'ExternalName', externalName: 'localhost', ports, sessionAffinity: 'None' }),
      endpoint,
    ),
  ).toBeUndefined();
  const clusterctl = [{ port: 443, protocol: 'TCP', targetPort: 'webhook-server' }];
  expect(serviceDrift(service({ type: 'ExternalName', externalName: 'localhost', ports: clusterctl }), endpoint)).toBe(
    'type ExternalName, ports 443',
  );
  expect(serviceDrift(service({ type: 'ClusterIP', clusterIP: '10.0.0.1', ports: clusterctl }), endpoint)).toBe(
    'type ClusterIP, ports 443',
  );
});

it("compares a CRD's conversion strategy and clientConfig", async () => {
  const conversion = (await readCapiConversions()).find((c) => c.crdName === CRD);
  if (!conversion) throw new Error(`no conversion for ${CRD}`);
  const crd = (spec: Record<string, unknown>): CrdView => parseCrd({ metadata: { name: CRD }, spec });
  const registered = capiConversionClientConfig(conversion, endpoint);
  expect(
    conversionDrift(
      crd({
        conversion: { strategy: 'Webhook', webhook: { clientConfig: registered, conversionReviewVersions: ['v1'] } },
      }),
      conversion,
      endpoint,
    ),
  ).toBeUndefined();
  const port443 = { service: { ...registered.service, port: 443 } };
  expect(
    conversionDrift(
      crd({ conversion: { strategy: 'Webhook', webhook: { clientConfig: port443 } } }),
      conversion,
      endpoint,
    ),
  ).toBe('service capi-system/capi-webhook-service:443, no caBundle');
  expect(conversionDrift(crd({ conversion: { strategy: 'None' } }), conversion, endpoint)).toBe('strategy None');
});
