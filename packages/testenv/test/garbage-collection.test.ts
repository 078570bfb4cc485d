import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { createTestNamespace } from '../src/namespaces.js';
import { testEnv, withTestNamespace } from '../src/vitest.js';
import { eventually, statusOf } from './helpers.js';

describe('kube-controller-manager', () => {
  it('cascades deletion to a ConfigMap owned by another ConfigMap', async () => {
    const kc = testEnv().kubeConfig;
    const core = kc.makeApiClient(CoreV1Api);
    const ns = await withTestNamespace(kc, 'gc');
    const owner = await core.createNamespacedConfigMap({ namespace: ns.name, body: { metadata: { name: 'owner' } } });
    await core.createNamespacedConfigMap({
      namespace: ns.name,
      body: {
        metadata: {
          name: 'dependent',
          ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata?.uid ?? '' }],
        },
      },
    });
    await core.deleteNamespacedConfigMap({ namespace: ns.name, name: 'owner', propagationPolicy: 'Background' });
    await eventually('the dependent ConfigMap to be garbage collected', async () => {
      return (await statusOf(core.readNamespacedConfigMap({ namespace: ns.name, name: 'dependent' }))) === 404;
    });
  });

  it('cascades deletion between custom resources whose CRD was installed before it started', async () => {
    const kc = testEnv().kubeConfig;
    const custom = kc.makeApiClient(CustomObjectsApi);
    const ns = await withTestNamespace(kc, 'gc-cr');
    const ref = { group: 'testenv.tally.dev', version: 'v1', plural: 'widgets', namespace: ns.name } as const;
    const owner = (await custom.createNamespacedCustomObject({
      ...ref,
      body: { apiVersion: 'testenv.tally.dev/v1', kind: 'Widget', metadata: { name: 'owner' }, spec: { size: 1 } },
    })) as { metadata: { uid: string } };
    await custom.createNamespacedCustomObject({
      ...ref,
      body: {
        apiVersion: 'testenv.tally.dev/v1',
        kind: 'Widget',
        metadata: {
          name: 'dependent',
          ownerReferences: [
            { apiVersion: 'testenv.tally.dev/v1', kind: 'Widget', name: 'owner', uid: owner.metadata.uid },
          ],
        },
        spec: { size: 1 },
      },
    });
    await custom.deleteNamespacedCustomObject({ ...ref, name: 'owner', propagationPolicy: 'Foreground' });
    // Foreground deletion only finishes once the garbage collector has deleted the dependent.
    await eventually('the owner (foreground deletion) and its dependent to be gone', async () => {
      const ownerStatus = await statusOf(custom.getNamespacedCustomObject({ ...ref, name: 'owner' }));
      const dependentStatus = await statusOf(custom.getNamespacedCustomObject({ ...ref, name: 'dependent' }));
      return ownerStatus === 404 && dependentStatus === 404;
    });
  });

  it('finishes deleting a namespace with objects in it', async () => {
    const kc = testEnv().kubeConfig;
    const core = kc.makeApiClient(CoreV1Api);
    const ns = await createTestNamespace(kc, 'ns-delete');
    await core.createNamespacedConfigMap({ namespace: ns.name, body: { metadata: { name: 'content' } } });
    await ns.delete();
    await eventually(`namespace ${ns.name} to be removed`, async () => {
      return (await statusOf(core.readNamespace({ name: ns.name }))) === 404;
    });
    expect(await statusOf(core.readNamespacedConfigMap({ namespace: ns.name, name: 'content' }))).toBe(404);
  });
});
