/**
 * Metal3's IPPool update rule (ip-address-manager v1.10.1's webhook), served by Tally's webhook server and called by
 * the real kube-apiserver: after an update every pre-allocation and every address in use (an IPAddress naming the
 * pool) lies inside a range; metadata-only updates pass.
 */
import { Cache, type ResourceKind, WebhookServer } from '@tally-ipam/controller-kit';
import type { Client } from '@tally-ipam/controller-kit/client';
import { asKubeApiError } from '@tally-ipam/controller-kit/client';
import { createServingCertDir, eventually, type ServingCertDir } from '@tally-ipam/testenv';
import { testEnv } from '@tally-ipam/testenv/vitest';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cacheMetal3AddressesView,
  IPPOOL_WEBHOOK_NAME,
  METAL3_ADDRESS_RESOURCE,
  METAL3_POOL_RESOURCE,
  type Metal3AddressesView,
  metal3WebhookConfiguration,
  registerMetal3Webhooks,
  validateIPPoolUpdate,
} from '../src/index.js';
import { createPool, TestNamespaces, testClient } from './support.js';

const WEBHOOK_CONFIGURATIONS: ResourceKind = {
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingWebhookConfiguration',
  plural: 'validatingwebhookconfigurations',
  namespaced: false,
};

describe('validateIPPoolUpdate (pure)', () => {
  const spec = {
    namePrefix: 'p',
    pools: [{ start: '10.0.0.10', end: '10.0.0.20' }, { subnet: '10.0.1.0/30' }, { start: 'not-an-ip', end: 'x' }],
    preAllocations: { inside: '10.0.0.12', subnetOnly: '10.0.1.3', outside: '10.0.0.21', broken: 'nope' },
  };

  it('names each pre-allocation and each address in use outside every range, with field and value', () => {
    expect(
      validateIPPoolUpdate(spec, [
        { name: 'p-10-0-0-20', address: '10.0.0.20' },
        { name: 'p-10-0-1-0', address: '10.0.1.0' },
        { name: 'p-fd00--1', address: 'fd00::1' },
      ]),
    ).toEqual([
      { field: 'spec.preAllocations[outside]', value: '10.0.0.21', message: 'is outside every range of spec.pools' },
      { field: 'spec.preAllocations[broken]', value: 'nope', message: 'is outside every range of spec.pools' },
      // A subnet-only range starts after the address it names (Metal3: 10.0.1.1 for 10.0.1.0/30).
      {
        field: 'spec.pools',
        value: '10.0.1.0',
        message: 'no longer holds this address, in use by IPAddress p-10-0-1-0',
      },
      { field: 'spec.pools', value: 'fd00::1', message: 'no longer holds this address, in use by IPAddress p-fd00--1' },
    ]);
  });

  it('accepts a spec whose ranges hold everything (the bounds are inclusive)', () => {
    expect(
      validateIPPoolUpdate({ namePrefix: 'p', pools: [{ start: '10.0.0.10', end: '10.0.0.20' }] }, [
        { name: 'a', address: '10.0.0.10' },
        { name: 'b', address: '10.0.0.20' },
      ]),
    ).toEqual([]);
  });
});

