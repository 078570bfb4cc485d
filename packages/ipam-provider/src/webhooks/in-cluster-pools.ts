/**
 * The validating webhook of the in-cluster provider's IP pool kinds (`InClusterIPPool`, `GlobalInClusterIPPool`),
 * served when Tally serves those kinds (`--enable-in-cluster-ipam`): the reference's rules as api-types' pure
 * functions, on the reference's paths and names, with the reference's HTTP statuses — 422 (`Invalid`) for the spec
 * rules, 400 (`BadRequest`) for the update rule (allocated addresses must stay in the pool) and the delete rule (no
 * IPAddresses left), since clients may branch on them (row 11 of docs/design/in-cluster-drop-in.md).
 */
import {
  clipText,
  formatInClusterPoolIssues,
  GLOBAL_IN_CLUSTER_IP_POOL_KIND,
  GlobalInClusterIPPool,
  IN_CLUSTER_IP_POOL_KIND,
  IN_CLUSTER_IPAM_GROUP,
  IN_CLUSTER_V1ALPHA2_VERSION,
  InClusterIPPool,
  type InClusterIPPoolKind,
  type InClusterPoolIssue,
  validateInClusterIPPoolCreate,
  validateInClusterIPPoolUpdate,
  validateInClusterPoolDelete,
} from '@tally-ipam/api-types';
import {
  type AdmissionDecision,
  type AdmissionHandler,
  type AdmissionRequest,
  allowed,
  denied,
  type ServiceClientMode,
  type UrlClientMode,
  type ValidatingWebhookSpec,
  validatingWebhookConfiguration,
  type WebhookServer,
} from '@tally-ipam/controller-kit';
import type * as z from 'zod';
import type { PoolRef } from '../pool-ref.js';
import type { ProviderCacheView } from '../view.js';

type ValidatingWebhookConfiguration = ReturnType<typeof validatingWebhookConfiguration>;
type ValidatingWebhook = NonNullable<ValidatingWebhookConfiguration['webhooks']>[number];
type LabelSelector = NonNullable<ValidatingWebhookSpec['namespaceSelector']>;

/** One in-cluster IP pool kind as its webhook sees it. */
interface InClusterPoolKindInfo {
  readonly kind: InClusterIPPoolKind;
  readonly plural: string;
  readonly namespaced: boolean;
  readonly schema: z.ZodType<InClusterIPPool | GlobalInClusterIPPool>;
}

const KINDS: readonly InClusterPoolKindInfo[] = [
  { kind: IN_CLUSTER_IP_POOL_KIND, plural: 'inclusterippools', namespaced: true, schema: InClusterIPPool },
  {
    kind: GLOBAL_IN_CLUSTER_IP_POOL_KIND,
    plural: 'globalinclusterippools',
    namespaced: false,
    schema: GlobalInClusterIPPool,
  },
];

/** `/validate-ipam-cluster-x-k8s-io-v1alpha2-inclusterippool`: the reference's path (controller-runtime's scheme). */
export function inClusterPoolWebhookPath(kind: InClusterIPPoolKind): string {
  return `/validate-${IN_CLUSTER_IPAM_GROUP.replaceAll('.', '-')}-${IN_CLUSTER_V1ALPHA2_VERSION}-${kind.toLowerCase()}`;
}

/** `validation.inclusterippool.ipam.cluster.x-k8s.io`: the reference's webhook name. */
export function inClusterPoolWebhookName(kind: InClusterIPPoolKind): string {
  return `validation.${kind.toLowerCase()}.${IN_CLUSTER_IPAM_GROUP}`;
}

/** What the rules read: the addresses of the IPAddresses naming a pool (the reference lists them for each review). */
export interface InClusterAddressesView {
  addressesOf(ref: PoolRef): Promise<readonly string[]>;
}

/** How long a review waits for caches that have not listed yet before it fails (the API server retries). */
const SYNC_WAIT_MS = 10_000;

/** The view over the provider's IPAddress cache (indexed by pool for every kind it can serve, the flag aside). */
export function providerInClusterAddressesView(provider: ProviderCacheView): InClusterAddressesView {
  return {
    async addressesOf(ref) {
      if (!provider.hasSynced() && !(await provider.waitForSync(AbortSignal.timeout(SYNC_WAIT_MS)))) {
        throw new Error(`the IPAddress and pool caches have not synced after ${SYNC_WAIT_MS / 1000} s; try again`);
      }
      return provider.allocatedAddresses(ref).map((address) => address.address);
    },
  };
}

/** Longest denial message (the API server stores it in the client's error). */
export const MAX_IN_CLUSTER_ADMISSION_MESSAGE_LENGTH = 4_096;

/** The rules whose refusal the reference returns as `BadRequest` (400) rather than `Invalid` (422). */
const BAD_REQUEST_RULES: ReadonlySet<InClusterPoolIssue['rule']> = new Set([
  'allocated-addresses-kept',
  'no-addresses-on-delete',
]);

function refusal(
  info: InClusterPoolKindInfo,
  request: AdmissionRequest,
  issues: InClusterPoolIssue[],
): AdmissionDecision {
  const badRequest = issues.some((entry) => BAD_REQUEST_RULES.has(entry.rule));
  const name = request.name ? ` "${clipText(request.name, 253)}"` : '';
  const message = clipText(
    `${info.kind}.${IN_CLUSTER_IPAM_GROUP}${name} is invalid: ${formatInClusterPoolIssues(issues)}`,
    MAX_IN_CLUSTER_ADMISSION_MESSAGE_LENGTH,
  );
  return badRequest
    ? denied(message, { code: 400, reason: 'BadRequest' })
    : denied(message, { code: 422, reason: 'Invalid' });
}

