import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  loadYaml,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import {
  IPAM_GROUP,
  TALLY_GROUP,
  TALLY_IP_POOL_KIND,
  TALLY_V1ALPHA1_API_VERSION,
  TALLY_V1ALPHA1_VERSION,
} from '@tally-ipam/api-types';
import {
  deleteWebhookConfiguration,
  parseWebhookConfigurations,
  registerLoopbackWebhooks,
  type ShippedWebhookConfiguration,
  type WebhookConfigurationKind,
  waitFor,
  warningTexts,
} from '@tally-ipam/testenv';
import { z } from 'zod';
import { APPS, type AppKey, type ServedWebhooks } from './apps.js';

/** Field manager of the webhook configurations and probe objects the e2e setup writes. */
const FIELD_MANAGER = 'tally-e2e';

/** Where the readiness probes create their objects; deleted again once every webhook answered. */
export const WEBHOOK_PROBE_NAMESPACE = 'tally-e2e-webhook-probes';

const Kustomization = z.looseObject({ resources: z.array(z.string().min(1)).min(1) });

/** A shipped configuration and the file it came from (for errors). */
export interface AppWebhookConfiguration {
  readonly source: string;
  readonly configuration: ShippedWebhookConfiguration;
}

/**
 * The app's webhook configurations exactly as it ships them: every resource of `config/webhook/kustomization.yaml`
 * (the same files its clusterctl components are rendered from), webhook configurations only.
 */
export function shippedWebhookConfigurations(app: AppKey): AppWebhookConfiguration[] {
  const dir = APPS[app].webhookConfigDir;
  const kustomizationPath = join(dir, 'kustomization.yaml');
  const kustomization = Kustomization.safeParse(loadYaml<unknown>(readFileSync(kustomizationPath, 'utf8')));
  if (!kustomization.success) {
    throw new Error(`${kustomizationPath} lists no resources: ${z.prettifyError(kustomization.error)}`);
  }
  const configurations = kustomization.data.resources.flatMap((resource) => {
    const source = join(dir, resource);
    return parseWebhookConfigurations(readFileSync(source, 'utf8'), source).map((configuration) => ({
      source,
      configuration,
    }));
  });
  if (configurations.length === 0) throw new Error(`${kustomizationPath} ships no webhook configuration`);
  return configurations;
}

const SwitchableWebhook = z.looseObject({
  name: z.string(),
  matchConditions: z.array(z.looseObject({ expression: z.string() })).optional(),
});

/**
 * The shipped webhooks a clusterctl variable switches on (a match condition naming `${…}`, e.g. the IPAM controller's
 * Metal3 IPPool webhook under `TALLY_IPAM_ENABLE_METAL3`): registered from the unsubstituted file, their condition is
 * false, so the API server never calls them; the apps here run without the switch and serve no path for them.
 */
function switchedOffWebhooks(configuration: ShippedWebhookConfiguration): Set<string> {
  const webhooks = z.looseObject({ webhooks: z.array(SwitchableWebhook) }).parse(configuration.manifest).webhooks;
  return new Set(
    webhooks
      .filter((webhook) => webhook.matchConditions?.some((condition) => condition.expression.includes('${')))
      .map((webhook) => webhook.name),
  );
}

/** A configuration registered by the setup, to delete before its app stops. */
export interface RegisteredWebhookConfiguration {
  readonly kind: WebhookConfigurationKind;
  readonly name: string;
}

/**
 * Registers the app's shipped webhook configurations with the API server, each `clientConfig` replaced by
 * `https://127.0.0.1:<port><shipped path>` and the CA; everything else as shipped. A shipped path the app does not
 * serve (its `serving webhooks` log line lists what it serves) fails here, naming both.
 */
