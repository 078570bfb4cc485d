/**
 * The validating webhooks of the in-cluster provider's pool kinds, served when Tally serves those kinds
 * (`--enable-in-cluster-ipam`): here the IP pool kinds' handler (`InClusterIPPool`, `GlobalInClusterIPPool`), the
 * reference's rules as api-types' pure functions, and the registration and configuration of all four kinds (the
 * prefix pool kinds' handler is in-cluster-prefix-pools.ts), on the reference's paths and names, with the reference's
 * HTTP statuses (in-cluster-admission.ts).
 */
import {
  GLOBAL_IN_CLUSTER_IP_POOL_KIND,
  GlobalInClusterIPPool,
  IN_CLUSTER_IP_POOL_KIND,
  IN_CLUSTER_IPAM_GROUP,
  IN_CLUSTER_V1ALPHA2_VERSION,
  InClusterIPPool,
  type InClusterIPPoolKind,
  validateInClusterIPPoolCreate,
  validateInClusterIPPoolUpdate,
  validateInClusterPoolDelete,
} from '@tally-ipam/api-types';
import {
  type AdmissionHandler,
  allowed,
  type ServiceClientMode,
  type UrlClientMode,
  type ValidatingWebhookSpec,
  validatingWebhookConfiguration,
  type WebhookServer,
} from '@tally-ipam/controller-kit';
import type * as z from 'zod';
import type { InClusterPoolKind } from '../pool-kinds.js';
import {
  type InClusterAddressesView,
  inClusterPoolWebhookName,
  inClusterPoolWebhookPath,
  inClusterRefOf,
  inClusterRefusal,
  parseReviewed,
} from './in-cluster-admission.js';
import {
  IN_CLUSTER_PREFIX_POOL_WEBHOOK_KINDS,
  inClusterPrefixPoolAdmissionHandler,
} from './in-cluster-prefix-pools.js';

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

/** Every in-cluster kind with a webhook, in the order the shipped configuration lists them: IP pools, prefix pools. */
const WEBHOOK_KINDS: readonly {
  readonly kind: InClusterPoolKind;
  readonly plural: string;
  readonly namespaced: boolean;
}[] = [...KINDS, ...IN_CLUSTER_PREFIX_POOL_WEBHOOK_KINDS];

/** The admission handler of one in-cluster IP pool kind: CREATE, UPDATE and DELETE, as the reference checks them. */
export function inClusterPoolAdmissionHandler(
  kind: InClusterIPPoolKind,
  view: InClusterAddressesView,
): AdmissionHandler {
  const info = KINDS.find((candidate) => candidate.kind === kind);
  if (!info) throw new Error(`no in-cluster IP pool kind ${kind}`);
  return async (request) => {
    const subject = request.operation === 'DELETE' ? request.oldObject : request.object;
    const reviewed = parseReviewed(info.kind, info.schema, subject);
    if (!reviewed.ok) return reviewed.decision;
    const pool = reviewed.value;
    switch (request.operation) {
      case 'CREATE': {
        const issues = validateInClusterIPPoolCreate(pool.spec);
        return issues.length === 0 ? allowed() : inClusterRefusal(info.kind, request, issues);
      }
      case 'UPDATE': {
        // The reference lists the old object's addresses (kind, name and namespace of the old pool; the same here).
        const old = info.schema.safeParse(request.oldObject);
        const inUse = await view.addressesOf(inClusterRefOf(info.kind, info.namespaced, old.success ? old.data : pool));
        const issues = validateInClusterIPPoolUpdate(pool.spec, inUse);
        return issues.length === 0 ? allowed() : inClusterRefusal(info.kind, request, issues);
      }
      case 'DELETE': {
        const inUse = await view.addressesOf(inClusterRefOf(info.kind, info.namespaced, pool));
        const issues = validateInClusterPoolDelete(pool.metadata.annotations, inUse.length);
        return issues.length === 0 ? allowed() : inClusterRefusal(info.kind, request, issues);
      }
      default:
        return allowed();
    }
  };
}

/** Serves the four in-cluster pool kinds' rules on `server`, reading IPAddresses through `view`. */
export function registerInClusterPoolWebhooks(server: WebhookServer, view: InClusterAddressesView): void {
  for (const info of KINDS)
    server.register(inClusterPoolWebhookPath(info.kind), inClusterPoolAdmissionHandler(info.kind, view));
  for (const info of IN_CLUSTER_PREFIX_POOL_WEBHOOK_KINDS)
    server.register(inClusterPoolWebhookPath(info.kind), inClusterPrefixPoolAdmissionHandler(info.kind, view));
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

/** The ValidatingWebhook entries of the four kinds (CREATE, UPDATE, DELETE), as the reference's manifests route them. */
export function inClusterPoolWebhooks(options: InClusterPoolWebhookOptions): ValidatingWebhook[] {
  return inClusterPoolWebhookConfiguration({ ...options, name: 'in-cluster-ipam-webhook' }).webhooks ?? [];
}

/** A ValidatingWebhookConfiguration with only the four in-cluster pool webhooks (tests, out-of-cluster runs). */
export function inClusterPoolWebhookConfiguration(
  options: InClusterPoolWebhookOptions & { readonly name: string; readonly labels?: Readonly<Record<string, string>> },
): ValidatingWebhookConfiguration {
  return validatingWebhookConfiguration({
    name: options.name,
    ...(options.labels ? { labels: options.labels } : {}),
    client: options.client,
    webhooks: WEBHOOK_KINDS.map((info) => ({
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

/** `configuration` with the four in-cluster pool webhooks appended (how the IPAM controller's components ship them). */
export function withInClusterPoolWebhooks(
  configuration: ValidatingWebhookConfiguration,
  options: InClusterPoolWebhookOptions,
): ValidatingWebhookConfiguration {
  return { ...configuration, webhooks: [...(configuration.webhooks ?? []), ...inClusterPoolWebhooks(options)] };
}