function refOf(info: InClusterPoolKindInfo, pool: InClusterIPPool | GlobalInClusterIPPool): PoolRef {
  const name = pool.metadata.name ?? '';
  return info.namespaced ? { kind: info.kind, name, namespace: pool.metadata.namespace } : { kind: info.kind, name };
}

/** The admission handler of one in-cluster IP pool kind: CREATE, UPDATE and DELETE, as the reference checks them. */
export function inClusterPoolAdmissionHandler(
  kind: InClusterIPPoolKind,
  view: InClusterAddressesView,
): AdmissionHandler {
  const info = KINDS.find((candidate) => candidate.kind === kind);
  if (!info) throw new Error(`no in-cluster IP pool kind ${kind}`);
  return async (request) => {
    const subject = request.operation === 'DELETE' ? request.oldObject : request.object;
    const parsed = info.schema.safeParse(subject);
    if (!parsed.success) {
      // The CRD's schema admitted it, so this is an object of another shape than the kind's: the reference's decoder
      // refuses it as a bad request too.
      const detail = parsed.error.issues
        .slice(0, 5)
        .map((issue) => `${issue.path.map(String).join('.') || 'object'}: ${issue.message}`)
        .join('; ');
      return denied(clipText(`expected a ${info.kind}: ${detail}`, MAX_IN_CLUSTER_ADMISSION_MESSAGE_LENGTH), {
        code: 400,
        reason: 'BadRequest',
      });
    }
    const pool = parsed.data;
    switch (request.operation) {
      case 'CREATE': {
        const issues = validateInClusterIPPoolCreate(pool.spec);
        return issues.length === 0 ? allowed() : refusal(info, request, issues);
      }
      case 'UPDATE': {
        // The reference lists the old object's addresses (kind, name and namespace of the old pool; the same here).
        const old = info.schema.safeParse(request.oldObject);
        const inUse = await view.addressesOf(refOf(info, old.success ? old.data : pool));
        const issues = validateInClusterIPPoolUpdate(pool.spec, inUse);
        return issues.length === 0 ? allowed() : refusal(info, request, issues);
      }
      case 'DELETE': {
        const inUse = await view.addressesOf(refOf(info, pool));
        const issues = validateInClusterPoolDelete(pool.metadata.annotations, inUse.length);
        return issues.length === 0 ? allowed() : refusal(info, request, issues);
      }
      default:
        return allowed();
    }
  };
}

/** Serves the two in-cluster IP pool kinds' rules on `server`, reading IPAddresses through `view`. */
export function registerInClusterPoolWebhooks(server: WebhookServer, view: InClusterAddressesView): void {
  for (const info of KINDS)
    server.register(inClusterPoolWebhookPath(info.kind), inClusterPoolAdmissionHandler(info.kind, view));
}

/** The match condition's name in the shipped configuration. */
export const IN_CLUSTER_ENABLED_MATCH_CONDITION = 'in-cluster-ipam-enabled';

export interface InClusterPoolWebhookOptions {
  readonly client: ServiceClientMode | UrlClientMode;
  /**
   * A CEL expression deciding whether the API server calls the webhooks at all. The shipped components put the
   * clusterctl variable in it (`'${TALLY_IPAM_ENABLE_IN_CLUSTER:=false}' == 'true'`): off, the reference provider's
   * own webhook may be serving these kinds and Tally answers nothing. Absent: always called.
   */
  readonly enabledExpression?: string;
  /** Limits the namespaced kind (e.g. to one test namespace); the global kind ignores it. */
  readonly namespaceSelector?: LabelSelector;
  readonly objectSelector?: LabelSelector;
}

/** The ValidatingWebhook entries of the two kinds (CREATE, UPDATE, DELETE), as the reference's manifests route them. */
export function inClusterPoolWebhooks(options: InClusterPoolWebhookOptions): ValidatingWebhook[] {
  return inClusterPoolWebhookConfiguration({ ...options, name: 'in-cluster-ipam-webhook' }).webhooks ?? [];
}

/** A ValidatingWebhookConfiguration with only the two in-cluster IP pool webhooks (tests, out-of-cluster runs). */
export function inClusterPoolWebhookConfiguration(
  options: InClusterPoolWebhookOptions & { readonly name: string; readonly labels?: Readonly<Record<string, string>> },
): ValidatingWebhookConfiguration {
  return validatingWebhookConfiguration({
    name: options.name,
    ...(options.labels ? { labels: options.labels } : {}),
    client: options.client,
    webhooks: KINDS.map((info) => ({
      name: inClusterPoolWebhookName(info.kind),
      path: inClusterPoolWebhookPath(info.kind),
      rules: [
        {
          apiGroups: [IN_CLUSTER_IPAM_GROUP],
          apiVersions: [IN_CLUSTER_V1ALPHA2_VERSION],
          resources: [info.plural],
          operations: ['CREATE', 'UPDATE', 'DELETE'],
          scope: info.namespaced ? 'Namespaced' : 'Cluster',
        },
      ],
      ...(options.enabledExpression
        ? { matchConditions: [{ name: IN_CLUSTER_ENABLED_MATCH_CONDITION, expression: options.enabledExpression }] }
        : {}),
      ...(options.namespaceSelector && info.namespaced ? { namespaceSelector: options.namespaceSelector } : {}),
      ...(options.objectSelector ? { objectSelector: options.objectSelector } : {}),
    })),
  });
}

/** `configuration` with the two in-cluster IP pool webhooks appended (how the IPAM controller's components ship them). */
export function withInClusterPoolWebhooks(
  configuration: ValidatingWebhookConfiguration,
  options: InClusterPoolWebhookOptions,
): ValidatingWebhookConfiguration {
  return { ...configuration, webhooks: [...(configuration.webhooks ?? []), ...inClusterPoolWebhooks(options)] };
}
