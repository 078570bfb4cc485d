/**
 * An admission probe for the time a provider is upgraded under running Pods: a loop of dry-run requests through the
 * API server, one through Tally's TallyIPPool webhook and one through Sim's SimMachineTemplate webhook per round,
 * each answer classified by what proves the webhook itself answered. Nothing here asserts a count (how many requests
 * fit into a rollout depends on the machine); the caller prints them and asserts only what must hold whatever the
 * load: the webhooks answered before and after, and no valid request was refused by a webhook.
 */
import { setTimeout as delay } from 'node:timers/promises';
import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { IPAM_GROUP, TALLY_V1ALPHA1_API_VERSION } from '@tally-ipam/api-types';
import { SIM_V1ALPHA1_API_VERSION } from '@tally-ipam/sim-infra';
import { warningTexts } from '@tally-ipam/testenv';
import { z } from 'zod';

export const ADMISSION_PROBE_NAMESPACE = 'tally-lane-admission-probe';
const PROBE_RANGE = '203.0.113.0/28';
const TALLY = { group: 'ipam.cluster.x-k8s.io', version: 'v1alpha1', plural: 'tallyippools' } as const;
const SIM = { group: 'infrastructure.cluster.x-k8s.io', version: 'v1alpha1', plural: 'simmachinetemplates' } as const;

/**
 * - `answered`: the webhook's own answer (Tally: admitted with its overlap warning; Sim: its immutability refusal).
 * - `unchecked`: admitted without the webhook (no configuration registered at that moment: clusterctl deletes the
 *   provider's objects, its webhook configuration among them, and creates the new ones).
 * - `failed`: the API server could not call the webhook (`failed calling webhook`: no endpoint, refused, timeout).
 * - `refused`: any other error, e.g. a webhook that denied the valid Tally request.
 */
export type Outcome = 'answered' | 'unchecked' | 'failed' | 'refused';

export interface ProbeCounts {
  readonly rounds: number;
  readonly tally: Readonly<Record<Outcome, number>>;
  readonly sim: Readonly<Record<Outcome, number>>;
  /** Each distinct message of an outcome other than `answered` (cut to 200 characters), with how often it came. */
  readonly messages: Readonly<Record<string, number>>;
  /** Milliseconds from the probe's start to the first and the last answer that was not `answered`. */
  readonly notAnsweredFromMs?: number;
  readonly notAnsweredUntilMs?: number;
  /** The outcome of each webhook in the round `stop()` began: what they answer once the caller is done waiting. */
  readonly last: Readonly<Record<'tally' | 'sim', Outcome | undefined>>;
}

export interface AdmissionProbe {
  /**
   * Stops the loop after the round under way, runs one round more and resolves with the counts. That round begins
   * after the call, so its outcomes (`last`) say what the webhooks answer once the caller's wait is over; the round
   * under way at the call may have begun before it (a request sent while the old Pods went).
   */
  stop(): Promise<ProbeCounts>;
}

const StatusMessage = z.looseObject({ message: z.string() });

function failureText(error: unknown): string {
  if (error instanceof ApiException) {
    const body = typeof error.body === 'string' ? error.body : JSON.stringify(error.body);
    try {
      const parsed = StatusMessage.safeParse(JSON.parse(body));
      return `HTTP ${error.code}: ${parsed.success ? parsed.data.message : body}`;
    } catch {
      return `HTTP ${error.code}: ${body}`;
    }
  }
  return error instanceof Error ? error.message : String(error);
}

function classifyFailure(text: string): Outcome {
  return text.includes('failed calling webhook') ? 'failed' : 'refused';
}

const zero = (): Record<Outcome, number> => ({ answered: 0, unchecked: 0, failed: 0, refused: 0 });

