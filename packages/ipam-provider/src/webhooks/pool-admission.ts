import {
  clipText,
  DELETE_FOR_MOVE_ANNOTATION,
  ObjectMeta,
  parseObject,
  TALLY_V1ALPHA1_API_VERSION,
} from '@tally-ipam/api-types';
import {
  type AdmissionDecision,
  type AdmissionHandler,
  type AdmissionRequest,
  allowed,
  denied,
  type EventRecorder,
  specUnchanged,
} from '@tally-ipam/controller-kit';
import type { PoolAllocationsView, PoolIdentity } from './pool-allocations-view.js';
import type { PoolKindInfo, TallyPool } from './pool-kinds.js';
import { validatePoolCreate, validatePoolDelete, validatePoolUpdate } from './pool-rules.js';

/**
 * The longest denial message a pool webhook returns. The API server passes it to the client prefixed with the
 * webhook's name; a bound keeps every answer small whatever the request held.
 */
export const MAX_ADMISSION_MESSAGE_LENGTH = 4_096;
/** The longest single warning, and how many a review carries at most. */
export const MAX_ADMISSION_WARNING_LENGTH = 512;
export const MAX_ADMISSION_WARNINGS = 10;

function bounded(decision: AdmissionDecision): AdmissionDecision {
  const warnings = decision.warnings
    ?.slice(0, MAX_ADMISSION_WARNINGS)
    .map((warning) => clipText(warning, MAX_ADMISSION_WARNING_LENGTH));
  const status = decision.status
    ? { ...decision.status, message: clipText(decision.status.message, MAX_ADMISSION_MESSAGE_LENGTH) }
    : undefined;
  return {
    allowed: decision.allowed,
    ...(status ? { status } : {}),
    ...(warnings && warnings.length > 0 ? { warnings } : {}),
  };
}

/** The pool an admission request is about, from the request itself: usable even when the object does not parse. */
function requestedPool(kind: PoolKindInfo, request: AdmissionRequest): PoolIdentity {
  return { kind: kind.kind, name: request.name ?? '', namespace: kind.namespaced ? request.namespace : undefined };
}

function invalidObject(kind: PoolKindInfo, request: AdmissionRequest, object: unknown): AdmissionDecision | TallyPool {
  const parsed = parseObject(kind.schema, kind.kind, object);
  if (parsed.success) return parsed.data;
  const name = request.name ? ` "${clipText(request.name, 253)}"` : '';
  return denied(`${kind.kind}.ipam.cluster.x-k8s.io${name} is invalid: ${parsed.error.message}`, {
    code: 422,
    reason: 'Invalid',
  });
}

function isDecision(value: AdmissionDecision | TallyPool): value is AdmissionDecision {
  return 'allowed' in value;
}

/**
 * The admission handler of one pool kind. Unlike a plain typed handler it never requires the stored object to parse:
 * a pool whose stored spec no longer parses (a schema that changed under it) must still be fixable and deletable.
 * - UPDATE with an unchanged spec (labels, annotations, the controller's finalizer writes) is always allowed;
 * - UPDATE checks the new spec, and refuses only for allocated addresses the old spec held and the new one drops;
 * - DELETE is decided on the request's identity and the old object's annotations.
 * Every answer is bounded in size (`MAX_ADMISSION_MESSAGE_LENGTH`, `MAX_ADMISSION_WARNINGS`).
 */
export function poolAdmissionHandler(
  kind: PoolKindInfo,
  view: PoolAllocationsView,
  options: PoolAdmissionOptions = {},
): AdmissionHandler {
  return async (request) => bounded(await decide(kind, view, request, options));
}

export interface PoolAdmissionOptions {
  /**
   * Where a pool that `clusterctl move` deletes from this cluster while it still holds addresses here is reported
   * (an Event on the pool). Not called for dry-run requests, which is why the webhooks declare
   * `sideEffects: NoneOnDryRun`.
   */
  readonly events?: EventRecorder | undefined;
}

/** The Event's reason when `clusterctl move` deletes a pool whose addresses some claims here still hold. */
export const POOL_MOVED_AWAY_REASON = 'DeletedForMove';

async function decide(
  kind: PoolKindInfo,
  view: PoolAllocationsView,
  request: AdmissionRequest,
  options: PoolAdmissionOptions,
): Promise<AdmissionDecision> {
  switch (request.operation) {
    case 'CREATE': {
      const pool = invalidObject(kind, request, request.object);
      return isDecision(pool) ? pool : validatePoolCreate(pool, view);
    }
    case 'UPDATE': {
      if (specUnchanged(request)) return allowed();
      const pool = invalidObject(kind, request, request.object);
      if (isDecision(pool)) return pool;
      const old = parseObject(kind.schema, kind.kind, request.oldObject);
      return validatePoolUpdate(pool, old.success ? old.data : undefined, requestedPool(kind, request), view);
    }
    case 'DELETE': {
      const metadata = parseObject(
        ObjectMeta,
        'ObjectMeta',
        typeof request.oldObject === 'object' && request.oldObject !== null
          ? (request.oldObject as { metadata?: unknown }).metadata
          : undefined,
      );
      const annotations = metadata.success ? (metadata.data.annotations ?? {}) : {};
      const decision = await validatePoolDelete(requestedPool(kind, request), annotations, view);
      const warning = decision.warnings?.[0];
      if (metadata.success && warning && annotations[DELETE_FOR_MOVE_ANNOTATION] !== undefined && !request.dryRun) {
        // Awaited: the recorder never throws, and the Event should exist once clusterctl's delete returns.
        const { uid, namespace } = metadata.data;
        await options.events?.warning(
          {
            apiVersion: TALLY_V1ALPHA1_API_VERSION,
            kind: kind.kind,
            metadata: { name: request.name ?? '', namespace: kind.namespaced ? namespace : undefined, uid },
          },
          POOL_MOVED_AWAY_REASON,
          'Delete',
          warning,
        );
      }
      return decision;
    }
    case 'CONNECT':
      return allowed();
  }
}
