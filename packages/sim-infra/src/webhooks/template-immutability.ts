import type { V1LabelSelector } from '@kubernetes/client-node';
import { clipText, ObjectMeta, parseObject } from '@tally-ipam/api-types';
import {
  type AdmissionDecision,
  type AdmissionHandler,
  type AdmissionRequest,
  allowed,
  denied,
  type ValidatingWebhookSpec,
  type WebhookServer,
} from '@tally-ipam/controller-kit/webhook';
import * as z from 'zod';
import {
  SIM_CLUSTER_TEMPLATE_KIND,
  SIM_GROUP,
  SIM_MACHINE_POOL_TEMPLATE_KIND,
  SIM_MACHINE_TEMPLATE_KIND,
  SIM_V1ALPHA1_VERSION,
  TOPOLOGY_DRY_RUN_ANNOTATION,
} from '../api/v1alpha1/constants.js';
import { statusUnchanged } from '../util/status.js';

/** A template as the webhook reads it: only what the rule compares, everything else passes through. */
const TemplateObject = z.looseObject({
  metadata: ObjectMeta,
  spec: z.looseObject({ template: z.looseObject({ spec: z.unknown().optional() }) }),
});
type TemplateObject = z.infer<typeof TemplateObject>;

/** One template kind the webhook guards. */
export interface TemplateWebhook {
  readonly kind: string;
  readonly plural: string;
  /** controller-runtime's path convention: `/validate-<group with dashes>-<version>-<lower-case kind>`. */
  readonly path: string;
}

function templateWebhook(kind: string, plural: string): TemplateWebhook {
  return {
    kind,
    plural,
    path: `/validate-${SIM_GROUP.replaceAll('.', '-')}-${SIM_V1ALPHA1_VERSION}-${kind.toLowerCase()}`,
  };
}

export const SIM_TEMPLATE_WEBHOOKS: readonly TemplateWebhook[] = [
  templateWebhook(SIM_CLUSTER_TEMPLATE_KIND, 'simclustertemplates'),
  templateWebhook(SIM_MACHINE_TEMPLATE_KIND, 'simmachinetemplates'),
  templateWebhook(SIM_MACHINE_POOL_TEMPLATE_KIND, 'simmachinepooltemplates'),
];

/**
 * CAPI's `topology.IsDryRunRequest`: the topology controller computes its diffs with server-side-apply dry runs that
 * carry the `topology.cluster.x-k8s.io/dry-run` annotation; those must pass immutability checks (capi-contracts §5.1).
 * A plain `kubectl --dry-run=server` has no annotation and is checked like a real write.
 */
export function isTopologyDryRun(request: Pick<AdmissionRequest, 'dryRun'>, object: TemplateObject): boolean {
  return (
    request.dryRun === true &&
    object.metadata.annotations !== undefined &&
    Object.hasOwn(object.metadata.annotations, TOPOLOGY_DRY_RUN_ANNOTATION)
  );
}

/** True when both specs are the same; false when one cannot even be compared (nested past the stack's depth). */
function specUnchanged(before: unknown, after: unknown): boolean {
  try {
    return statusUnchanged(before ?? {}, after ?? {});
  } catch {
    return false;
  }
}

/**
 * The SSA dry-run rule for a template kind: `spec.template.spec` is immutable (machines and clusters already cloned
 * from it would silently differ from it; a change means a new template and a rollout), except in a topology dry run.
 * `spec.template.metadata` may change. CEL cannot express this rule because it cannot see whether a request is a dry
 * run, which is why it is a webhook.
 */
export function templateImmutabilityHandler(kind: string): AdmissionHandler {
  const invalid = (request: AdmissionRequest, which: string, message: string): AdmissionDecision =>
    denied(`${kind}.${SIM_GROUP} "${clipText(request.name ?? '', 253)}" is invalid: ${which}${message}`, {
      code: 422,
      reason: 'Invalid',
    });
  // api-types' parser rather than a plain zod parse: it counts the values first and describes them without
  // recursion, so a review nested a hundred thousand levels deep or holding a huge list is answered, not thrown.
  return async (request): Promise<AdmissionDecision> => {
    if (request.operation !== 'UPDATE') return allowed();
    const object = parseObject(TemplateObject, kind, request.object);
    if (!object.success) return invalid(request, '', object.error.message);
    const oldObject = parseObject(TemplateObject, kind, request.oldObject);
    if (!oldObject.success) return invalid(request, 'the existing object no longer parses: ', oldObject.error.message);
    if (specUnchanged(oldObject.data.spec.template.spec, object.data.spec.template.spec)) return allowed();
    if (isTopologyDryRun(request, object.data)) return allowed();
    return invalid(
      request,
      '',
      `spec.template.spec: Forbidden: ${kind} spec.template.spec is immutable; create a new ${kind} and point its users at it`,
    );
  };
}

/** Registers the template webhooks on a webhook server (the paths of `SIM_TEMPLATE_WEBHOOKS`). */
export function registerSimWebhooks(server: WebhookServer): void {
  for (const webhook of SIM_TEMPLATE_WEBHOOKS) server.register(webhook.path, templateImmutabilityHandler(webhook.kind));
}

/** The webhook entries for a ValidatingWebhookConfiguration (UPDATE of each template kind). */
export function simValidatingWebhookSpecs(
  options: { namespaceSelector?: V1LabelSelector } = {},
): ValidatingWebhookSpec[] {
  return SIM_TEMPLATE_WEBHOOKS.map((webhook) => ({
    name: `validation.${webhook.kind.toLowerCase()}.${SIM_GROUP}`,
    path: webhook.path,
    rules: [
      {
        apiGroups: [SIM_GROUP],
        apiVersions: [SIM_V1ALPHA1_VERSION],
        resources: [webhook.plural],
        operations: ['UPDATE'],
      },
    ],
    ...(options.namespaceSelector ? { namespaceSelector: options.namespaceSelector } : {}),
  }));
}
