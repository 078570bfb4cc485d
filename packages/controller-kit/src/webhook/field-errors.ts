import type { z } from 'zod';

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const MAX_VALUE_LENGTH = 80;
const MAX_REPORTED_ISSUES = 10;

/** A zod issue path in Kubernetes field-path style: `spec.addresses[1]`, `metadata.labels[app.kubernetes.io/name]`. */
export function fieldPath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else if (typeof segment === 'string' && IDENTIFIER.test(segment)) text += text === '' ? segment : `.${segment}`;
    else text += `[${String(segment)}]`;
  }
  return text === '' ? '<root>' : text;
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let current: unknown = input;
  for (const segment of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[segment];
  }
  return current;
}

function describeValue(value: unknown): string {
  const json = JSON.stringify(value) ?? String(value);
  return json.length > MAX_VALUE_LENGTH ? `${json.slice(0, MAX_VALUE_LENGTH)}...` : json;
}

/**
 * One line per problem, the way the API server words field errors (`spec.size: Invalid value: 12: ...`,
 * `spec.color: Required value: ...`), so users see the same shape from the webhook as from schema validation.
 */
export function describeIssues(error: z.ZodError, input: unknown): string {
  const lines = error.issues.slice(0, MAX_REPORTED_ISSUES).map((issue) => {
    const value = valueAt(input, issue.path);
    const path = fieldPath(issue.path);
    return value === undefined
      ? `${path}: Required value: ${issue.message}`
      : `${path}: Invalid value: ${describeValue(value)}: ${issue.message}`;
  });
  const hidden = error.issues.length - lines.length;
  if (hidden > 0) lines.push(`and ${hidden} more`);
  return lines.join('; ');
}
