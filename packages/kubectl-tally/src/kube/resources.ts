import { pluralResourceName, StoredObjectMeta } from '@tally-ipam/api-types';
import { type TypedResourceKind, typedResource } from '@tally-ipam/controller-kit/client';
import * as z from 'zod';

/**
 * What the plugin reads beyond the descriptors the packages publish (pools from ipam-provider, ledgers from the
 * ledger package, Metal3 from metal3-ipam, IPAddresses and claims from api-types): Events and the owners of a claim,
 * of any kind. Schemas are loose where the plugin only shows fields: an object it cannot fully parse must still show.
 */

const Time = z.string().optional();

/** An events.k8s.io/v1 Event, the fields `why` shows. */
export const StoredEvent = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: StoredObjectMeta,
  eventTime: z.string().nullish(),
  series: z.looseObject({ count: z.number().optional(), lastObservedTime: Time }).nullish(),
  deprecatedLastTimestamp: z.string().nullish(),
  deprecatedFirstTimestamp: z.string().nullish(),
  deprecatedCount: z.number().nullish(),
  reportingController: z.string().optional(),
  type: z.string().optional(),
  reason: z.string().optional(),
  action: z.string().optional(),
  note: z.string().optional(),
  regarding: z
    .looseObject({ kind: z.string().optional(), name: z.string().optional(), uid: z.string().optional() })
    .optional(),
});
export type StoredEvent = z.infer<typeof StoredEvent>;

export const EVENT_RESOURCE: TypedResourceKind<StoredEvent> = typedResource(
  { apiVersion: 'events.k8s.io/v1', kind: 'Event', plural: 'events', namespaced: true },
  StoredEvent,
);

/** Any object: metadata (with owner references) is all an owner-chain walk reads. */
export const AnyObject = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: StoredObjectMeta,
});
export type AnyObject = z.infer<typeof AnyObject>;

/**
 * The resource of an owner named by apiVersion and kind. The plural is the CRD convention (lower-case kind,
 * pluralised), which every Cluster API kind follows; a kind served under another plural answers 404 and shows as
 * missing. Owners are namespaced: owner references never point across namespaces or at cluster-scoped objects from
 * a claim's chain.
 */
export function ownerResource(apiVersion: string, kind: string): TypedResourceKind<AnyObject> {
  return typedResource({ apiVersion, kind, plural: pluralResourceName(kind), namespaced: true }, AnyObject);
}
