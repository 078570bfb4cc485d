import type https from 'node:https';
import tls from 'node:tls';
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

  it('keeps connections open for requests with the same credentials, under a short pool name', async () => {
    const counted = countingKubeConfig();
    const transport = new KubeTransport(counted.kubeConfig);
    const connect = tls.connect;
    const connections: { hasPEM: boolean; hasContext: boolean }[] = [];
    tls.connect = ((...args: Parameters<typeof tls.connect>) => {
      const options = (args.find((arg) => typeof arg === 'object') ?? {}) as tls.ConnectionOptions;
      connections.push({
        hasPEM: options.cert !== undefined || options.key !== undefined || options.ca !== undefined,
        hasContext: options.secureContext !== undefined,
      });
      return connect.apply(tls, args);
    }) as typeof tls.connect;
    try {
      for (let index = 0; index < 20; index += 1) await transport.request({ method: 'GET', path: NAMESPACE_PATH });
      // One connection served every request; it took its credentials from the one TLS context, not the PEM texts.
      expect(connections).toHaveLength(1);
      expect(connections[0]).toMatchObject({ hasPEM: false, hasContext: true });
    } finally {
      tls.connect = connect;
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
