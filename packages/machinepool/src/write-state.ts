import { isDeepStrictEqual } from 'node:util';
import type { Client, ObjectOf, ResourceKind } from '@tally-ipam/controller-kit/client';
import { InfraMachinePoolObject } from './contract-fields.js';
import { providerIDListsEqual } from './provider-ids.js';

export interface WritePoolStateInput<R extends ResourceKind> {
  readonly client: Client;
  readonly resource: R;
  /** The InfraMachinePool as read from the API server; its resourceVersion guards both writes. */
  readonly infraMachinePool: ObjectOf<R>;
  /** `spec.providerIDList` to have: sorted and unique (`normalizeProviderIDList`), undefined to have none. */
  readonly providerIDList: readonly string[] | undefined;
  /** Status fields to set (merged into the status; fields not named stay as they are). */
  readonly status: Readonly<Record<string, unknown>>;
  readonly signal?: AbortSignal | undefined;
}

export interface WritePoolStateResult<T> {
  readonly object: T;
  readonly specUpdated: boolean;
  readonly statusUpdated: boolean;
}

/**
 * Writes the contract fields of an InfraMachinePool: `spec.providerIDList` by merge patch of the main resource (an
 * empty list is removed, not written as `[]`), then the status through `/status`. Each write carries the
 * resourceVersion of what it was computed from, so a stale computation fails with a Conflict instead of overwriting;
 * nothing is sent for a field that already has its value.
 */
export async function writeInfraMachinePoolState<R extends ResourceKind>(
  input: WritePoolStateInput<R>,
): Promise<WritePoolStateResult<ObjectOf<R>>> {
  const { client, resource, signal } = input;
  let object = input.infraMachinePool;
  const current = parsePool(object);
  const desiredList = input.providerIDList && input.providerIDList.length > 0 ? [...input.providerIDList] : undefined;
  let specUpdated = false;
  if (!providerIDListsEqual(current.spec?.providerIDList, desiredList)) {
    object = await client.mergePatch(
      resource,
      { namespace: current.metadata.namespace, name: current.metadata.name },
      {
        metadata: { resourceVersion: current.metadata.resourceVersion },
        spec: { providerIDList: desiredList ?? null },
      },
      { signal },
    );
    specUpdated = true;
  }
  const status: Record<string, unknown> = current.status ?? {};
  const statusChanged = Object.entries(input.status).some(([key, value]) => !isDeepStrictEqual(status[key], value));
  if (!statusChanged) return { object, specUpdated, statusUpdated: false };
  object = await client.patchStatus(resource, object, input.status, { signal });
  return { object, specUpdated, statusUpdated: true };
}

function parsePool(object: unknown): InfraMachinePoolObject {
  const parsed = InfraMachinePoolObject.safeParse(object);
  if (parsed.success) return parsed.data;
  throw new Error(
    `the InfraMachinePool does not have the contract's shape (${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}): check its CRD schema against infraMachinePoolSpecFields/infraMachinePoolStatusFields`,
  );
}
