/**
 * Does an object show what the guide says it shows? The guide prints excerpts of `kubectl get -o yaml`: every field
 * it prints must be there with that value, fields it leaves out are not looked at. Lists are matched without regard to
 * order (an excerpt of `status.conditions` prints the condition it is about, not the list): each element the guide
 * prints must match a different element of the object.
 */

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function show(value: unknown): string {
  const text = JSON.stringify(value);
  return text === undefined ? 'nothing' : text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

/** Every way `actual` differs from the excerpt `expected`, each naming the field path; empty when it matches. */
export function excerptMismatches(expected: unknown, actual: unknown, path = ''): string[] {
  const here = path === '' ? '(the object)' : path;
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return [`${here} is ${show(actual)}, the guide shows a list`];
    return listMismatches(expected, actual, here);
  }
  if (isRecord(expected)) {
    if (!isRecord(actual)) return [`${here} is ${show(actual)}, the guide shows ${show(expected)}`];
    return Object.entries(expected).flatMap(([key, value]) =>
      excerptMismatches(value, actual[key], path === '' ? key : `${path}.${key}`),
    );
  }
  return expected === actual ? [] : [`${here} is ${show(actual)}, the guide says ${show(expected)}`];
}

/**
 * Assigns each expected element a distinct actual one it matches (in order, first fit: an excerpt's elements are
 * distinct enough that the first fit is the only fit). The message for an unmatched element names the closest miss.
 */
function listMismatches(expected: readonly unknown[], actual: readonly unknown[], path: string): string[] {
  const taken = new Set<number>();
  const problems: string[] = [];
  expected.forEach((element, index) => {
    let closest: string[] | undefined;
    for (let candidate = 0; candidate < actual.length; candidate += 1) {
      if (taken.has(candidate)) continue;
      const misses = excerptMismatches(element, actual[candidate], `${path}[${candidate}]`);
      if (misses.length === 0) {
        taken.add(candidate);
        closest = [];
        break;
      }
      if (closest === undefined || misses.length < closest.length) closest = misses;
    }
    if (closest === undefined) {
      problems.push(`${path} has no element like the guide's element ${index} ${show(element)}`);
    } else if (closest.length > 0) {
      problems.push(`${path}: no element matches the guide's element ${index}; closest: ${closest.join('; ')}`);
    }
  });
  return problems;
}