/** Creates the probe's namespace, pool and template (through the webhooks, which must answer now) and starts it. */
export async function startAdmissionProbe(kc: KubeConfig, intervalMs = 200): Promise<AdmissionProbe> {
  const api = kc.makeApiClient(CustomObjectsApi);
  await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: ADMISSION_PROBE_NAMESPACE } } });
  const namespace = ADMISSION_PROBE_NAMESPACE;
  await api.createNamespacedCustomObject({
    ...TALLY,
    namespace,
    body: {
      apiVersion: TALLY_V1ALPHA1_API_VERSION,
      kind: 'TallyIPPool',
      metadata: { name: 'probe' },
      spec: { addresses: [PROBE_RANGE], prefix: 24 },
    },
  });
  const templateSpec = (pool: string) => ({
    template: {
      spec: {
        network: {
          devices: [{ name: 'eth0', addressesFromPools: [{ apiGroup: IPAM_GROUP, kind: 'TallyIPPool', name: pool }] }],
        },
      },
    },
  });
  await api.createNamespacedCustomObject({
    ...SIM,
    namespace,
    body: {
      apiVersion: SIM_V1ALPHA1_API_VERSION,
      kind: 'SimMachineTemplate',
      metadata: { name: 'probe' },
      spec: templateSpec('a'),
    },
  });
  const overlap = 'overlaps TallyIPPool';
  const tallyProbe = async (): Promise<[Outcome, string]> => {
    try {
      const answer = await api.createNamespacedCustomObjectWithHttpInfo({
        ...TALLY,
        namespace,
        dryRun: 'All',
        body: {
          apiVersion: TALLY_V1ALPHA1_API_VERSION,
          kind: 'TallyIPPool',
          metadata: { name: 'probe-overlap' },
          spec: { addresses: [PROBE_RANGE], prefix: 24 },
        },
      });
      const warnings = warningTexts(answer.headers.warning);
      return warnings.some((text) => text.startsWith(`${overlap} ${namespace}/probe`))
        ? ['answered', '']
        : ['unchecked', `tally: admitted with warnings ${JSON.stringify(warnings)}`];
    } catch (error) {
      const text = failureText(error);
      return [classifyFailure(text), `tally: ${text}`];
    }
  };
  const simProbe = async (): Promise<[Outcome, string]> => {
    try {
      await api.patchNamespacedCustomObject(
        { ...SIM, namespace, name: 'probe', dryRun: 'All', body: { spec: templateSpec('b') } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      return ['unchecked', 'sim: the dry-run change of spec.template.spec was admitted'];
    } catch (error) {
      const text = failureText(error);
      if (text.includes('denied the request') && text.includes('immutable')) return ['answered', ''];
      return [classifyFailure(text), `sim: ${text}`];
    }
  };

  const started = performance.now();
  const counts = { tally: zero(), sim: zero() };
  const messages: Record<string, number> = {};
  const last: Record<'tally' | 'sim', Outcome | undefined> = { tally: undefined, sim: undefined };
  let rounds = 0;
  let from: number | undefined;
  let until: number | undefined;
  let stopping = false;
  const note = (which: 'tally' | 'sim', [outcome, message]: [Outcome, string]): void => {
    counts[which][outcome] += 1;
    last[which] = outcome;
    if (outcome === 'answered') return;
    const at = Math.round(performance.now() - started);
    from ??= at;
    until = at;
    const key = message.slice(0, 200);
    messages[key] = (messages[key] ?? 0) + 1;
  };
  const round = async (): Promise<void> => {
    const [tally, sim] = await Promise.all([tallyProbe(), simProbe()]);
    note('tally', tally);
    note('sim', sim);
    rounds += 1;
  };
  const loop = (async () => {
    while (!stopping) {
      await round();
      await delay(intervalMs);
    }
  })();
  return {
    stop: async () => {
      stopping = true;
      await loop;
      await round();
      return {
        rounds,
        tally: counts.tally,
        sim: counts.sim,
        messages,
        ...(from === undefined ? {} : { notAnsweredFromMs: from }),
        ...(until === undefined ? {} : { notAnsweredUntilMs: until }),
        last,
      };
    },
  };
}

/** Deletes the probe's namespace (its pool holds nothing, so the pool webhook lets it go). */
export async function removeAdmissionProbe(kc: KubeConfig): Promise<void> {
  await kc
    .makeApiClient(CoreV1Api)
    .deleteNamespace({ name: ADMISSION_PROBE_NAMESPACE })
    .catch((error: unknown) => {
      if (!(error instanceof ApiException && error.code === 404)) throw error;
    });
}
