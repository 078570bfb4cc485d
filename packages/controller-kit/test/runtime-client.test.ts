import { ApiException, CoreV1Api } from '@kubernetes/client-node';
import { createTestNamespace, type TestNamespace } from '@tally-ipam/testenv';
import { testEnv } from '@tally-ipam/testenv/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../src/cache/object.js';
import { Client } from '../src/client/client.js';
import {
  asKubeApiError,
  isAlreadyExists,
  isConflict,
  isGone,
  isInvalid,
  isNotFound,
  isStaleResourceVersionConflict,
  KubeApiError,
  KubeRequestError,
} from '../src/client/errors.js';
import { EVENTS_RESOURCE, EventRecorder } from '../src/client/events.js';
import { addFinalizer, hasFinalizer, removeFinalizer } from '../src/client/finalizers.js';
import { BlackholeProxy } from './fixtures/runtime-blackhole-proxy.js';
import {
  CONFIG_MAPS,
  capturingLogger,
  installCRDsReliably,
  THINGS,
  type Thing,
  waitFor,
} from './fixtures/runtime-support.js';

const FINALIZER = 'runtime-test.tally.dev/cleanup';

let namespace: TestNamespace;
let client: Client;

beforeAll(async () => {
  const { kubeConfig } = testEnv();
  await installCRDsReliably(kubeConfig);
  namespace = await createTestNamespace(kubeConfig, 'runtime-client');
  client = new Client(kubeConfig, { fieldManager: 'runtime-test' });
});

afterAll(async () => {
  client?.close();
  await namespace?.delete();
});

function thing(name: string, spec: Thing['spec'] = { size: 1 }): Thing {
  return { apiVersion: THINGS.apiVersion, kind: THINGS.kind, metadata: { name, namespace: namespace.name }, spec };
}

async function expectRejection(promise: Promise<unknown>): Promise<KubeApiError> {
  try {
    await promise;
  } catch (error) {
    const apiError = asKubeApiError(error);
    if (apiError) return apiError;
    throw error;
  }
  throw new Error('expected the request to fail');
}