describe('the IPPool update webhook called by the real API server', () => {
  const namespaces = new TestNamespaces();
  let client: Client;
  let namespace: string;
  let certs: ServingCertDir;
  let configurationName = '';
  let view: Metal3AddressesView;
  const stop = new AbortController();
  const running: Promise<void>[] = [];

  const updateSpec = async (name: string, spec: Record<string, unknown>) => {
    const current = await client.get(METAL3_POOL_RESOURCE, { namespace, name });
    return client.update(METAL3_POOL_RESOURCE, { ...current, spec });
  };

  const refusalOf = async (action: Promise<unknown>): Promise<string> => {
    const outcome = await action.then(
      () => undefined,
      (error: unknown) => error,
    );
    const apiError = asKubeApiError(outcome);
    if (!apiError) throw new Error(`expected a refusal, got ${String(outcome)}`);
    return apiError.serverMessage;
  };

  const createAddress = (name: string, pool: string, address: string) =>
    client.create(METAL3_ADDRESS_RESOURCE, {
      apiVersion: 'ipam.metal3.io/v1alpha1',
      kind: 'IPAddress',
      metadata: { name, namespace },
      spec: { address, prefix: 24, pool: { name: pool, namespace }, claim: { name, namespace } },
    });

  const cacheHolds = (pool: string, count: number) =>
    eventually(`the cache holds ${count} IPAddresses of ${pool}`, async () => {
      const found = await view.addressesOfPool(namespace, pool);
      if (found.length !== count) throw new Error(`found ${found.length}`);
    });

  beforeAll(async () => {
    const kubeConfig = testEnv().kubeConfig;
    client = testClient();
    namespace = await namespaces.create('ippool-webhook');
    certs = await createServingCertDir('metal3-ippool-webhook');
    const logger = pino({ level: 'silent' });
    const cache = new Cache({ kubeConfig, logger });
    const server = new WebhookServer({ host: '127.0.0.1', port: 0, certDir: certs.path, logger });
    view = cacheMetal3AddressesView(cache, namespace);
    registerMetal3Webhooks(server, view);
    running.push(cache.start(stop.signal), server.start(stop.signal));
    await cache.waitForCacheSync(stop.signal);
    const port = await eventually('the webhook server listens', async () => {
      const address = server.address();
      if (!address) throw new Error('not listening yet');
      return address.port;
    });
    configurationName = `metal3-ippool-webhook-test-${namespace}`;
    const configuration = metal3WebhookConfiguration({
      name: configurationName,
      client: { baseUrl: `https://127.0.0.1:${port}`, caBundlePem: certs.caPem },
      // As shipped, with the clusterctl variable substituted to true.
      enabledExpression: "'true' == 'true'",
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
    });
    await client.create(WEBHOOK_CONFIGURATIONS, { ...configuration, metadata: { name: configurationName } });
    // The API server loads the configuration asynchronously: wait until an out-of-range pre-allocation is refused.
    await createPool(client, namespace, 'probe', {
      namePrefix: 'probe',
      pools: [{ start: '10.93.0.1', end: '10.93.0.9' }],
    });
    await eventually('the webhook configuration is in effect', async () => {
      const message = await refusalOf(
        client
          .get(METAL3_POOL_RESOURCE, { namespace, name: 'probe' })
          .then((pool) =>
            client.update(
              METAL3_POOL_RESOURCE,
              { ...pool, spec: { ...(pool.spec as object), preAllocations: { x: '10.93.1.1' } } },
              { dryRun: 'All' },
            ),
          ),
      );
      if (!message.includes(IPPOOL_WEBHOOK_NAME)) throw new Error(message);
    });
  });

  afterAll(async () => {
    if (configurationName) await client?.delete(WEBHOOK_CONFIGURATIONS, { name: configurationName }).catch(() => {});
    stop.abort();
    await Promise.all(running);
    await namespaces.deleteAll();
    await certs?.remove();
    client?.close();
  });

  it('refuses shrinking the ranges under an IPAddress of the pool, naming field, value and IPAddress', async () => {
    const spec = { namePrefix: 'shrink', pools: [{ start: '10.93.2.10', end: '10.93.2.20' }], prefix: 24 };
    await createPool(client, namespace, 'shrink', spec);
    await createAddress('shrink-10-93-2-18', 'shrink', '10.93.2.18');
    await cacheHolds('shrink', 1);
    const message = await refusalOf(
      updateSpec('shrink', { ...spec, pools: [{ start: '10.93.2.10', end: '10.93.2.15' }] }),
    );
    expect(message).toContain(
      `admission webhook "${IPPOOL_WEBHOOK_NAME}" denied the request: IPPool.ipam.metal3.io "shrink" is invalid: ` +
        'spec.pools: 10.93.2.18 no longer holds this address, in use by IPAddress shrink-10-93-2-18',
    );
    // Moving the range so that it still holds the address, or growing it, is accepted.
    await updateSpec('shrink', { ...spec, pools: [{ start: '10.93.2.15', end: '10.93.2.30' }] });
    // Once the IPAddress is gone, the range may drop the address.
    await client.delete(METAL3_ADDRESS_RESOURCE, { namespace, name: 'shrink-10-93-2-18' });
    await cacheHolds('shrink', 0);
    await updateSpec('shrink', { ...spec, pools: [{ start: '10.93.2.10', end: '10.93.2.15' }] });
  });

  it('refuses a pre-allocation outside every range after the update, naming spec.preAllocations[claim] and the address', async () => {
    const spec = {
      namePrefix: 'pre',
      pools: [{ start: '10.93.3.10', end: '10.93.3.20' }],
      preAllocations: { 'claim-a': '10.93.3.12' },
    };
    await createPool(client, namespace, 'pre', spec);
    const moved = await refusalOf(updateSpec('pre', { ...spec, pools: [{ start: '10.93.3.13', end: '10.93.3.20' }] }));
    expect(moved).toContain('spec.preAllocations[claim-a]: 10.93.3.12 is outside every range of spec.pools');
    const added = await refusalOf(
      updateSpec('pre', { ...spec, preAllocations: { ...spec.preAllocations, 'claim-b': '10.93.4.1' } }),
    );
    expect(added).toContain('spec.preAllocations[claim-b]: 10.93.4.1 is outside every range of spec.pools');
    expect(added).not.toContain('claim-a');
    await updateSpec('pre', { ...spec, preAllocations: { ...spec.preAllocations, 'claim-b': '10.93.3.20' } });
  });

  it("lets metadata-only updates through for a pool created with a pre-allocation outside its ranges (the proposal's example)", async () => {
    const spec = {
      namePrefix: 'example',
      pools: [{ start: '10.93.5.10', end: '10.93.5.15' }],
      preAllocations: { outside: '10.93.5.9' },
    };
    await createPool(client, namespace, 'example', spec);
    const pool = await client.get(METAL3_POOL_RESOURCE, { namespace, name: 'example' });
    const labelled = await client.update(METAL3_POOL_RESOURCE, {
      ...pool,
      metadata: { ...pool.metadata, labels: { team: 'a' }, finalizers: ['ippool.ipam.metal3.io'] },
    });
    expect(labelled.metadata.labels).toEqual({ team: 'a' });
    // A spec change is checked against the whole spec, as Metal3 does: the old pre-allocation must be fixed too.
    const grown = await refusalOf(
      updateSpec('example', { ...spec, pools: [{ start: '10.93.5.10', end: '10.93.5.30' }] }),
    );
    expect(grown).toContain('spec.preAllocations[outside]: 10.93.5.9 is outside every range of spec.pools');
    const current = await client.get(METAL3_POOL_RESOURCE, { namespace, name: 'example' });
    await client.update(METAL3_POOL_RESOURCE, { ...current, metadata: { ...current.metadata, finalizers: [] } });
  });
});
