import { KubeConfig } from '@kubernetes/client-node';
import { stringify } from 'yaml';

export interface KubeconfigInput {
  readonly server: string;
  readonly caPem: string;
  readonly clientCertPem: string;
  readonly clientKeyPem: string;
  /** Context, cluster and user name. */
  readonly name?: string;
}

const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

/** A self-contained kubeconfig (certificates inline), readable by kubectl and by client-node. */
export function buildKubeconfigYaml(input: KubeconfigInput): string {
  const name = input.name ?? 'tally-testenv';
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: { server: input.server, 'certificate-authority-data': b64(input.caPem) } }],
    users: [
      {
        name,
        user: { 'client-certificate-data': b64(input.clientCertPem), 'client-key-data': b64(input.clientKeyPem) },
      },
    ],
    contexts: [{ name, context: { cluster: name, user: name, namespace: 'default' } }],
    'current-context': name,
    preferences: {},
  });
}

/** A fresh KubeConfig from kubeconfig text; each caller gets its own mutable instance. */
export function kubeConfigFromYaml(yamlText: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(yamlText);
  return kc;
}
