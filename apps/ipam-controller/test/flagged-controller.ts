/**
 * A file's own built controller, started with one feature flag (`--enable-metal3-ipam`, `--enable-in-cluster-ipam`)
 * in a namespace of its own, its webhook server on a free port with a serving certificate of its own: started before
 * the file's tests, stopped after them together with the webhook configuration a test registered.
 */
import type { V1ValidatingWebhookConfiguration } from '@kubernetes/client-node';
import { Client, type ResourceKind } from '@tally-ipam/controller-kit';
import { createServingCertDir, type ServingCertDir } from '@tally-ipam/testenv';
import { createTestNamespace, type TestNamespace, testEnv } from '@tally-ipam/testenv/vitest';
import { afterAll, beforeAll } from 'vitest';
import { type ControllerProcess, servingPort, startControllerWithWebhooks } from './controller-process.js';

const WEBHOOK_CONFIGURATIONS: ResourceKind = {
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingWebhookConfiguration',
  plural: 'validatingwebhookconfigurations',
  namespaced: false,
};

/** What a webhook configuration builder is given to point at the file's controller, for the file's namespace only. */
export interface LoopbackWebhookOptions {
  readonly name: string;
  readonly client: { readonly baseUrl: string; readonly caBundlePem: string };
  readonly enabledExpression: string;
  readonly namespaceSelector: { readonly matchLabels: Readonly<Record<string, string>> };
}

export interface FlaggedController {
  readonly client: Client;
  /** The file's namespace: the controller's `--namespace`. */
  readonly namespace: string;
  readonly controller: ControllerProcess;
  /** The webhook paths the controller logged when its webhook server started. */
  servedWebhookPaths(): Promise<string[]>;
  /** Registers the configuration `build` makes for the controller's webhook server (deleted after the file). */
  registerWebhooks(build: (options: LoopbackWebhookOptions) => V1ValidatingWebhookConfiguration): Promise<void>;
}

/** Starts the controller with `flag` for the calling file (`name` names its namespace, certificate and client). */
export function useFlaggedController(name: string, flag: string): () => FlaggedController {
  let started: FlaggedController | undefined;
  let namespace: TestNamespace | undefined;
  let certs: ServingCertDir | undefined;
  let controller: ControllerProcess | undefined;
  let client: Client | undefined;
  let configurationName = '';

  beforeAll(async () => {
    const env = testEnv();
    const fileClient = new Client(env.kubeConfig, { fieldManager: `${name}-test` });
    client = fileClient;
    namespace = await createTestNamespace(env.kubeConfig, name);
    const namespaceName = namespace.name;
    const fileCerts = await createServingCertDir(`${name}-webhook`);
    certs = fileCerts;
    const { controller: process, webhookPort } = await startControllerWithWebhooks(
      [
        '--kubeconfig',
        env.kubeconfigPath,
        '--namespace',
        namespaceName,
        flag,
        '--metrics-bind-address=127.0.0.1:0',
        '--health-probe-bind-address=127.0.0.1:0',
      ],
      fileCerts.path,
    );
    controller = process;
    await servingPort(process, 'metrics');
    started = {
      client: fileClient,
      namespace: namespaceName,
      controller: process,
      servedWebhookPaths: async () => {
        const line = await process.waitForLine(
          (text) => text.includes('"msg":"serving webhooks"'),
          'the webhook server',
        );
        return (JSON.parse(line) as { paths?: string[] }).paths ?? [];
      },
      registerWebhooks: async (build) => {
        configurationName = `${name}-webhook-${namespaceName}`;
        const configuration = build({
          name: configurationName,
          client: { baseUrl: `https://127.0.0.1:${webhookPort}`, caBundlePem: fileCerts.caPem },
          enabledExpression: "'true' == 'true'",
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespaceName } },
        });
        await fileClient.create(WEBHOOK_CONFIGURATIONS, { ...configuration, metadata: { name: configurationName } });
      },
    };
  });

  afterAll(async () => {
    if (configurationName) await client?.delete(WEBHOOK_CONFIGURATIONS, { name: configurationName }).catch(() => {});
    if (controller && controller.child.exitCode === null) await controller.stop('SIGKILL');
    await namespace?.delete();
    await certs?.remove();
  });

  return () => {
    if (!started) throw new Error(`the ${flag} controller of this file did not start (see beforeAll)`);
    return started;
  };
}
