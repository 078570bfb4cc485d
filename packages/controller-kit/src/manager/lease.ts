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