export async function registerAppWebhooks(
  kc: KubeConfig,
  app: AppKey,
  served: ServedWebhooks,
  caPem: string,
): Promise<RegisteredWebhookConfiguration[]> {
  const registered: RegisteredWebhookConfiguration[] = [];
  for (const { source, configuration } of shippedWebhookConfigurations(app)) {
    const switchedOff = switchedOffWebhooks(configuration);
    for (const webhook of configuration.webhooks) {
      if (!served.paths.includes(webhook.path) && !switchedOff.has(webhook.name)) {
        throw new Error(
          `${source}: webhook ${webhook.name} has path ${webhook.path}, which ${APPS[app].name} does not serve ` +
            `(it serves ${served.paths.join(', ') || 'nothing'})`,
        );
      }
    }
    const name = await registerLoopbackWebhooks(
      kc,
      configuration,
      { port: served.port, caPem },
      {
        fieldManager: FIELD_MANAGER,
      },
    );
    registered.push({ kind: configuration.kind, name });
  }
  return registered;
}

export async function unregisterWebhooks(
  kc: KubeConfig,
  configurations: readonly RegisteredWebhookConfiguration[],
): Promise<void> {
  for (const { kind, name } of configurations) await deleteWebhookConfiguration(kc, kind, name);
}

/** The parts of a shipped webhook the probes need: which resource it guards. */
const GuardedResource = z.looseObject({
  name: z.string(),
  rules: z
    .array(
      z.looseObject({
        apiGroups: z.array(z.string()).min(1),
        apiVersions: z.array(z.string()).min(1),
        resources: z.array(z.string()).min(1),
      }),
    )
    .min(1),
});
const GuardedResources = z.looseObject({ webhooks: z.array(GuardedResource) });

interface Target {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
}

const PROBE_POOL = 'probe';
const PROBE_ADDRESSES = '198.51.100.0/28';

/** What a probe saw when the request did not prove that the webhook answered (for the timeout message). */
type ProbeOutcome = { readonly passed: true } | { readonly passed: false; readonly saw: string };

const StatusMessage = z.looseObject({ message: z.string() });

/** A failed request's `Status` message (the API server's words, unescaped), or the error's own. */
function describeFailure(error: unknown): string {
  if (error instanceof ApiException) {
    const body = typeof error.body === 'string' ? error.body : JSON.stringify(error.body);
    let status: unknown;
    try {
      status = JSON.parse(body);
    } catch {
      return `HTTP ${error.code}: ${body}`;
    }
    const parsed = StatusMessage.safeParse(status);
    return `HTTP ${error.code}: ${parsed.success ? parsed.data.message : body}`;
  }
  return error instanceof Error ? error.message : String(error);
}

const POOL_KINDS_BY_PLURAL: Readonly<Record<string, string>> = {
  tallyippools: 'TallyIPPool',
  globaltallyippools: 'GlobalTallyIPPool',
  tallyprefixpools: 'TallyPrefixPool',
  globaltallyprefixpools: 'GlobalTallyPrefixPool',
};

/**
 * Pools: a dry-run create of a pool overlapping the probe namespace's TallyIPPool is admitted with the webhook's
 * overlap warning naming it; only the pool webhook writes that warning, so it proves the request went through it.
 */
function poolProbe(api: CustomObjectsApi, target: Target, spec: object): () => Promise<ProbeOutcome> {
  const cluster = target.plural.startsWith('global');
  const kind = POOL_KINDS_BY_PLURAL[target.plural] ?? target.plural;
  const body = {
    apiVersion: `${target.group}/${target.version}`,
    kind,
    metadata: { name: `${WEBHOOK_PROBE_NAMESPACE}-overlap` },
    spec,
  };
  const expected = `overlaps ${TALLY_IP_POOL_KIND} ${WEBHOOK_PROBE_NAMESPACE}/${PROBE_POOL}`;
  return async () => {
    try {
      const answer = cluster
        ? await api.createClusterCustomObjectWithHttpInfo({ ...target, body, dryRun: 'All' })
        : await api.createNamespacedCustomObjectWithHttpInfo({
            ...target,
            namespace: WEBHOOK_PROBE_NAMESPACE,
            body,
            dryRun: 'All',
          });
      const warnings = warningTexts(answer.headers.warning);
      return warnings.some((text) => text.startsWith(expected))
        ? { passed: true }
        : { passed: false, saw: `admitted with warnings ${JSON.stringify(warnings)}, none "${expected} …"` };
    } catch (error) {
      return { passed: false, saw: describeFailure(error) };
    }
  };
}