describe('Client reads and writes', () => {
  it('creates, gets and lists objects of a CRD, parsed with the resource schema', async () => {
    const created = await client.create(THINGS, thing('read-me', { size: 3, color: 'red' }));
    expect(created.metadata.uid).toBeTruthy();
    const read = await client.get(THINGS, { namespace: namespace.name, name: 'read-me' });
    expect(read.spec).toEqual({ size: 3, color: 'red' });
    const list = await client.list(THINGS, { namespace: namespace.name });
    expect(list.items.map((item) => item.metadata.name)).toContain('read-me');
    expect(list.items.every((item) => item.kind === 'Thing')).toBe(true);
    expect(list.resourceVersion).not.toBe('');
  });

  it('works on cluster-scoped resources (no namespace in the path) and refuses a namespaced one without namespace', async () => {
    const clusterRoles = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      plural: 'clusterroles',
      namespaced: false,
    };
    const name = `${namespace.name}-reader`;
    const created = await client.create(clusterRoles, { metadata: { name }, rules: [] });
    expect(created.metadata.namespace).toBeUndefined();
    expect((await client.get(clusterRoles, { name })).metadata.uid).toBe(created.metadata.uid);
    await client.delete(clusterRoles, { name });
    expect(isNotFound(await client.get(clusterRoles, { name }).catch((error: unknown) => error))).toBe(true);
    await expect(client.get(THINGS, { name: 'no-namespace' })).rejects.toThrow(
      'get Thing "no-namespace": the resource is namespaced, but no namespace was given',
    );
  });

  it('dry-runs writes without persisting them and rejects unknown fields with strict validation', async () => {
    const dryRun = await client.create(THINGS, thing('dry', { size: 2 }), { dryRun: 'All' });
    expect(dryRun.spec?.size).toBe(2);
    expect(isNotFound(await client.get(THINGS, dryRun.metadata).catch((error: unknown) => error))).toBe(true);
    const strict = await expectRejection(
      client.create(THINGS, { ...thing('strict'), spec: { size: 1, bogus: true } }, { fieldValidation: 'Strict' }),
    );
    expect(strict.statusCode).toBe(400);
    expect(strict.reason).toBe('BadRequest');
    expect(strict.serverMessage).toContain('strict decoding error: unknown field "spec.bogus"');
  });

  it('follows continue tokens in listAll', async () => {
    await Promise.all(
      ['page-a', 'page-b', 'page-c', 'page-d', 'page-e'].map((name) =>
        client.create(CONFIG_MAPS, { metadata: { name, namespace: namespace.name, labels: { paging: 'yes' } } }),
      ),
    );
    const first = await client.list(CONFIG_MAPS, { namespace: namespace.name, labelSelector: 'paging=yes', limit: 2 });
    expect(first.items).toHaveLength(2);
    expect(first.continue).not.toBe('');
    const all = await client.listAll(CONFIG_MAPS, { namespace: namespace.name, labelSelector: 'paging=yes', limit: 2 });
    expect(all.items.map((item) => item.metadata.name).sort()).toEqual([
      'page-a',
      'page-b',
      'page-c',
      'page-d',
      'page-e',
    ]);
    expect(all.items.every((item) => item.apiVersion === 'v1' && item.kind === 'ConfigMap')).toBe(true);
  });

  it('updates with the resourceVersion as precondition: a stale one is a Conflict', async () => {
    const created = await client.create(THINGS, thing('update-me'));
    const updated = await client.update(THINGS, { ...created, spec: { size: 2 } });
    expect(updated.spec?.size).toBe(2);
    const error = await expectRejection(client.update(THINGS, { ...created, spec: { size: 5 } }));
    expect(isConflict(error)).toBe(true);
    expect(isStaleResourceVersionConflict(error)).toBe(true);
    expect(isAlreadyExists(error)).toBe(false);
    expect(error.statusCode).toBe(409);
    expect(error.reason).toBe('Conflict');
    expect(error.message).toContain(`update Thing ${namespace.name}/update-me: 409 Conflict: `);
    expect(error.serverMessage).toContain('the object has been modified');
  });

  it('merge-patches and JSON-patches with the right content types', async () => {
    await client.create(THINGS, thing('patch-me', { size: 1, color: 'blue' }));
    const merged = await client.mergePatch(
      THINGS,
      { namespace: namespace.name, name: 'patch-me' },
      { spec: { color: null, size: 4 } },
    );
    expect(merged.spec).toEqual({ size: 4 });
    const patched = await client.jsonPatch(THINGS, { namespace: namespace.name, name: 'patch-me' }, [
      { op: 'test', path: '/spec/size', value: 4 },
      { op: 'replace', path: '/spec/size', value: 6 },
    ]);
    expect(patched.spec?.size).toBe(6);
    const failedTest = await expectRejection(
      client.jsonPatch(THINGS, { namespace: namespace.name, name: 'patch-me' }, [
        { op: 'test', path: '/spec/size', value: 4 },
        { op: 'replace', path: '/spec/size', value: 9 },
      ]),
    );
    expect(failedTest.statusCode).toBeGreaterThanOrEqual(400);
    expect((await client.get(THINGS, { namespace: namespace.name, name: 'patch-me' })).spec?.size).toBe(6);
  });

  it('deletes with preconditions: a wrong uid is a Conflict and the object stays', async () => {
    const created = await client.create(THINGS, thing('delete-me'));
    const error = await expectRejection(
      client.delete(THINGS, created.metadata, { preconditions: { uid: '00000000-0000-0000-0000-000000000000' } }),
    );
    expect(isConflict(error)).toBe(true);
    await client.delete(THINGS, created.metadata, {
      preconditions: { uid: created.metadata.uid, resourceVersion: created.metadata.resourceVersion },
      propagationPolicy: 'Background',
    });
    const gone = await expectRejection(client.get(THINGS, created.metadata));
    expect(isNotFound(gone)).toBe(true);
  });
});

