import {
  AdmissionregistrationV1Api,
  type AdmissionregistrationV1WebhookClientConfig,
  type KubeConfig,
} from '@kubernetes/client-node';
import type { WebhookConfigurationKind } from '@tally-ipam/testenv';
import type { ServedWebhooks } from '../apps.js';

/** cert-manager's CA injector would write the Certificate's CA over ours wherever cert-manager runs. */
const INJECT_CA_FROM = 'cert-manager.io/inject-ca-from';

function redirected(
  clientConfig: AdmissionregistrationV1WebhookClientConfig,
  served: ServedWebhooks,
  caPem: string,
  where: string,
): AdmissionregistrationV1WebhookClientConfig {
  const path = clientConfig.service?.path ?? (clientConfig.url ? new URL(clientConfig.url).pathname : undefined);
  if (!path || !served.paths.includes(path)) {
    throw new Error(
      `${where} calls ${path ?? 'no path'}, which the process does not serve (${served.paths.join(', ')})`,
    );
  }
  return { url: `https://127.0.0.1:${served.port}${path}`, caBundle: Buffer.from(caPem).toString('base64') };
}

/**
 * Points the webhook configuration clusterctl installed (Service client config, CA injected by cert-manager) at the
 * app's process on this machine: every webhook's `clientConfig` becomes `https://127.0.0.1:<port><path>` with the
 * process's CA; names, rules, selectors, policies and labels (the provider label `clusterctl delete` selects by)
 * stay as installed. A replace, not an apply: the Service reference clusterctl wrote must go with it.
 */
export async function pointWebhooksAtProcess(
  kc: KubeConfig,
  kind: WebhookConfigurationKind,
  name: string,
  served: ServedWebhooks,
  caPem: string,
): Promise<void> {
  const api = kc.makeApiClient(AdmissionregistrationV1Api);
  const annotations = (metadata: { annotations?: Record<string, string> }): Record<string, string> =>
    Object.fromEntries(Object.entries(metadata.annotations ?? {}).filter(([key]) => key !== INJECT_CA_FROM));
  if (kind === 'ValidatingWebhookConfiguration') {
    const installed = await api.readValidatingWebhookConfiguration({ name });
    await api.replaceValidatingWebhookConfiguration({
      name,
      body: {
        ...installed,
        metadata: { ...installed.metadata, annotations: annotations(installed.metadata ?? {}) },
        webhooks: (installed.webhooks ?? []).map((webhook) => ({
          ...webhook,
          clientConfig: redirected(webhook.clientConfig, served, caPem, `${kind} ${name} webhook ${webhook.name}`),
        })),
      },
    });
    return;
  }
  const installed = await api.readMutatingWebhookConfiguration({ name });
  await api.replaceMutatingWebhookConfiguration({
    name,
    body: {
      ...installed,
      metadata: { ...installed.metadata, annotations: annotations(installed.metadata ?? {}) },
      webhooks: (installed.webhooks ?? []).map((webhook) => ({
        ...webhook,
        clientConfig: redirected(webhook.clientConfig, served, caPem, `${kind} ${name} webhook ${webhook.name}`),
      })),
    },
  });
}
