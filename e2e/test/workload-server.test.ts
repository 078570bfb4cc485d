import { DiscoveryV1Api } from '@kubernetes/client-node';
import { testEnv, withTestNamespace } from '@tally-ipam/testenv/vitest';
import { describe, expect, it } from 'vitest';
import { advertisedApiServer } from './harness.js';

/**
 * On an external cluster the workload kubeconfig Secrets name the address kube-apiserver advertises through the
 * `kubernetes` Service's EndpointSlice (see `workloadServer`). testenv's API server publishes none, so this plays the
 * slices a kind (IPv4) or an IPv6 control plane publishes, each in its own test namespace, with documentation
 * addresses (the API server refuses loopback addresses in EndpointSlices, so the address cannot be this one's).
 */
describe('the workload cluster address on an external cluster', () => {
  it('is the address and port the API server advertises, IPv6 in brackets, and none without a slice', async () => {
    const env = testEnv();
    const discovery = env.kubeConfig.makeApiClient(DiscoveryV1Api);
    const publish = async (prefix: string, addressType: 'IPv4' | 'IPv6', address: string): Promise<string> => {
      const ns = await withTestNamespace(env.kubeConfig, prefix);
      await discovery.createNamespacedEndpointSlice({
        namespace: ns.name,
        body: {
          metadata: { name: 'kubernetes', labels: { 'kubernetes.io/service-name': 'kubernetes' } },
          addressType,
          endpoints: [{ addresses: [address] }],
          ports: [{ name: 'https', port: 6443, protocol: 'TCP' }],
        },
      });
      return ns.name;
    };

    const kind = await publish('e2e-workload-v4', 'IPv4', '192.0.2.18');
    expect(await advertisedApiServer(env.kubeConfig, kind)).toBe('https://192.0.2.18:6443');
    const ipv6 = await publish('e2e-workload-v6', 'IPv6', '2001:db8::18');
    expect(await advertisedApiServer(env.kubeConfig, ipv6)).toBe('https://[2001:db8::18]:6443');
    const none = await withTestNamespace(env.kubeConfig, 'e2e-workload-none');
    expect(await advertisedApiServer(env.kubeConfig, none.name)).toBeUndefined();
  });
});
