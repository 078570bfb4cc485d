import { request as httpsRequest } from 'node:https';
import {
  AdmissionregistrationV1Api,
  CustomObjectsApi,
  EventsV1Api,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { DELETE_FOR_MOVE_ANNOTATION, IPAM_GROUP, TALLY_GROUP, tallyCRDDirectory } from '@tally-ipam/api-types';
import { asKubeApiError, Cache, Client, EventRecorder, isConflict, WebhookServer } from '@tally-ipam/controller-kit';
import {
  createServingCertDir,
  eventually,
  installCapiCRDs,
  installCRDs,
  type ServingCertDir,
  warningTexts,
} from '@tally-ipam/testenv';
import { createTestNamespace, type TestNamespace, testEnv } from '@tally-ipam/testenv/vitest';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  POOL_IN_USE_MESSAGE,
  POOL_MOVED_AWAY_REASON,
  type PoolAllocationsView,
  poolWebhookConfiguration,
  poolWebhookName,
  poolWebhookPath,
  registerPoolWebhooks,
  SKIP_VALIDATE_DELETE_ANNOTATION,
} from '../src/webhooks/index.js';
import { refusal } from './webhook-support.js';

/** Only pools carrying this label (value: the test namespace) reach this test's webhook server. */
const RUN_LABEL = 'tally.test/pool-webhook-run';
const VERSION = 'v1alpha1';

const EventList = z.object({
  items: z.array(
    z.object({ type: z.string(), reason: z.string(), action: z.string(), note: z.string().optional() }).loose(),
  ),
});

type PoolKindName = 'TallyIPPool' | 'GlobalTallyIPPool' | 'TallyPrefixPool' | 'GlobalTallyPrefixPool';

const PLURALS: Record<PoolKindName, string> = {
  TallyIPPool: 'tallyippools',
  GlobalTallyIPPool: 'globaltallyippools',
  TallyPrefixPool: 'tallyprefixpools',
  GlobalTallyPrefixPool: 'globaltallyprefixpools',
};

const isGlobal = (kind: PoolKindName): boolean => kind.startsWith('Global');

/** The webhook server's limit on a request body (controller-runtime's 7 MiB). */
const MAX_REVIEW_BYTES = 7 * 1024 * 1024;

interface DirectAnswer {
  readonly status: number;
  readonly body: string;
}

/**
 * One HTTPS POST straight to the webhook server, trusting only the test CA as the API server does. `declaredBytes`
 * sends a Content-Length without the body, for answers the server must give before reading one.
 */
function postToWebhook(
  port: number,
  caPem: string,
  path: string,
  body: { json: string } | { declaredBytes: number },
): Promise<DirectAnswer> {
  return new Promise((resolve, reject) => {
    const length = 'json' in body ? Buffer.byteLength(body.json) : body.declaredBytes;
    const request = httpsRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        ca: caPem,
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': length },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
          request.destroy();
        });
      },
    );
    request.on('error', reject);
    if ('json' in body) request.end(body.json);
    else request.flushHeaders();
  });
}

