/**
 * Whether two values would be written as the same JSON, whatever order their keys are in: how to compare what the
 * cache holds with what a reconciler wants. The API server orders a custom resource's keys its own way (sorted), a
 * reconciler builds objects in the order it writes them, so comparing `JSON.stringify` texts finds a difference
 * where there is none and writes for nothing. Like JSON, it skips properties that are `undefined`.
 */
export function sameJSON(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, index) => sameJSON(item ?? null, b[index] ?? null));
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const leftKeys = Object.keys(left).filter((key) => left[key] !== undefined);
  const rightKeys = Object.keys(right).filter((key) => right[key] !== undefined);
  return (
    leftKeys.length === rightKeys.length &&
    leftKeys.every((key) => Object.hasOwn(right, key) && sameJSON(left[key], right[key]))
  );
}
