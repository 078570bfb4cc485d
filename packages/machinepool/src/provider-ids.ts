import { MAX_PROVIDER_ID_LENGTH, MAX_PROVIDER_IDS } from './constants.js';

/** A provider ID list that breaks the contract's limits; names the offending entry. */
export class ProviderIDListError extends Error {
  override readonly name = 'ProviderIDListError';
}

/**
 * Compares strings by Unicode code point, which is the order of their UTF-8 bytes — Go's `sort.Strings` order. JS's
 * default sort compares UTF-16 code units and disagrees for characters beyond the Basic Multilingual Plane.
 */
export function compareCodePoints(a: string, b: string): number {
  const left = [...a];
  const right = [...b];
  const length = Math.min(left.length, right.length);
  for (let index = 0; index < length; index++) {
    const difference = (left[index]?.codePointAt(0) ?? 0) - (right[index]?.codePointAt(0) ?? 0);
    if (difference !== 0) return difference;
  }
  return left.length - right.length;
}

/**
 * `spec.providerIDList` as CAPI wants it: empty entries dropped, duplicates removed, sorted. CAPI copies the list to
 * `MachinePool.spec.providerIDList` whenever it is not deep-equal to the copy it has, so an unstable order would
 * rewrite the MachinePool (and reset its ready counters) on every reconcile. Throws `ProviderIDListError` for an entry
 * longer than 512 characters or more than 10 000 entries, which the API server would refuse.
 */
export function normalizeProviderIDList(providerIDs: Iterable<string | undefined>): string[] {
  const unique = new Set<string>();
  for (const providerID of providerIDs) {
    if (providerID === undefined || providerID === '') continue;
    if (providerID.length > MAX_PROVIDER_ID_LENGTH) {
      throw new ProviderIDListError(
        `provider ID ${JSON.stringify(`${providerID.slice(0, 40)}…`)} is ${providerID.length} characters long; the InfraMachinePool contract allows at most ${MAX_PROVIDER_ID_LENGTH}: shorten the IDs the provider generates`,
      );
    }
    unique.add(providerID);
  }
  if (unique.size > MAX_PROVIDER_IDS) {
    throw new ProviderIDListError(
      `${unique.size} provider IDs exceed the InfraMachinePool contract's limit of ${MAX_PROVIDER_IDS}: split the pool`,
    );
  }
  return [...unique].sort(compareCodePoints);
}

/**
 * True when two provider ID lists are equal as CAPI's `reflect.DeepEqual` sees them: same entries in the same order,
 * and an absent list differs from an empty one (a nil slice is not deep-equal to an empty slice in Go).
 */
export function providerIDListsEqual(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.length === b.length && a.every((value, index) => value === b[index]);
}