/**
 * Creates a probe object through webhooks that may not answer yet: a Deployment counts its Pods available before
 * their Service's endpoints reach every node, and until then the API server cannot call the webhook ("failed calling
 * webhook": connection refused) and refuses the create with a 500. That answer is retried until the deadline; any
 * other refusal is a real one and fails at once.
 */
async function createOnceWebhooksAnswer(what: string, create: () => Promise<unknown>): Promise<void> {
  let last = 'no answer yet';
  // waitFor retries whatever an attempt throws, so a real refusal leaves the loop as a value and is thrown here.
  const outcome = await waitFor(
    `${what} to be created through its webhooks`,
    async (): Promise<{ refused?: string } | undefined> => {
      try {
        await create();
        return {};
      } catch (error) {
        const saw = describeFailure(error).slice(0, 500);
        if (!(error instanceof ApiException && error.code === 500 && saw.includes('failed calling webhook'))) {
          return { refused: saw };
        }
        last = saw;
        return undefined;
      }
    },
    { timeoutMs: 120_000, intervalMs: 200, describe: () => last },
  );
  if (outcome.refused !== undefined) throw new Error(`creating ${what}: ${outcome.refused}`);
}

const TEMPLATE_KINDS_BY_PLURAL: Readonly<Record<string, { kind: string; spec: (variant: string) => object }>> = {
  simclustertemplates: {
    kind: 'SimClusterTemplate',
    spec: (variant) => ({ controlPlaneEndpoint: { host: `${variant}.example.com`, port: 6443 } }),
  },
  simmachinetemplates: {
    kind: 'SimMachineTemplate',
    spec: (variant) => ({
      network: { devices: [{ name: 'eth0', addressesFromPools: [simPoolRef(variant)] }] },
    }),
  },
  simmachinepooltemplates: {
    kind: 'SimMachinePoolTemplate',
    spec: (variant) => ({ template: { network: { devices: [{ addressesFromPools: [simPoolRef(variant)] }] } } }),
  },
};

function simPoolRef(name: string): object {
  return { apiGroup: IPAM_GROUP, kind: TALLY_IP_POOL_KIND, name };
}

/**
 * Templates: the probe template's `spec.template.spec` changed in a dry run is refused by the webhook itself
 * (`admission webhook "<name>" denied the request`), not by a failed call.
 */
