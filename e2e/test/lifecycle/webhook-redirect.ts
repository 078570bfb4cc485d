import {
  AdmissionregistrationV1Api,
  type AdmissionregistrationV1WebhookClientConfig,
  type KubeConfig,
  type V1ObjectMeta,
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

/** A clusterctl-rendered switch (`'${VARIABLE:=false}' == 'true'`, the variable substituted) that is off. */
const SWITCH = /^'([^']*)' == 'true'$/;

/**
 * Whether the API server never calls this webhook: a match condition of the shipped kind renders to a constant false
 * (the Metal3 or in-cluster webhook with its clusterctl variable unset). The process serves no path for it, and its
 * client config, never used, stays as installed.
 */
function switchedOff(webhook: { matchConditions?: { expression: string }[] }): boolean {
  return (webhook.matchConditions ?? []).some((condition) => {
    const literal = SWITCH.exec(condition.expression.trim());
    return literal !== null && literal[1] !== 'true';
  });
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
  const redirect = <
    W extends {
      name: string;
      clientConfig: AdmissionregistrationV1WebhookClientConfig;
      matchConditions?: { expression: string }[];
    },
  >(installed: {
    metadata?: V1ObjectMeta;
    webhooks?: W[];
  }) => ({
    ...installed,
    metadata: {
      ...installed.metadata,
      annotations: Object.fromEntries(
        Object.entries(installed.metadata?.annotations ?? {}).filter(([key]) => key !== INJECT_CA_FROM),
      ),
    },
    webhooks: (installed.webhooks ?? []).map((webhook) =>
      switchedOff(webhook)
        ? webhook
        : {
            ...webhook,
            clientConfig: redirected(webhook.clientConfig, served, caPem, `${kind} ${name} webhook ${webhook.name}`),
          },
    ),
  });
  if (kind === 'ValidatingWebhookConfiguration') {
    const body = redirect(await api.readValidatingWebhookConfiguration({ name }));
    await api.replaceValidatingWebhookConfiguration({ name, body });
  } else {
    const body = redirect(await api.readMutatingWebhookConfiguration({ name }));
    await api.replaceMutatingWebhookConfiguration({ name, body });
  }
}