describe('pool admission webhooks called by the real API server', () => {
  let kc: KubeConfig;
  let objects: CustomObjectsApi;
  let namespace: TestNamespace;
  let certs: ServingCertDir;
  let view: PoolAllocationsView;
  let configurationName: string | undefined;
  let webhookPort: number;
  const stop = new AbortController();
  const running: Promise<void>[] = [];

  /** Global pools are cluster-wide on a shared control plane: their names carry the namespace to stay unique. */
  const poolName = (kind: PoolKindName, name: string): string => (isGlobal(kind) ? `${namespace.name}-${name}` : name);

  const poolTarget = (kind: PoolKindName, name: string) => ({
    group: TALLY_GROUP,
    version: VERSION,
    plural: PLURALS[kind],
    name: poolName(kind, name),
    ...(isGlobal(kind) ? {} : { namespace: namespace.name }),
  });

  const poolBody = (kind: PoolKindName, name: string, spec: object, annotations?: Record<string, string>) => ({
    apiVersion: `${TALLY_GROUP}/${VERSION}`,
    kind,
    metadata: {
      name: poolName(kind, name),
      labels: { [RUN_LABEL]: namespace.name },
      ...(annotations ? { annotations } : {}),
    },
    spec,
  });

  const createPool = (kind: PoolKindName, name: string, spec: object, options: { dryRun?: boolean } = {}) => {
    const body = poolBody(kind, name, spec);
    const dryRun = options.dryRun ? { dryRun: 'All' } : {};
    return isGlobal(kind)
      ? objects.createClusterCustomObjectWithHttpInfo({ ...poolTarget(kind, name), body, ...dryRun })
      : objects.createNamespacedCustomObjectWithHttpInfo({
          ...poolTarget(kind, name),
          namespace: namespace.name,
          body,
          ...dryRun,
        });
  };

  const readPool = async (kind: PoolKindName, name: string): Promise<Record<string, unknown>> => {
    const target = poolTarget(kind, name);
    const object: unknown = isGlobal(kind)
      ? await objects.getClusterCustomObject(target)
      : await objects.getNamespacedCustomObject({ ...target, namespace: namespace.name });
    return object as Record<string, unknown>;
  };

  /**
   * Replaces the pool's spec (and annotations, if given) on top of the stored object. The providers of this package's
   * other test files run beside this one on the shared control plane and reconcile every pool (finalizer, status), so
   * the stored object can change between the read and the replace: on a 409 Conflict the read-modify-write starts
   * over on the newer object, as client-go's RetryOnConflict does. A webhook's denial is never retried.
   */
  const updatePool = async (kind: PoolKindName, name: string, spec: object, annotations?: Record<string, string>) => {
    const target = poolTarget(kind, name);
    for (let attempt = 1; ; attempt += 1) {
      const current = await readPool(kind, name);
      const metadata = current.metadata as Record<string, unknown>;
      const body = { ...current, spec, metadata: annotations ? { ...metadata, annotations } : metadata };
      try {
        return await (isGlobal(kind)
          ? objects.replaceClusterCustomObjectWithHttpInfo({ ...target, body })
          : objects.replaceNamespacedCustomObjectWithHttpInfo({ ...target, namespace: namespace.name, body }));
      } catch (error) {
        if (attempt >= 10 || !isConflict(error)) throw error;
      }
    }
  };

  const deletePool = (kind: PoolKindName, name: string, options: { dryRun?: boolean } = {}) => {
    const target = { ...poolTarget(kind, name), ...(options.dryRun ? { dryRun: 'All' } : {}) };
    return isGlobal(kind)
      ? objects.deleteClusterCustomObject(target)
      : objects.deleteNamespacedCustomObject({ ...target, namespace: namespace.name });
  };

  const poolExists = async (kind: PoolKindName, name: string): Promise<boolean> =>
    readPool(kind, name).then(
      () => true,
      (error: unknown) => {
        if (asKubeApiError(error)?.statusCode === 404) return false;
        throw error;
      },
    );

  /** An IPAddress as the provider would write it for a claim of the same name. */
  const createAddress = async (
    name: string,
    pool: { kind: PoolKindName; name: string },
    address: string,
    prefix: number,
  ) => {
    await objects.createNamespacedCustomObject({
      group: IPAM_GROUP,
      version: 'v1beta2',
      plural: 'ipaddresses',
      namespace: namespace.name,
      body: {
        apiVersion: `${IPAM_GROUP}/v1beta2`,
        kind: 'IPAddress',
        metadata: { name },
        spec: {
          claimRef: { name },
          poolRef: { apiGroup: TALLY_GROUP, kind: pool.kind, name: poolName(pool.kind, pool.name) },
          address,
          prefix,
        },
      },
    });
  };

  const deleteAddress = (name: string) =>
    objects.deleteNamespacedCustomObject({
      group: IPAM_GROUP,
      version: 'v1beta2',
      plural: 'ipaddresses',
      namespace: namespace.name,
      name,
    });

  /** Admission reads from the informer cache: wait until it holds what the test just wrote. */
  const cacheSees = (kind: PoolKindName, name: string, count: number) =>
    eventually(`the cache holds ${count} IPAddresses of ${kind} ${name}`, async () => {
      const found = await view.addressesOf({
        kind,
        name: poolName(kind, name),
        namespace: isGlobal(kind) ? undefined : namespace.name,
      });
      if (found.length !== count) throw new Error(`found ${found.length}`);
    });

  const cacheSeesPool = (kind: PoolKindName, name: string) =>
    eventually(`the cache holds ${kind} ${name}`, async () => {
      const pools = await view.listPools();
      if (!pools.some((pool) => pool.kind === kind && pool.metadata.name === poolName(kind, name))) {
        throw new Error('not yet');
      }
    });

  const denial = (kind: PoolKindName, message: string) =>
    `admission webhook "${poolWebhookName(kind)}" denied the request: ${message}`;

  beforeAll(async () => {
    kc = testEnv().kubeConfig;
    objects = kc.makeApiClient(CustomObjectsApi);
    // Server-side apply: harmless if the package's global setup installed them already.
    await installCRDs(kc, [tallyCRDDirectory()]);
    await installCapiCRDs(kc, { groups: ['ipam.cluster.x-k8s.io'] });
    namespace = await createTestNamespace(kc, 'pool-webhook');
    certs = await createServingCertDir('tally-pool-webhook');

    const logger = pino({ level: 'silent' });
    const cache = new Cache({ kubeConfig: kc, logger });
    const server = new WebhookServer({ host: '127.0.0.1', port: 0, certDir: certs.path, logger });
    const events = new EventRecorder({
      client: new Client(kc, { fieldManager: 'pool-webhook-test' }),
      reportingController: 'tally.test/pool-webhook',
      reportingInstance: 'pool-webhook-test',
      logger,
    });
    view = registerPoolWebhooks(server, cache, { events });
    running.push(cache.start(stop.signal), server.start(stop.signal));
    await cache.waitForCacheSync(stop.signal);
    const port = await eventually('the webhook server listens', async () => {
      const address = server.address();
      if (!address) throw new Error('not listening yet');
      return address.port;
    });

    webhookPort = port;
    configurationName = `tally-pool-webhook-test-${namespace.name}`;
    await kc.makeApiClient(AdmissionregistrationV1Api).createValidatingWebhookConfiguration({
      body: poolWebhookConfiguration({
        name: configurationName,
        client: { baseUrl: `https://127.0.0.1:${port}`, caBundlePem: certs.caPem },
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace.name } },
        objectSelector: { matchLabels: { [RUN_LABEL]: namespace.name } },
      }),
    });

    // The API server loads the configuration asynchronously: wait until a dry-run delete of a used pool is refused.
    await createPool('TallyIPPool', 'probe', { addresses: ['10.9.0.0/24'], prefix: 24 });
    await createAddress('probe-0', { kind: 'TallyIPPool', name: 'probe' }, '10.9.0.1', 24);
    await cacheSees('TallyIPPool', 'probe', 1);
    await eventually('the webhook configuration is in effect', async () => {
      const error = await refusal(deletePool('TallyIPPool', 'probe', { dryRun: true }));
      if (!error.serverMessage.includes(poolWebhookName('TallyIPPool'))) throw error;
    });
  });

  afterAll(async () => {
    // A failurePolicy=Fail configuration without its server would refuse every pool request: remove it first.
    if (configurationName) {
      await kc
        .makeApiClient(AdmissionregistrationV1Api)
        .deleteValidatingWebhookConfiguration({ name: configurationName })
        .catch((error: unknown) => {
          if (asKubeApiError(error)?.statusCode !== 404) throw error;
        });
    }
    for (const kind of ['GlobalTallyIPPool', 'GlobalTallyPrefixPool'] as const) {
      const list = (await objects.listClusterCustomObject({
        group: TALLY_GROUP,
        version: VERSION,
        plural: PLURALS[kind],
        labelSelector: `${RUN_LABEL}=${namespace.name}`,
      })) as { items: { metadata: { name: string } }[] };
      for (const item of list.items) {
        await objects.deleteClusterCustomObject({ ...poolTarget(kind, ''), name: item.metadata.name });
      }
    }
    stop.abort();
    await Promise.all(running);
    await certs?.remove();
    await namespace?.delete();
  });

  it('refuses deleting a pool with allocated addresses, naming the pool and the addresses', async () => {
    await createAddress('probe-1', { kind: 'TallyIPPool', name: 'probe' }, '10.9.0.2', 24);
    await createAddress('probe-2', { kind: 'TallyIPPool', name: 'probe' }, '10.9.0.7', 24);
    await cacheSees('TallyIPPool', 'probe', 3);

    const error = await refusal(deletePool('TallyIPPool', 'probe'));

    expect(error.statusCode).toBe(400);
    expect(error.serverMessage).toBe(
      denial(
        'TallyIPPool',
        `${POOL_IN_USE_MESSAGE} TallyIPPool ${namespace.name}/probe has 3 allocated: [10.9.0.1-10.9.0.2 10.9.0.7]`,
      ),
    );
    expect(await poolExists('TallyIPPool', 'probe')).toBe(true);
  });

  it("allows deleting a used pool that carries the reference provider's skip annotation", async () => {
    await createPool('TallyIPPool', 'skipping', { addresses: ['10.8.1.10-10.8.1.20'], prefix: 24 });
    await createAddress('skipping-0', { kind: 'TallyIPPool', name: 'skipping' }, '10.8.1.10', 24);
    await cacheSees('TallyIPPool', 'skipping', 1);
    await refusal(deletePool('TallyIPPool', 'skipping'));

    await updatePool(
      'TallyIPPool',
      'skipping',
      { addresses: ['10.8.1.10-10.8.1.20'], prefix: 24 },
      { [SKIP_VALIDATE_DELETE_ANNOTATION]: '' },
    );
    await deletePool('TallyIPPool', 'skipping');
    await deleteAddress('skipping-0');
    await eventually('the pool is gone', async () => {
      if (await poolExists('TallyIPPool', 'skipping')) throw new Error('still there');
    });
  });

  it("allows clusterctl move's delete of a used pool, warns about the claims it leaves behind and records an Event on the pool (none for a dry run)", async () => {
    await createPool('TallyIPPool', 'moving', { addresses: ['10.8.0.10-10.8.0.20'], prefix: 24 });
    await createAddress('moving-0', { kind: 'TallyIPPool', name: 'moving' }, '10.8.0.10', 24);
    await createAddress('moving-1', { kind: 'TallyIPPool', name: 'moving' }, '10.8.0.11', 24);
    await cacheSees('TallyIPPool', 'moving', 2);
    await refusal(deletePool('TallyIPPool', 'moving'));
    const uid = z.object({ metadata: z.object({ uid: z.string() }) }).parse(await readPool('TallyIPPool', 'moving'))
      .metadata.uid;

    // Exactly what clusterctl (v1.12, mover.go deleteSourceObject) sends before its delete: a JSON patch that
    // replaces the whole annotation map, so any skip annotation set earlier is gone by then.
    await objects.patchNamespacedCustomObject(
      {
        ...poolTarget('TallyIPPool', 'moving'),
        namespace: namespace.name,
        body: [{ op: 'add', path: '/metadata/annotations', value: { [DELETE_FOR_MOVE_ANNOTATION]: '' } }],
      },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
    const expected =
      `clusterctl move deletes TallyIPPool ${namespace.name}/moving from this cluster while 2 IPAddresses here still ` +
      'hold its addresses [10.8.0.10-10.8.0.11] for claims that did not move with a Cluster (moving-0, moving-1): ' +
      'they lose their pool on this cluster and wait until it exists here again';
    const dryRun = await objects.deleteNamespacedCustomObjectWithHttpInfo({
      ...poolTarget('TallyIPPool', 'moving'),
      namespace: namespace.name,
      dryRun: 'All',
    });
    expect(warningTexts(dryRun.headers.warning)).toEqual([expected]);
    const answer = await objects.deleteNamespacedCustomObjectWithHttpInfo({
      ...poolTarget('TallyIPPool', 'moving'),
      namespace: namespace.name,
    });
    expect(answer.httpStatusCode).toBe(200);
    expect(warningTexts(answer.headers.warning)).toEqual([expected]);

    // One Event, for the real delete; the webhook records it before it answers.
    const events = EventList.parse(
      await kc.makeApiClient(EventsV1Api).listNamespacedEvent({
        namespace: namespace.name,
        fieldSelector: `regarding.uid=${uid}`,
      }),
    );
    expect(events.items.map((event) => [event.type, event.reason, event.action, event.note])).toEqual([
      ['Warning', POOL_MOVED_AWAY_REASON, 'Delete', expected],
    ]);

    // A provider of another test file on the shared control plane may have put its finalizer on the pool; it keeps the
    // pool while an IPAddress refers to it, so the IPAddresses go as clusterctl move deletes them too.
    await deleteAddress('moving-0');
    await deleteAddress('moving-1');
    await eventually('the pool is gone', async () => {
      if (await poolExists('TallyIPPool', 'moving')) throw new Error('still there');
    });
  });

  it('allows deleting a pool once its addresses are released', async () => {
    await createPool('TallyIPPool', 'released', { addresses: ['10.7.0.0/28'], prefix: 24 });
    await createAddress('released-0', { kind: 'TallyIPPool', name: 'released' }, '10.7.0.3', 24);
    await cacheSees('TallyIPPool', 'released', 1);
    await refusal(deletePool('TallyIPPool', 'released'));

    await deleteAddress('released-0');
    await cacheSees('TallyIPPool', 'released', 0);
    await deletePool('TallyIPPool', 'released');

    // The delete was admitted; a provider of another test file may hold the pool by its finalizer a moment longer.
    await eventually('the pool is gone', async () => {
      if (await poolExists('TallyIPPool', 'released')) throw new Error('still there');
    });
  });

  it('refuses an update that leaves allocated addresses outside the pool, listing them as ranges', async () => {
    const spec = { addresses: ['10.6.0.0/24'], prefix: 24 };
    await createPool('TallyIPPool', 'shrinking', spec);
    for (const [index, address] of ['10.6.0.10', '10.6.0.11', '10.6.0.12', '10.6.0.40'].entries()) {
      await createAddress(`shrinking-${index}`, { kind: 'TallyIPPool', name: 'shrinking' }, address, 24);
    }
    await cacheSees('TallyIPPool', 'shrinking', 4);

    const shrunk = await refusal(
      updatePool('TallyIPPool', 'shrinking', { addresses: ['10.6.0.100-10.6.0.200'], prefix: 24 }),
    );
    expect(shrunk.statusCode).toBe(400);
    expect(shrunk.serverMessage).toContain(
      denial(
        'TallyIPPool',
        'pool addresses do not contain allocated addresses: [10.6.0.10-10.6.0.12 10.6.0.40] (4 IPAddresses;',
      ),
    );
    expect(shrunk.serverMessage).toContain("is not in the pool's addresses");

    const excluded = await refusal(
      updatePool('TallyIPPool', 'shrinking', { ...spec, excludedAddresses: ['10.6.0.32-10.6.0.63'] }),
    );
    expect(excluded.serverMessage).toContain(
      'pool addresses do not contain allocated addresses: [10.6.0.40] (1 IPAddress;',
    );

    const gateway = await refusal(updatePool('TallyIPPool', 'shrinking', { ...spec, gateway: '10.6.0.11' }));
    expect(gateway.serverMessage).toContain('[10.6.0.11]');
    expect(gateway.serverMessage).toContain("is the pool's gateway");

    const kept = await updatePool('TallyIPPool', 'shrinking', {
      addresses: ['10.6.0.10-10.6.0.12', '10.6.0.40'],
      prefix: 24,
    });
    expect(kept.httpStatusCode).toBe(200);
    expect((await readPool('TallyIPPool', 'shrinking')).spec).toMatchObject({
      addresses: ['10.6.0.10-10.6.0.12', '10.6.0.40'],
    });
  });

  it('warns when a new pool overlaps another, naming the other pool and the overlapping range', async () => {
    await createPool('TallyIPPool', 'base', { addresses: ['10.5.0.0/24'], prefix: 24, gateway: '10.5.0.1' });
    await cacheSeesPool('TallyIPPool', 'base');

    const answer = await createPool('TallyIPPool', 'overlapping', { addresses: ['10.5.0.200-10.5.1.20'], prefix: 23 });

    expect(answer.httpStatusCode).toBe(201);
    expect(warningTexts(answer.headers.warning)).toEqual([
      `overlaps TallyIPPool ${namespace.name}/base in 10.5.0.200-10.5.0.254; each address there goes to the first claim of either pool`,
    ]);
    const separate = await createPool('TallyIPPool', 'separate', { addresses: ['10.5.2.0/24'], prefix: 24 });
    expect(warningTexts(separate.headers.warning)).toEqual([]);
  });

  it('guards cluster-scoped and prefix pools the same way', async () => {
    await createPool('GlobalTallyPrefixPool', 'delegated', { prefixes: ['fd00:77::/48'], allocationPrefixLength: 64 });
    await createAddress('node-0', { kind: 'GlobalTallyPrefixPool', name: 'delegated' }, 'fd00:77:0:5::', 64);
    await createAddress('node-1', { kind: 'GlobalTallyPrefixPool', name: 'delegated' }, 'fd00:77:0:9::', 64);
    await cacheSees('GlobalTallyPrefixPool', 'delegated', 2);

    const deleted = await refusal(deletePool('GlobalTallyPrefixPool', 'delegated'));
    expect(deleted.serverMessage).toBe(
      denial(
        'GlobalTallyPrefixPool',
        `${POOL_IN_USE_MESSAGE} GlobalTallyPrefixPool ${poolName('GlobalTallyPrefixPool', 'delegated')} has 2 allocated: ` +
          '[fd00:77:0:5::/64 fd00:77:0:9::/64]',
      ),
    );

    const moved = await refusal(
      updatePool('GlobalTallyPrefixPool', 'delegated', {
        prefixes: ['fd00:77::/48'],
        allocationPrefixLength: 64,
        excludedPrefixes: ['fd00:77:0:8::/62'],
      }),
    );
    expect(moved.serverMessage).toContain('pool addresses do not contain allocated addresses: [fd00:77:0:9::/64]');
    expect(moved.serverMessage).toContain("overlaps the pool's excludedPrefixes");

    await cacheSeesPool('GlobalTallyPrefixPool', 'delegated');
    const overlapping = await createPool('TallyPrefixPool', 'local', {
      prefixes: ['fd00:77:0:f0::/60'],
      allocationPrefixLength: 64,
    });
    expect(warningTexts(overlapping.headers.warning)).toEqual([
      `overlaps GlobalTallyPrefixPool ${poolName('GlobalTallyPrefixPool', 'delegated')} in ` +
        'fd00:77:0:f0::-fd00:77:0:ff:ffff:ffff:ffff:ffff; each address there goes to the first claim of either pool',
    ]);

    await createPool('GlobalTallyIPPool', 'shared', { addresses: ['192.168.50.0/24'], prefix: 24 });
    await createAddress('shared-0', { kind: 'GlobalTallyIPPool', name: 'shared' }, '192.168.50.9', 24);
    await cacheSees('GlobalTallyIPPool', 'shared', 1);
    const shared = await refusal(deletePool('GlobalTallyIPPool', 'shared'));
    expect(shared.serverMessage).toContain('has 1 allocated: [192.168.50.9]');
  });

  it('never refuses a metadata-only update or the controller finalizer write, even with an out-of-range IPAddress', async () => {
    // The IPAddress exists before the pool (restored from a backup, written by hand): outside the pool's addresses.
    await createAddress('early-0', { kind: 'TallyIPPool', name: 'early' }, '10.4.1.50', 24);
    await createPool('TallyIPPool', 'early', { addresses: ['10.4.0.10-10.4.0.20'], prefix: 16 });
    await cacheSees('TallyIPPool', 'early', 1);

    const target = poolTarget('TallyIPPool', 'early');
    const finalizer = await objects.patchNamespacedCustomObjectWithHttpInfo(
      {
        ...target,
        namespace: namespace.name,
        body: { metadata: { finalizers: ['ipam.cluster.x-k8s.io/tally-protect-pool'] } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(finalizer.httpStatusCode).toBe(200);
    const paused = await objects.patchNamespacedCustomObjectWithHttpInfo(
      {
        ...target,
        namespace: namespace.name,
        body: { metadata: { labels: { extra: 'yes' }, annotations: { 'cluster.x-k8s.io/paused': '' } } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(paused.httpStatusCode).toBe(200);
    // A spec change that keeps what the old spec held is allowed too: the stray address was never the pool's.
    const grown = await updatePool('TallyIPPool', 'early', { addresses: ['10.4.0.10-10.4.0.30'], prefix: 16 });
    expect(grown.httpStatusCode).toBe(200);
    await objects.patchNamespacedCustomObject(
      { ...target, namespace: namespace.name, body: { metadata: { finalizers: null } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  });

  it('refuses a gateway outside the network of the addresses, naming spec.gateway and the value; allows link-local and host routes', async () => {
    const error = await refusal(
      createPool('TallyIPPool', 'far-gateway', {
        addresses: ['10.12.0.10-10.12.0.20'],
        prefix: 24,
        gateway: '10.13.0.1',
      }),
    );
    expect(error.statusCode).toBe(422);
    expect(error.serverMessage).toBe(
      denial(
        'TallyIPPool',
        'TallyIPPool.ipam.cluster.x-k8s.io "far-gateway" is invalid: spec.gateway: Invalid value: "10.13.0.1": ' +
          'gateway 10.13.0.1 is outside 10.12.0.0/24, the network of spec.addresses (first entry 10.12.0.10-10.12.0.20, ' +
          'spec.prefix 24): hosts given these addresses cannot reach it on-link',
      ),
    );
    const global = await refusal(
      createPool('GlobalTallyIPPool', 'far-gateway', {
        addresses: ['fd00:12::/64'],
        prefix: 64,
        gateway: 'fd00:13::1',
      }),
    );
    expect(global.serverMessage).toContain(
      'spec.gateway: Invalid value: "fd00:13::1": gateway fd00:13::1 is outside fd00:12::/64',
    );

    const linkLocal = await createPool(
      'TallyIPPool',
      'link-local-gateway',
      { addresses: ['fd00:14::/64'], prefix: 64, gateway: 'fe80::1' },
      { dryRun: true },
    );
    expect(linkLocal.httpStatusCode).toBe(201);
    const hostRoute = await createPool(
      'TallyIPPool',
      'host-route',
      { addresses: ['10.12.1.5'], prefix: 32, gateway: '10.12.1.1' },
      { dryRun: true },
    );
    expect(hostRoute.httpStatusCode).toBe(201);

    // An update that moves the gateway out of the network is refused like a create.
    await createPool('TallyIPPool', 'near-gateway', { addresses: ['10.12.2.0/24'], prefix: 24, gateway: '10.12.2.1' });
    const moved = await refusal(
      updatePool('TallyIPPool', 'near-gateway', { addresses: ['10.12.2.0/24'], prefix: 24, gateway: '10.12.3.1' }),
    );
    expect(moved.statusCode).toBe(422);
    expect(moved.serverMessage).toContain(
      'spec.gateway: Invalid value: "10.12.3.1": gateway 10.12.3.1 is outside 10.12.2.0/24',
    );
  });

  it('refuses addresses outside the network of the first entry, naming spec.addresses and the entry', async () => {
    const error = await refusal(
      createPool('TallyIPPool', 'scattered', { addresses: ['10.12.4.0/24', '10.12.9.7'], prefix: 24 }),
    );
    expect(error.statusCode).toBe(422);
    expect(error.serverMessage).toContain(
      'spec.addresses: Invalid value: "object": addresses 10.12.9.7 lie outside the /24 network of the first entry 10.12.4.0/24',
    );
  });

  it('refuses a reservation the pool cannot hand out, naming the entry', async () => {
    const error = await refusal(
      createPool('TallyIPPool', 'reserving', {
        addresses: ['10.3.0.10-10.3.0.20'],
        prefix: 24,
        gateway: '10.3.0.1',
        reservations: [
          { claimName: 'inside', address: '10.3.0.11' },
          { claimName: 'outside', address: '10.3.0.99' },
        ],
      }),
    );
    expect(error.statusCode).toBe(422);
    expect(error.serverMessage).toContain(
      'spec.reservations[1]: Invalid value: "10.3.0.99": address 10.3.0.99 for claim outside is not in the pool\'s addresses',
    );
    expect(error.serverMessage).not.toContain('spec.reservations[0]');
  });

  it('warns about a prefix pool handing out host addresses (/128, /32) and a gateway inside its prefixes', async () => {
    const answer = await createPool(
      'TallyPrefixPool',
      'hosts',
      { prefixes: ['fd00:3::/120'], allocationPrefixLength: 128, gateway: 'fd00:3::1' },
      { dryRun: true },
    );
    expect(answer.httpStatusCode).toBe(201);
    expect(warningTexts(answer.headers.warning)).toEqual([
      'spec.allocationPrefixLength=128 behaves like host-address allocation; consider TallyIPPool (or GlobalTallyIPPool) for single-address semantics',
      'spec.gateway is within spec.prefixes and is not reserved; with /128 allocationPrefixLength it may also be allocated to claims',
    ]);
    const ipv4 = await createPool(
      'TallyPrefixPool',
      'hosts4',
      { prefixes: ['10.2.0.0/28'], allocationPrefixLength: 32 },
      { dryRun: true },
    );
    expect(warningTexts(ipv4.headers.warning)).toEqual([
      'spec.allocationPrefixLength=32 behaves like host-address allocation; consider TallyIPPool for single-address semantics',
    ]);
  });

  it('answers a review of a pool with prefix -(2 ** 30) sent straight to it with a denial naming spec.prefix', async () => {
    const pool = poolBody('TallyIPPool', 'huge-shift', { addresses: ['10.7.0.0/24'], prefix: -(2 ** 30) });
    const review = {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: 'direct-huge-shift',
        kind: { group: TALLY_GROUP, version: VERSION, kind: 'TallyIPPool' },
        resource: { group: TALLY_GROUP, version: VERSION, resource: PLURALS.TallyIPPool },
        name: pool.metadata.name,
        namespace: namespace.name,
        operation: 'CREATE',
        userInfo: { username: 'direct' },
        object: { ...pool, metadata: { ...pool.metadata, namespace: namespace.name } },
        dryRun: false,
      },
    };
    const answer = await postToWebhook(webhookPort, certs.caPem, poolWebhookPath('TallyIPPool'), {
      json: JSON.stringify(review),
    });
    expect(answer.status).toBe(200);
    const response = (JSON.parse(answer.body) as { response: Record<string, unknown> }).response;
    expect(response).toMatchObject({ uid: 'direct-huge-shift', allowed: false, status: { code: 422 } });
    expect((response.status as { message: string }).message).toMatch(/spec\.prefix.*-1073741824/);
  });

  it('refuses a reservation address of 45 characters with emoji (81 UTF-16 units) naming the field, there and when sent straight to it', async () => {
    const address = `10.7.0.11${'\u{1F600}'.repeat(36)}`;
    const spec = { addresses: ['10.7.0.0/24'], prefix: 24, reservations: [{ claimName: 'cp-0', address }] };
    // Through the API server its own schema refuses first; the webhook only sees what passed it.
    const error = await refusal(createPool('TallyIPPool', 'emoji', spec, { dryRun: true }));
    expect(error.statusCode).toBe(422);
    expect(error.serverMessage).toContain(`spec.reservations[0].address: Invalid value: `);
    expect(error.serverMessage).toContain(address);

    const pool = poolBody('TallyIPPool', 'emoji', spec);
    const review = {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: 'direct-emoji',
        kind: { group: TALLY_GROUP, version: VERSION, kind: 'TallyIPPool' },
        resource: { group: TALLY_GROUP, version: VERSION, resource: PLURALS.TallyIPPool },
        name: pool.metadata.name,
        namespace: namespace.name,
        operation: 'CREATE',
        userInfo: { username: 'direct' },
        object: { ...pool, metadata: { ...pool.metadata, namespace: namespace.name } },
        dryRun: false,
      },
    };
    const answer = await postToWebhook(webhookPort, certs.caPem, poolWebhookPath('TallyIPPool'), {
      json: JSON.stringify(review),
    });
    expect(answer.status, answer.body).toBe(200);
    const response = (JSON.parse(answer.body) as { response: Record<string, unknown> }).response;
    expect(response).toMatchObject({ uid: 'direct-emoji', allowed: false, status: { code: 422 } });
    const message = (response.status as { message: string }).message;
    expect(message).toContain(`spec.reservations[0].address: "${address}" is not an IP address`);
  });

  it('answers 413 to a review declared larger than the size cap, before reading it', async () => {
    const answer = await postToWebhook(webhookPort, certs.caPem, poolWebhookPath('TallyIPPool'), {
      declaredBytes: MAX_REVIEW_BYTES + 3 * 1024 * 1024,
    });
    expect(answer.status).toBe(413);
    expect(answer.body).toContain(`request body exceeds ${MAX_REVIEW_BYTES} bytes`);
  });
});
