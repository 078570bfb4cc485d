import { isDeepStrictEqual } from 'node:util';

/** Drops `undefined` members (recursively) so that a computed status compares equal to the one read back. */
export function withoutUndefined<T>(value: T): T {
  return JSON.parse(JSON.stringify(value ?? null)) as T;
}

/** True when writing `next` would change nothing the API server holds in `current`. */
export function statusUnchanged(current: unknown, next: unknown): boolean {
  return isDeepStrictEqual(withoutUndefined(current ?? {}), withoutUndefined(next));
}

/**
 * A merge patch that makes the stored status equal to `next` for the given top-level fields: a field `next` leaves
 * out is sent as `null`, which deletes it (a merge patch otherwise keeps what it does not mention).
 */
export function statusMergePatch(
  next: Readonly<Record<string, unknown>>,
  fields: readonly string[],
): Record<string, unknown> {
  const patch: Record<string, unknown> = {};
  for (const field of fields) patch[field] = next[field] === undefined ? null : next[field];
  return patch;
}
