import type https from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';
import { testEnv } from '@tally-ipam/testenv/vitest';
import { describe, expect, it } from 'vitest';
import { KubeApiError } from '../src/client/errors.js';
import { KubeTransport } from '../src/client/transport.js';

/** A copy of the test cluster's KubeConfig that counts `applyToHTTPSOptions` and may spoil what it applies. */
function countingKubeConfig(spoil: (call: number, options: https.RequestOptions) => void = () => undefined): {
  readonly kubeConfig: KubeConfig;
  calls(): number;
} {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(testEnv().kubeConfig.exportConfig());
  const apply = kubeConfig.applyToHTTPSOptions.bind(kubeConfig);
  let calls = 0;
  kubeConfig.applyToHTTPSOptions = async (options: https.RequestOptions): Promise<void> => {
    calls += 1;
    await apply(options);
    spoil(calls, options);
  };
  return { kubeConfig, calls: () => calls };
}

const NAMESPACE_PATH = '/api/v1/namespaces/default';

describe('KubeTransport credentials', () => {
  it('applies the KubeConfig credentials once for a run of requests, not once per request', async () => {
    const counted = countingKubeConfig();
    const transport = new KubeTransport(counted.kubeConfig);
    try {
      for (let index = 0; index < 20; index += 1) await transport.request({ method: 'GET', path: NAMESPACE_PATH });
      await Promise.all(Array.from({ length: 20 }, () => transport.request({ method: 'GET', path: NAMESPACE_PATH })));
      expect(counted.calls()).toBe(1);
    } finally {
      transport.close();
    }
  });

  it('applies them anew after a 401, so a rotated token is picked up by the next request', async () => {
    // The first application carries a token the API server does not know instead of the client certificate.
    const counted = countingKubeConfig((call, options) => {
      if (call !== 1) return;
      options.cert = undefined;
      options.key = undefined;
      options.headers = { ...options.headers, Authorization: 'Bearer not-a-token' };
    });
    const transport = new KubeTransport(counted.kubeConfig);
    try {
      const refused = await transport.request({ method: 'GET', path: NAMESPACE_PATH }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(KubeApiError);
      expect((refused as KubeApiError).statusCode).toBe(401);
      for (let index = 0; index < 5; index += 1) {
        expect(await transport.request({ method: 'GET', path: NAMESPACE_PATH })).toMatchObject({
          metadata: { name: 'default' },
        });
      }
      expect(counted.calls()).toBe(2);
    } finally {
      transport.close();
    }
  });
});
