import { fileURLToPath } from 'node:url';
import { ApiException, CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { FIELD_MANAGER, installCRDs } from '../src/crds.js';
import { kubeRequest } from '../src/kube-request.js';
import { testEnv, withTestNamespace } from '../src/vitest.js';
import { eventually, statusOf, statusReason } from './helpers.js';

const fixtureCRD = fileURLToPath(new URL('./fixtures/widgets.crd.yaml', import.meta.url));
const widgets = { group: 'testenv.tally.dev', version: 'v1', plural: 'widgets' } as const;

interface Widget {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    resourceVersion?: string;
    finalizers?: string[];
    deletionTimestamp?: string;
  };
  spec: Record<string, unknown>;
}

function widget(name: string, spec: Record<string, unknown>, finalizers?: string[]): Widget {
  return { apiVersion: 'testenv.tally.dev/v1', kind: 'Widget', metadata: { name, finalizers }, spec };
}

function api(): CustomObjectsApi {
  return testEnv().kubeConfig.makeApiClient(CustomObjectsApi);
}

describe('installCRDs', () => {
  it('server-side applies with the tally-testenv field manager and is idempotent', async () => {
    const kc = testEnv().kubeConfig;
    await installCRDs(kc, [fixtureCRD]);
    const response = await kubeRequest(kc, {
      method: 'GET',
      path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.testenv.tally.dev',
    });
    expect(response.status).toBe(200);
    const crd = JSON.parse(response.body) as { metadata: { managedFields: { manager: string; operation: string }[] } };
    expect(crd.metadata.managedFields).toContainEqual(
      expect.objectContaining({ manager: FIELD_MANAGER, operation: 'Apply' }),
    );
  });

  it('rejects a file that is not a CRD, naming it', async () => {
    const notACRD = fileURLToPath(new URL('./fixtures/not-a-crd.yaml', import.meta.url));
    await expect(installCRDs(testEnv().kubeConfig, [notACRD])).rejects.toThrow(
      /not-a-crd\.yaml.*CustomResourceDefinition/s,
    );
  });
});

describe('a custom resource on the real API server', () => {
  it('round-trips, with the schema default applied', async () => {
    const ns = await withTestNamespace();
    const created = (await api().createNamespacedCustomObject({
      ...widgets,
      namespace: ns.name,
      body: widget('round-trip', { size: 3, labels: { a: 'b' } }),
    })) as Widget;
    const read = (await api().getNamespacedCustomObject({
      ...widgets,
      namespace: ns.name,
      name: 'round-trip',
    })) as Widget;
    expect(read.spec).toEqual({ size: 3, labels: { a: 'b' }, color: 'green' });
    expect(read.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
  });

  it('enforces enum and CEL validation from the installed schema', async () => {
    const ns = await withTestNamespace();
    const badColor = await statusOf(
      api().createNamespacedCustomObject({
        ...widgets,
        namespace: ns.name,
        body: widget('purple', { size: 1, color: 'purple' }),
      }),
    );
    expect(badColor).toBe(422);
    const tooBig = await statusOf(
      api().createNamespacedCustomObject({ ...widgets, namespace: ns.name, body: widget('big', { size: 500 }) }),
    );
    expect(tooBig).toBe(422);
  });

  it('prunes fields the schema does not declare', async () => {
    const ns = await withTestNamespace();
    const body = { ...widget('pruned', { size: 2, unknownField: 'dropped' }), extraTopLevel: { x: 1 } };
    await api().createNamespacedCustomObject({ ...widgets, namespace: ns.name, body });
    const read = (await api().getNamespacedCustomObject({ ...widgets, namespace: ns.name, name: 'pruned' })) as Record<
      string,
      unknown
    > & { spec: Record<string, unknown> };
    expect(read.spec).not.toHaveProperty('unknownField');
    expect(read).not.toHaveProperty('extraTopLevel');
    expect(read.spec.size).toBe(2);
  });

  it('keeps an object with a finalizer until the finalizer is removed', async () => {
    const ns = await withTestNamespace();
    const name = 'held';
    await api().createNamespacedCustomObject({
      ...widgets,
      namespace: ns.name,
      body: widget(name, { size: 1 }, ['testenv.tally.dev/hold']),
    });
    await api().deleteNamespacedCustomObject({ ...widgets, namespace: ns.name, name });
    const terminating = (await api().getNamespacedCustomObject({ ...widgets, namespace: ns.name, name })) as Widget;
    expect(terminating.metadata.deletionTimestamp).toBeTruthy();
    expect(terminating.metadata.finalizers).toEqual(['testenv.tally.dev/hold']);

    await api().patchNamespacedCustomObject(
      { ...widgets, namespace: ns.name, name, body: { metadata: { finalizers: null } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    // Removing the last finalizer of an object being deleted completes the deletion in the same request.
    expect(await statusOf(api().getNamespacedCustomObject({ ...widgets, namespace: ns.name, name }))).toBe(404);
  });

  it('answers an update with a stale resourceVersion with 409 Conflict', async () => {
    const ns = await withTestNamespace();
    const name = 'contended';
    const original = (await api().createNamespacedCustomObject({
      ...widgets,
      namespace: ns.name,
      body: widget(name, { size: 1 }),
    })) as Widget;
    await api().replaceNamespacedCustomObject({
      ...widgets,
      namespace: ns.name,
      name,
      body: { ...original, spec: { ...original.spec, size: 2 } },
    });
    let caught: unknown;
    try {
      await api().replaceNamespacedCustomObject({
        ...widgets,
        namespace: ns.name,
        name,
        body: { ...original, spec: { ...original.spec, size: 3 } },
      });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ApiException);
    expect((caught as ApiException<unknown>).code).toBe(409);
    expect(statusReason(caught)).toBe('Conflict');
    const current = (await api().getNamespacedCustomObject({ ...widgets, namespace: ns.name, name })) as Widget;
    expect(current.spec.size).toBe(2);
  });

  it('is served by discovery as soon as installCRDs returns', async () => {
    const response = await kubeRequest(testEnv().kubeConfig, { method: 'GET', path: '/apis/testenv.tally.dev/v1' });
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toMatchObject({
      resources: expect.arrayContaining([expect.objectContaining({ name: 'widgets' })]),
    });
  });
});

describe('withTestNamespace', () => {
  let namespaceFromPreviousTest = '';

  it('creates a labelled namespace for the test', async () => {
    const ns = await withTestNamespace(undefined, 'Ns Helper');
    expect(ns.name).toMatch(/^ns-helper-[0-9a-f]{8}$/);
    namespaceFromPreviousTest = ns.name;
  });

  it('deleted the namespace of the previous test when it finished', async () => {
    const core = testEnv().kubeConfig.makeApiClient(CoreV1Api);
    expect(namespaceFromPreviousTest).not.toBe('');
    // With kube-controller-manager running, the namespace goes away entirely; it was at least marked for deletion.
    await eventually(`namespace ${namespaceFromPreviousTest} to be deleted`, async () => {
      const status = await statusOf(core.readNamespace({ name: namespaceFromPreviousTest }));
      return status === 404;
    });
  });
});
