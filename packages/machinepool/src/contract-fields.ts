import { Conditions, MachineAddress, ObjectMeta } from '@tally-ipam/api-types';
import * as z from 'zod';
import { MAX_PROVIDER_ID_LENGTH, MAX_PROVIDER_IDS } from './constants.js';

/**
 * The InfraMachinePool contract's fields as zod schemas, to spread into a provider's own spec and status schemas
 * (`z.object({ ...infraMachinePoolSpecFields, template: … })`) so the CRD built from them by api-types' generator has
 * every field CAPI reads — a field missing from the CRD schema is pruned by the API server and never reaches CAPI.
 */

const INT32_MAX = 2_147_483_647;
const MAX_INSTANCE_ADDRESSES = 32;
const MAX_NAME_LENGTH = 253;
const MAX_KIND_LENGTH = 63;

/** One provider ID: 1–512 characters (`+kubebuilder:validation:items:MinLength=1`, `MaxLength=512`). */
export const ProviderID = z.string().min(1).max(MAX_PROVIDER_ID_LENGTH);

/** `spec.providerIDList`: atomic list of at most 10 000 provider IDs. */
export const ProviderIDList = z
  .array(ProviderID)
  .max(MAX_PROVIDER_IDS)
  .meta({ 'x-kubernetes-list-type': 'atomic' })
  .describe('Provider IDs of the instances of this pool; CAPI deletes the Node of an ID that leaves the list.');

/** `status.instances[]`: informational, not read by CAPI (contract "InfraMachinePool: instances"). */
export const InfraMachinePoolInstanceStatus = z.object({
  instanceName: z.string().min(1).max(MAX_NAME_LENGTH),
  providerID: ProviderID.optional(),
  addresses: z.array(MachineAddress).max(MAX_INSTANCE_ADDRESSES).optional(),
  version: z.string().min(1).max(MAX_NAME_LENGTH).optional(),
  ready: z.boolean(),
});
export type InfraMachinePoolInstanceStatus = z.infer<typeof InfraMachinePoolInstanceStatus>;

/** `status.initialization` (v1beta2): `provisioned` is what the contract doc names; CAPI v1.12 reads `status.ready`. */
export const InfraMachinePoolInitialization = z.object({ provisioned: z.boolean().optional() });

/** Contract fields of an InfraMachinePool's `spec`. */
export const infraMachinePoolSpecFields = {
  providerID: ProviderID.optional(),
  providerIDList: ProviderIDList.optional(),
};

/**
 * Contract fields of an InfraMachinePool's `status`. Deliberately without `failureReason`/`failureMessage`: CAPI
 * v1.12's MachinePool controller dereferences a nil pointer when it finds either (see the README), so terminal
 * failures are reported through conditions.
 */
export const infraMachinePoolStatusFields = {
  ready: z.boolean().optional(),
  initialization: InfraMachinePoolInitialization.optional(),
  replicas: z.int().min(0).max(INT32_MAX).meta({ format: 'int32' }).optional(),
  infrastructureMachineKind: z.string().min(1).max(MAX_KIND_LENGTH).optional(),
  instances: z.array(InfraMachinePoolInstanceStatus).max(MAX_PROVIDER_IDS).optional(),
  conditions: Conditions.optional(),
  observedGeneration: z.int().min(0).optional(),
};

/** Contract fields of an InfraMachine created per replica (MachinePool Machines). */
export const infraMachineSpecFields = {
  providerID: ProviderID.optional(),
};
export const infraMachineStatusFields = {
  initialization: z.object({ provisioned: z.boolean().optional() }).optional(),
  addresses: z.array(MachineAddress).max(MAX_INSTANCE_ADDRESSES).optional(),
  conditions: Conditions.optional(),
  observedGeneration: z.int().min(0).optional(),
};

const StoredMeta = ObjectMeta.extend({ name: z.string().min(1) });

/**
 * Any InfraMachinePool as the helpers read it: the contract fields checked, everything else kept (loose objects), so
 * a provider's own object parses and round-trips.
 */
export const InfraMachinePoolObject = z.looseObject({
  apiVersion: z.string().min(1),
  kind: z.string().min(1),
  metadata: StoredMeta,
  spec: z.looseObject(infraMachinePoolSpecFields).optional(),
  status: z.looseObject(infraMachinePoolStatusFields).optional(),
});
export type InfraMachinePoolObject = z.infer<typeof InfraMachinePoolObject>;

/** Any per-replica InfraMachine as the helpers read it. */
export const InfraMachineObject = z.looseObject({
  apiVersion: z.string().min(1),
  kind: z.string().min(1),
  metadata: StoredMeta,
  spec: z.looseObject(infraMachineSpecFields).optional(),
  status: z.looseObject(infraMachineStatusFields).optional(),
});
export type InfraMachineObject = z.infer<typeof InfraMachineObject>;
