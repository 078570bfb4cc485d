import { randomBytes } from 'node:crypto';
import { ApiException, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';

export interface TestNamespace {
  readonly name: string;
  /** Deletes the namespace (its objects go with it when kube-controller-manager runs). Ignores "not found". */
  delete(): Promise<void>;
}

/** Label on every namespace made here, so leftovers are easy to find: `kubectl get ns -l tally-testenv/test`. */
export const TEST_NAMESPACE_LABEL = 'tally-testenv/test';

/** Creates a namespace named `<prefix>-<random>` for one test. */
export async function createTestNamespace(kc: KubeConfig, prefix = 'test'): Promise<TestNamespace> {
  const cleanPrefix = prefix
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 50);
  const name = `${cleanPrefix || 'test'}-${randomBytes(4).toString('hex')}`;
  const core = kc.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name, labels: { [TEST_NAMESPACE_LABEL]: 'true' } } } });
  return {
    name,
    delete: async () => {
      try {
        await core.deleteNamespace({ name });
      } catch (error) {
        if (error instanceof ApiException && error.code === 404) return;
        throw error;
      }
    },
  };
}