async function templateProbe(
  api: CustomObjectsApi,
  target: Target,
  webhookName: string,
): Promise<() => Promise<ProbeOutcome>> {
  const template = TEMPLATE_KINDS_BY_PLURAL[target.plural];
  if (!template) throw new Error(`no readiness probe for ${target.plural} (webhook ${webhookName})`);
  const name = 'probe';
  await createOnceWebhooksAnswer(`${template.kind} ${WEBHOOK_PROBE_NAMESPACE}/${name}`, () =>
    api.createNamespacedCustomObject({
      ...target,
      namespace: WEBHOOK_PROBE_NAMESPACE,
      body: {
        apiVersion: `${target.group}/${target.version}`,
        kind: template.kind,
        metadata: { name },
        spec: { template: { spec: template.spec('a') } },
      },
    }),
  );
  const expected = `admission webhook "${webhookName}" denied the request`;
  return async () => {
    try {
      await api.patchNamespacedCustomObject(
        {
          ...target,
          namespace: WEBHOOK_PROBE_NAMESPACE,
          name,
          body: { spec: { template: { spec: template.spec('b') } } },
          dryRun: 'All',
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      return { passed: false, saw: 'the dry-run change of spec.template.spec was admitted' };
    } catch (error) {
      const saw = describeFailure(error);
      return saw.includes(expected) ? { passed: true } : { passed: false, saw };
    }
  };
}

/**
 * Waits until a dry-run request reaches every webhook the apps ship, through the API server: the configurations are
 * loaded asynchronously, and a path or rule that does not match what the app serves never passes (the timeout names
 * the webhook and the last answer). Probe objects live in `WEBHOOK_PROBE_NAMESPACE`, deleted at the end.
 */
export async function awaitWebhooksAnswer(kc: KubeConfig, apps: readonly AppKey[]): Promise<void> {
  const api = kc.makeApiClient(CustomObjectsApi);
  const core = kc.makeApiClient(CoreV1Api);
  // An earlier call's probe namespace may still be terminating (its deletion is not waited for).
  await waitFor(
    `namespace ${WEBHOOK_PROBE_NAMESPACE} of an earlier probe to be gone`,
    async () =>
      core.readNamespace({ name: WEBHOOK_PROBE_NAMESPACE }).then(
        () => undefined,
        (error: unknown) => {
          if (error instanceof ApiException && error.code === 404) return true;
          throw error;
        },
      ),
    { timeoutMs: 120_000, intervalMs: 500 },
  );
  await core.createNamespace({ body: { metadata: { name: WEBHOOK_PROBE_NAMESPACE } } });
  try {
    const probes: { webhook: string; probe: () => Promise<ProbeOutcome> }[] = [];
    let poolProbes = false;
    for (const app of apps) {
      for (const { source, configuration } of shippedWebhookConfigurations(app)) {
        const switchedOff = switchedOffWebhooks(configuration);
        for (const webhook of GuardedResources.parse(configuration.manifest).webhooks) {
          if (switchedOff.has(webhook.name)) continue;
          const rule = webhook.rules[0];
          const target: Target = {
            group: rule?.apiGroups[0] ?? '',
            version: rule?.apiVersions[0] ?? '',
            plural: rule?.resources[0] ?? '',
          };
          if (target.plural in POOL_KINDS_BY_PLURAL) {
            const spec = target.plural.includes('prefix')
              ? { prefixes: [PROBE_ADDRESSES], allocationPrefixLength: 30 }
              : { addresses: [PROBE_ADDRESSES], prefix: 24 };
            probes.push({ webhook: webhook.name, probe: poolProbe(api, target, spec) });
            poolProbes = true;
          } else if (target.plural in TEMPLATE_KINDS_BY_PLURAL) {
            probes.push({ webhook: webhook.name, probe: await templateProbe(api, target, webhook.name) });
          } else {
            throw new Error(`${source}: no readiness probe for webhook ${webhook.name} (${target.plural})`);
          }
        }
      }
    }
    if (poolProbes) {
      await createOnceWebhooksAnswer(`${TALLY_IP_POOL_KIND} ${WEBHOOK_PROBE_NAMESPACE}/${PROBE_POOL}`, () =>
        api.createNamespacedCustomObject({
          group: TALLY_GROUP,
          version: TALLY_V1ALPHA1_VERSION,
          plural: 'tallyippools',
          namespace: WEBHOOK_PROBE_NAMESPACE,
          body: {
            apiVersion: TALLY_V1ALPHA1_API_VERSION,
            kind: TALLY_IP_POOL_KIND,
            metadata: { name: PROBE_POOL },
            spec: { addresses: [PROBE_ADDRESSES], prefix: 24 },
          },
        }),
      );
    }
    for (const { webhook, probe } of probes) {
      let last = 'no answer yet';
      await waitFor(
        `a dry-run request to go through webhook ${webhook}`,
        async () => {
          const outcome = await probe();
          if (outcome.passed) return true;
          last = outcome.saw;
          return undefined;
        },
        { timeoutMs: 120_000, intervalMs: 200, describe: () => last },
      );
    }
  } finally {
    // The pool webhook admits deleting the unused probe pool; the namespace takes everything else with it.
    await core.deleteNamespace({ name: WEBHOOK_PROBE_NAMESPACE });
  }
}
