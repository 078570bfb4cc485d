import { z } from 'zod';
import type { KubeObject } from '../cache/object.js';
import { microTime } from '../client/events.js';
import { typedResource } from '../client/object-schema.js';

const leaseSpecSchema = z.looseObject({
  holderIdentity: z.string().nullish(),
  leaseDurationSeconds: z.number().int().nullish(),
  acquireTime: z.string().nullish(),
  renewTime: z.string().nullish(),
  leaseTransitions: z.number().int().nullish(),
});

export type LeaseSpec = z.infer<typeof leaseSpecSchema>;

export interface Lease extends KubeObject {
  readonly spec?: LeaseSpec | undefined;
}

const leaseSchema: z.ZodType<Lease> = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: z.looseObject({
    name: z.string(),
    namespace: z.string().optional(),
    uid: z.string().optional(),
    resourceVersion: z.string().optional(),
  }),
  spec: leaseSpecSchema.optional(),
});

/** `coordination.k8s.io/v1` Leases, parsed. */
export const LEASE_RESOURCE = typedResource(
  { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', plural: 'leases', namespaced: true },
  leaseSchema,
);

/** The leader-election record the elector writes into a Lease spec (client-go's `LeaderElectionRecord`). */
export interface LeaderElectionRecord {
  readonly holderIdentity: string;
  readonly leaseDurationSeconds: number;
  readonly acquireTime: Date;
  readonly renewTime: Date;
  readonly leaseTransitions: number;
}

/** Lease spec fields are MicroTime: exactly six fractional digits, or the API server rejects them. */
export function leaseSpecOf(record: LeaderElectionRecord): Record<string, unknown> {
  return {
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    acquireTime: microTime(record.acquireTime),
    renewTime: microTime(record.renewTime),
    leaseTransitions: record.leaseTransitions,
  };
}

/** Everything that identifies one observed state of the record; a change means the holder is alive. */
export function recordFingerprint(spec: LeaseSpec | undefined): string {
  return JSON.stringify([
    spec?.holderIdentity ?? '',
    spec?.renewTime ?? '',
    spec?.acquireTime ?? '',
    spec?.leaseTransitions ?? 0,
    spec?.leaseDurationSeconds ?? 0,
  ]);
}

/** What a candidate does with the Lease it just read. */
export type LeaseDecision =
  | { readonly kind: 'wait'; readonly holder: string }
  | { readonly kind: 'write'; readonly record: LeaderElectionRecord };

export interface LeaseCandidate {
  readonly identity: string;
  readonly now: Date;
  readonly leaseDurationSeconds: number;
  /** Whether the record has been unchanged for its lease duration, by this candidate's own observation. */
  readonly observedExpired: boolean;
}

/**
 * client-go's decision in `tryAcquireOrRenew`: another live holder means wait; otherwise write a record naming this
 * candidate. Renewing keeps `acquireTime` and `leaseTransitions`; taking over (from an expired holder or a released,
 * empty one) starts a new term and counts a transition.
 */
export function decideLease(spec: LeaseSpec | undefined, candidate: LeaseCandidate): LeaseDecision {
  const holder = spec?.holderIdentity ?? '';
  if (holder !== '' && holder !== candidate.identity && !candidate.observedExpired) return { kind: 'wait', holder };
  const renewing = holder === candidate.identity;
  const previousAcquire = spec?.acquireTime ? new Date(spec.acquireTime) : undefined;
  const keepAcquire = renewing && previousAcquire !== undefined && !Number.isNaN(previousAcquire.getTime());
  return {
    kind: 'write',
    record: {
      holderIdentity: candidate.identity,
      leaseDurationSeconds: candidate.leaseDurationSeconds,
      acquireTime: keepAcquire ? previousAcquire : candidate.now,
      renewTime: candidate.now,
      leaseTransitions: (spec?.leaseTransitions ?? 0) + (renewing ? 0 : 1),
    },
  };
}