describe('transport failures', () => {
  it('a request that gets no answer fails after its deadline with a KubeRequestError naming the request', async () => {
    const proxy = await BlackholeProxy.start(testEnv().server);
    const through = proxy.kubeConfigThrough(testEnv().kubeConfig);
    // Two clients through the same proxy: one with the default request timeout, to see that the proxy carries requests
    // (however long a loaded machine takes to open the connection and answer), and one with 300 ms, asked only once
    // nothing can answer it, so that its deadline is the one way its request can end.
    const carried = new Client(through, { fieldManager: 'runtime-test' });
    const cutOff = new Client(through, { fieldManager: 'runtime-test', requestTimeoutMs: 300 });
    try {
      // Before the black hole the proxy carries requests: the API server answers (NotFound).
      const answered = await carried
        .get(THINGS, { namespace: namespace.name, name: 'anything' })
        .catch((e: unknown) => e);
      expect(answered).toBeInstanceOf(KubeApiError);
      proxy.blackhole();
      const error = await cutOff.get(THINGS, { namespace: namespace.name, name: 'anything' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(KubeRequestError);
      expect((error as Error).message).toBe(
        `get Thing ${namespace.name}/anything: request failed: timed out after 300 ms`,
      );
      const aborted = new AbortController();
      const pending = cutOff
        .list(THINGS, { namespace: namespace.name, signal: aborted.signal })
        .catch((e: unknown) => e);
      aborted.abort(new Error('controller stopping'));
      expect(((await pending) as Error).message).toBe(
        `list things in namespace ${namespace.name}: request failed: controller stopping`,
      );
    } finally {
      carried.close();
      cutOff.close();
      await proxy.close();
    }
  });
});

describe('typed errors', () => {
  it('NotFound names the verb, the kind, the object and carries the server message', async () => {
    const error = await expectRejection(client.get(THINGS, { namespace: namespace.name, name: 'missing' }));
    expect(isNotFound(error)).toBe(true);
    expect(error.reason).toBe('NotFound');
    expect(error.target).toMatchObject({ verb: 'get', resource: 'Thing', namespace: namespace.name, name: 'missing' });
    expect(error.message).toBe(
      `get Thing ${namespace.name}/missing: 404 NotFound: things.runtime-test.tally.dev "missing" not found`,
    );
  });

  it('AlreadyExists is told apart from Conflict', async () => {
    await client.create(THINGS, thing('twice'));
    const error = await expectRejection(client.create(THINGS, thing('twice')));
    expect(isAlreadyExists(error)).toBe(true);
    expect(isConflict(error)).toBe(false);
    expect(error.message).toContain(`create Thing ${namespace.name}/twice: 409 AlreadyExists:`);
  });

  it('Invalid (422) carries the field causes from the server', async () => {
    const error = await expectRejection(client.create(THINGS, thing('too-big', { size: 11 })));
    expect(isInvalid(error)).toBe(true);
    expect(error.statusCode).toBe(422);
    expect(error.causes.map((cause) => cause.field)).toContain('spec.size');
    expect(error.serverMessage).toContain('spec.size');
  });

  it('Gone (410) is recognised from the Status body of an ApiException (a JSON string)', () => {
    // A 410 needs a compacted resourceVersion, which a fresh etcd does not have: parse the server's Status shape.
    const status = {
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      message: 'The provided continue parameter is too old to display a consistent list result.',
      reason: 'Expired',
      code: 410,
    };
    const error = asKubeApiError(new ApiException(410, 'Gone', JSON.stringify(status), {}), {
      verb: 'list',
      resource: 'configmaps',
      namespace: 'ns',
    });
    expect(isGone(error)).toBe(true);
    expect(isNotFound(error)).toBe(false);
    expect(error?.reason).toBe('Expired');
    expect(error?.message).toBe(`list configmaps in namespace ns: 410 Expired: ${status.message}`);
    expect(asKubeApiError(new Error('not from the API'))).toBeUndefined();
  });

  it('the same predicates understand client-node ApiExceptions (body is a JSON string)', async () => {
    const core = testEnv().kubeConfig.makeApiClient(CoreV1Api);
    const error = await core.readNamespace({ name: 'no-such-namespace-here' }).catch((caught: unknown) => caught);
    expect(isNotFound(error)).toBe(true);
    expect(asKubeApiError(error)?.serverMessage).toBe('namespaces "no-such-namespace-here" not found');
  });
});

describe('server-side apply', () => {
  it('records the field manager in managedFields and removes fields the manager stops applying', async () => {
    const applied = await client.apply(THINGS, thing('applied', { size: 2, color: 'green' }), {
      fieldManager: 'manager-a',
    });
    const entry = (applied.metadata.managedFields as { manager?: string; operation?: string }[]).find(
      (field) => field.manager === 'manager-a',
    );
    expect(entry?.operation).toBe('Apply');
    const reapplied = await client.apply(THINGS, thing('applied', { size: 2 }), { fieldManager: 'manager-a' });
    expect(reapplied.spec).toEqual({ size: 2 });
  });

  it('reports a field conflict without force and takes the field over with force', async () => {
    await client.apply(THINGS, thing('contested', { size: 2 }), { fieldManager: 'manager-a' });
    const conflict = await expectRejection(
      client.apply(THINGS, thing('contested', { size: 3 }), { fieldManager: 'manager-b', force: false }),
    );
    expect(isConflict(conflict)).toBe(true);
    expect(conflict.causes.some((cause) => cause.reason === 'FieldManagerConflict')).toBe(true);
    // Not optimistic concurrency: it persists until ownership changes, so a controller reports it as an error.
    expect(isStaleResourceVersionConflict(conflict)).toBe(false);
    const forced = await client.apply(THINGS, thing('contested', { size: 3 }), { fieldManager: 'manager-b' });
    expect(forced.spec?.size).toBe(3);
    const managers = (forced.metadata.managedFields as { manager?: string }[]).map((field) => field.manager);
    expect(managers).toContain('manager-b');
  });

  it('applies the status subresource with its own managedFields entry', async () => {
    await client.create(THINGS, thing('status-applied'));
    const applied = await client.applyStatus(
      THINGS,
      {
        apiVersion: THINGS.apiVersion,
        kind: THINGS.kind,
        metadata: { name: 'status-applied', namespace: namespace.name },
        status: { phase: 'Ready' },
      },
      { fieldManager: 'status-manager' },
    );
    expect(applied.status?.phase).toBe('Ready');
    const entry = (applied.metadata.managedFields as { manager?: string; subresource?: string }[]).find(
      (field) => field.manager === 'status-manager',
    );
    expect(entry?.subresource).toBe('status');
  });
});

describe('status patches', () => {
  it('writes status with a fresh resourceVersion and rejects a stale one with a typed Conflict', async () => {
    const created = await client.create(THINGS, thing('status-patched'));
    const patched = await client.patchStatus(THINGS, created, { phase: 'Working', observed: 1 });
    expect(patched.status).toEqual({ phase: 'Working', observed: 1 });
    expect(patched.spec).toEqual(created.spec);
    const error = await expectRejection(client.patchStatus(THINGS, created, { phase: 'Stale' }));
    expect(isConflict(error)).toBe(true);
    expect(error.target).toMatchObject({ name: 'status-patched', subresource: 'status' });
    expect(error.message).toContain(`patch status Thing ${namespace.name}/status-patched (status): 409 Conflict`);
    const current = await client.get(THINGS, created.metadata);
    expect(current.status?.phase).toBe('Working');
  });

  it('status writes do not touch spec and spec writes do not touch status', async () => {
    const created = await client.create(THINGS, thing('split', { size: 1 }));
    const withStatus = await client.patchStatus(THINGS, created, { phase: 'A' });
    const specChanged = await client.mergePatch(THINGS, created.metadata, {
      spec: { size: 2 },
      status: { phase: 'ignored' },
    });
    expect(specChanged.status?.phase).toBe('A');
    expect(withStatus.spec?.size).toBe(1);
  });
});

describe('finalizers', () => {
  it('adds and removes idempotently and holds deletion until removed', async () => {
    const created = await client.create(THINGS, thing('finalized'));
    const once = await addFinalizer(client, THINGS, created, FINALIZER);
    const twice = await addFinalizer(client, THINGS, once, FINALIZER);
    expect(twice).toBe(once);
    const stored = await client.get(THINGS, created.metadata);
    expect(stored.metadata.finalizers).toEqual([FINALIZER]);
    expect(stored.metadata.resourceVersion).toBe(once.metadata.resourceVersion);

    await client.delete(THINGS, created.metadata);
    const terminating = await client.get(THINGS, created.metadata);
    expect(terminating.metadata.deletionTimestamp).toBeTruthy();
    expect(hasFinalizer(terminating, FINALIZER)).toBe(true);

    await removeFinalizer(client, THINGS, terminating, FINALIZER);
    const gone = await expectRejection(client.get(THINGS, created.metadata));
    expect(isNotFound(gone)).toBe(true);
    // Removing again from the last copy sends nothing (the finalizer list of the copy is known to lack it).
    const without = { ...terminating, metadata: { ...terminating.metadata, finalizers: [] } };
    expect(await removeFinalizer(client, THINGS, without, FINALIZER)).toBe(without);
    // Removing again from the stale copy that still lists it (a cache behind the deletion): the object is gone, so
    // the finalizer is too — success, and the returned copy no longer lists it.
    const stale = await removeFinalizer(client, THINGS, terminating, FINALIZER);
    expect(stale.metadata.finalizers).toEqual([]);
    expect(stale.metadata.name).toBe(created.metadata.name);
  });

  it('keeps other finalizers and refuses to write from a stale copy', async () => {
    const created = await client.create(THINGS, {
      ...thing('shared-finalizers'),
      metadata: { name: 'shared-finalizers', namespace: namespace.name, finalizers: ['other.io/keep'] },
    });
    const added = await addFinalizer(client, THINGS, created, FINALIZER);
    expect(added.metadata.finalizers).toEqual(['other.io/keep', FINALIZER]);
    const error = await expectRejection(addFinalizer(client, THINGS, created, 'third.io/late'));
    expect(isConflict(error)).toBe(true);
    const removed = await removeFinalizer(client, THINGS, added, FINALIZER);
    expect(removed.metadata.finalizers).toEqual(['other.io/keep']);
    await removeFinalizer(client, THINGS, removed, 'other.io/keep');
  });
});

describe('EventRecorder', () => {
  it('creates events.k8s.io/v1 Events and folds repeats into a series', async () => {
    const { logger } = capturingLogger();
    const recorder = new EventRecorder({
      client,
      reportingController: 'runtime-test.tally.dev/thing-controller',
      reportingInstance: 'runtime-test-1',
      logger,
    });
    const regarding = await client.create(THINGS, thing('eventful'));
    await recorder.normal(regarding, 'Allocated', 'Allocate', 'gave it an address');
    await recorder.normal(regarding, 'Allocated', 'Allocate', 'gave it an address');
    await recorder.warning(regarding, 'PoolExhausted', 'Allocate', 'no free address');

    const events = await client.list(EVENTS_RESOURCE, { namespace: namespace.name });
    const mine = events.items.filter((event) => event.metadata.name.startsWith('eventful.'));
    expect(mine).toHaveLength(2);
    const allocated = mine.find(
      (event) => (event as unknown as { reason: string }).reason === 'Allocated',
    ) as unknown as Record<string, unknown>;
    expect(allocated).toMatchObject({
      type: 'Normal',
      action: 'Allocate',
      note: 'gave it an address',
      reportingController: 'runtime-test.tally.dev/thing-controller',
      reportingInstance: 'runtime-test-1',
      regarding: { kind: 'Thing', name: 'eventful', namespace: namespace.name, uid: regarding.metadata.uid },
      series: { count: 2 },
    });
    expect(String(allocated.eventTime)).toMatch(/\.\d{6}Z$/);
    expect((allocated.metadata as { name: string }).name).toMatch(/^eventful\.[0-9a-f]+$/);
  });

  it('starts a new event when the series event is gone (expired or deleted)', async () => {
    const { logger } = capturingLogger();
    const recorder = new EventRecorder({ client, reportingController: 'runtime-test', reportingInstance: 'x', logger });
    const regarding = await client.create(THINGS, thing('forgetful'));
    const mine = async (): Promise<KubeObject[]> =>
      (await client.list(EVENTS_RESOURCE, { namespace: namespace.name })).items.filter((event) =>
        event.metadata.name.startsWith('forgetful.'),
      );
    await recorder.normal(regarding, 'Seen', 'Observe', 'once');
    const [first] = await mine();
    if (!first) throw new Error('the first event was not created');
    await client.delete(EVENTS_RESOURCE, first.metadata);
    await recorder.normal(regarding, 'Seen', 'Observe', 'once');
    const after = await mine();
    expect(after).toHaveLength(1);
    expect(after[0]?.metadata.name).not.toBe(first.metadata.name);
    expect((after[0] as unknown as { series?: unknown }).series).toBeUndefined();
  });

  it('never throws into the caller: a failed event is logged', async () => {
    const { logger, lines } = capturingLogger();
    const recorder = new EventRecorder({ client, reportingController: 'runtime-test', reportingInstance: 'x', logger });
    const ghost: Thing = {
      apiVersion: THINGS.apiVersion,
      kind: THINGS.kind,
      metadata: { name: 'ghost', namespace: 'namespace-that-does-not-exist' },
    };
    await expect(recorder.warning(ghost, 'Failed', 'Reconcile', 'x'.repeat(3000))).resolves.toBeUndefined();
    const warning = await waitFor('the failure to be logged', () =>
      lines().find((line) => line.msg === 'could not record event'),
    );
    expect(warning).toMatchObject({ reason: 'Failed', action: 'Reconcile', regarding: { name: 'ghost' } });
    expect(JSON.stringify(warning.err)).toContain('namespace-that-does-not-exist');
  });
});
