/** Filling a bench's control plane with the test CRDs' objects (`test/fixtures/crds`), shared by the benches. */
import { fileURLToPath } from 'node:url';
import { CoreV1Api, type KubeConfig, PatchStrategy } from '@kubernetes/client-node';
import { installCRDs } from '@tally-ipam/testenv';
import type { KubeTransport } from '../src/client/transport.js';
import { GROUP, VERSION } from '../test/fixtures/core-resources.js';

/** Server-side apply over one keep-alive transport (client-node 1.4.0 opens a TLS connection per request). */
export function apply(
  transport: KubeTransport,
  namespace: string,
  plural: 'parts' | 'gadgets',
  body: { metadata: { name: string } },
): Promise<unknown> {
  return transport.request({
    method: 'PATCH',
    path: `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/${plural}/${body.metadata.name}`,
    query: { fieldManager: 'bench', force: true },
    body,
    contentType: PatchStrategy.ServerSideApply,
  });
}

/**
 * Applies `count` Parts or Gadgets named `part-<i>` / `gadget-<i>`, `concurrency` at a time. A Part's payload is padded
 * to `payloadBytes` when given, so its size on the wire can match the objects a bench stands in for.
 */
export async function applyAll(
  transport: KubeTransport,
  namespace: string,
  plural: 'parts' | 'gadgets',
  count: number,
  concurrency: number,
  payloadBytes = 0,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const index = next++;
      const name = `${plural.slice(0, -1)}-${index}`;
      const body = {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: plural === 'parts' ? 'Part' : 'Gadget',
        metadata: { name, namespace, labels: { bench: 'true', shard: String(index % 16) } },
        spec:
          plural === 'parts'
            ? { gadget: `gadget-${index % 100}`, payload: `p-${index}`.padEnd(payloadBytes, '.') }
            : { size: 0 },
      };
      await apply(transport, namespace, plural, body);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, () => worker()));
}

/** A fresh control plane made ready for a bench: the test CRDs installed and the bench's namespace created. */
export async function prepareBenchPlane(kc: KubeConfig, namespace: string): Promise<void> {
  await installTestCRDs(kc);
  await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } });
}

/** Installs the test CRDs, retrying while a freshly started API server still refuses them. */
async function installTestCRDs(kc: KubeConfig): Promise<void> {
  const crds = fileURLToPath(new URL('../test/fixtures/crds', import.meta.url));
  for (let attempt = 0; ; attempt += 1) {
    try {
      await installCRDs(kc, [crds]);
      return;
    } catch (error) {
      if (attempt >= 20) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
