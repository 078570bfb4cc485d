import { readFileSync } from 'node:fs';
import { CoreV1Api, KubeConfig, VersionApi } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { KUBERNETES_VERSION } from '../src/versions.js';
import { testEnv } from '../src/vitest.js';

describe('the shared control plane', () => {
  it('reports the pinned Kubernetes version', async () => {
    const env = testEnv();
    const info = await env.kubeConfig.makeApiClient(VersionApi).getCode();
    expect(env.version).toBe(info.gitVersion);
    // An external cluster (TALLY_TEST_KUBECONFIG) runs whatever version it runs; ours must be the pinned one.
    if (!env.external) {
      expect(info.gitVersion).toBe(KUBERNETES_VERSION);
      expect(`v${info.major}.${info.minor}`).toBe(KUBERNETES_VERSION.split('.').slice(0, 2).join('.'));
    }
  });

  it('writes a kubeconfig file that a fresh client can use', async () => {
    const env = testEnv();
    const kc = new KubeConfig();
    kc.loadFromFile(env.kubeconfigPath);
    expect(kc.getCurrentCluster()?.server).toBe(env.server);
    const namespaces = await kc.makeApiClient(CoreV1Api).listNamespace();
    expect(namespaces.items.map((ns) => ns.metadata?.name)).toContain('default');
    expect(readFileSync(env.kubeconfigPath, 'utf8')).toContain('current-context:');
  });

  it('serves on loopback unless an external cluster was given', () => {
    const env = testEnv();
    if (!env.external) expect(new URL(env.server).hostname).toBe('127.0.0.1');
    expect(new URL(env.server).protocol).toBe('https:');
  });
});
