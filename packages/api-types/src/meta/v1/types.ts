import * as z from 'zod';
import { CONDITION_REASON_PATTERN, CONDITION_TYPE_PATTERN, DNS1123_SUBDOMAIN_PATTERN } from './patterns.js';

/** RFC 3339 time as the API server writes it (`2026-01-02T03:04:05Z`). */
export const Time = z.iso.datetime({ offset: true });

/** metav1.OwnerReference. Loose: fields added by newer API servers survive a read-modify-write. */
export const OwnerReference = z.looseObject({
  apiVersion: z.string().min(1),
  kind: z.string().min(1),
  name: z.string().min(1),
  uid: z.string().min(1),
  controller: z.boolean().optional(),
  blockOwnerDeletion: z.boolean().optional(),
});
export type OwnerReference = z.infer<typeof OwnerReference>;

/** metav1.ObjectMeta, the fields controllers read; everything else (managedFields, …) is kept as is. */
export const ObjectMeta = z.looseObject({
  name: z.string().min(1).max(253).optional(),
  generateName: z.string().optional(),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
  generation: z.int().min(0).optional(),
  creationTimestamp: Time.optional(),
  deletionTimestamp: Time.optional(),
  deletionGracePeriodSeconds: z.int().optional(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
  ownerReferences: z.array(OwnerReference).optional(),
  finalizers: z.array(z.string()).optional(),
});
export type ObjectMeta = z.infer<typeof ObjectMeta>;

/** metav1.ListMeta. */
export const ListMeta = z.looseObject({
  resourceVersion: z.string().optional(),
  continue: z.string().optional(),
  remainingItemCount: z.int().optional(),
});
export type ListMeta = z.infer<typeof ListMeta>;

export const ConditionStatus = z.enum(['True', 'False', 'Unknown']);
export type ConditionStatus = z.infer<typeof ConditionStatus>;

/** metav1.Condition with the bounds and patterns its Go markers put into every CRD that embeds it. */
export const Condition = z.object({
  type: z.string().min(1).max(316).regex(new RegExp(CONDITION_TYPE_PATTERN)),
  status: ConditionStatus,
  observedGeneration: z.int().min(0).optional(),
  lastTransitionTime: Time,
  reason: z.string().min(1).max(1024).regex(new RegExp(CONDITION_REASON_PATTERN)),
  message: z.string().max(32768),
});
export type Condition = z.infer<typeof Condition>;

/** The `conditions` list of a status: a list-map keyed by `type`, at most 32 entries (CAPI's bound). */
export const Conditions = z
  .array(Condition)
  .max(32)
  .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] });

/** An object name: a DNS-1123 subdomain. */
export const ObjectName = z.string().min(1).max(253).regex(new RegExp(DNS1123_SUBDOMAIN_PATTERN));
