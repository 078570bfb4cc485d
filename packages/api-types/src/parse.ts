import type * as z from 'zod';
import { Cluster, Machine, MachinePool } from './cluster/v1beta2/types.js';
import { IPAddress, IPAddressClaim } from './ipam/v1beta2/types.js';
import { GlobalTallyIPPool, TallyIPPool } from './tally/v1alpha1/ip-pool.js';
import { GlobalTallyPrefixPool, TallyPrefixPool } from './tally/v1alpha1/prefix-pool.js';
import { clipText } from './text/clip.js';

/** How many field problems one parse error lists before it says how many more there are. */
const MAX_LISTED_ISSUES = 10;
/** The longest value or reason one listed problem shows. */
const MAX_ISSUE_TEXT = 200;

/** One problem with an object: where (`spec.addresses[2]`), what was there, and why it is wrong. */
export interface FieldIssue {
  path: string;
  /** The offending value as found in the input (undefined when the field is missing). */
  value: unknown;
  message: string;
}

/** An object that does not match its schema; the message lists every field path, value and reason. */
export class ObjectParseError extends Error {
  readonly kind: string;
  /** `namespace/name`, `name`, or `<unnamed>`. */
  readonly objectName: string;
  readonly issues: readonly FieldIssue[];

  constructor(kind: string, objectName: string, issues: readonly FieldIssue[]) {
    // Bounded whatever the input: a list of a million bad entries gives a million issues.
    const details = issues
      .slice(0, MAX_LISTED_ISSUES)
      .map(
        (issue) =>
          `${clipText(issue.path, MAX_ISSUE_TEXT)}: ${clipText(issue.message, MAX_ISSUE_TEXT)} ` +
          `(value: ${describeValue(issue.value)})`,
      );
    if (issues.length > MAX_LISTED_ISSUES) details.push(`and ${issues.length - MAX_LISTED_ISSUES} more`);
    super(`invalid ${kind} ${clipText(objectName, MAX_ISSUE_TEXT)}: ${details.join('; ')}`);
    this.name = 'ObjectParseError';
    this.kind = kind;
    this.objectName = objectName;
    this.issues = issues;
  }
}

export type ParseResult<T> = { success: true; data: T } | { success: false; error: ObjectParseError };

function describeValue(value: unknown): string {
  if (value === undefined) return '<missing>';
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    // Nesting deeper than the stack (JSON.stringify recurses) or a value JSON cannot show.
    text = Array.isArray(value) ? '<array>' : `<${typeof value}>`;
  }
  return clipText(text, MAX_ISSUE_TEXT);
}

/** `['spec', 'addresses', 2]` → `spec.addresses[2]`. */
export function formatFieldPath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else text += text === '' ? String(segment) : `.${String(segment)}`;
  }
  return text === '' ? '<root>' : text;
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let current: unknown = input;
  for (const segment of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[segment];
  }
  return current;
}

function objectNameOf(input: unknown): string {
  const metadata = valueAt(input, ['metadata']);
  const name = valueAt(metadata, ['name']);
  const namespace = valueAt(metadata, ['namespace']);
  if (typeof name !== 'string') return '<unnamed>';
  return typeof namespace === 'string' && namespace !== '' ? `${namespace}/${name}` : name;
}

/** Parses `input` with `schema`, turning zod issues into field paths with the values found there. */
export function parseObject<S extends z.ZodType>(schema: S, kind: string, input: unknown): ParseResult<z.output<S>> {
  const result = schema.safeParse(input);
  if (result.success) return { success: true, data: result.data };
  const issues = result.error.issues.map((issue) => ({
    path: formatFieldPath(issue.path),
    value: valueAt(input, issue.path),
    message: issue.message,
  }));
  return { success: false, error: new ObjectParseError(kind, objectNameOf(input), issues) };
}

export function parseTallyIPPool(input: unknown): ParseResult<TallyIPPool> {
  return parseObject(TallyIPPool, 'TallyIPPool', input);
}
export function parseGlobalTallyIPPool(input: unknown): ParseResult<GlobalTallyIPPool> {
  return parseObject(GlobalTallyIPPool, 'GlobalTallyIPPool', input);
}
export function parseTallyPrefixPool(input: unknown): ParseResult<TallyPrefixPool> {
  return parseObject(TallyPrefixPool, 'TallyPrefixPool', input);
}
export function parseGlobalTallyPrefixPool(input: unknown): ParseResult<GlobalTallyPrefixPool> {
  return parseObject(GlobalTallyPrefixPool, 'GlobalTallyPrefixPool', input);
}
export function parseIPAddressClaim(input: unknown): ParseResult<IPAddressClaim> {
  return parseObject(IPAddressClaim, 'IPAddressClaim', input);
}
export function parseIPAddress(input: unknown): ParseResult<IPAddress> {
  return parseObject(IPAddress, 'IPAddress', input);
}
export function parseCluster(input: unknown): ParseResult<Cluster> {
  return parseObject(Cluster, 'Cluster', input);
}
export function parseMachine(input: unknown): ParseResult<Machine> {
  return parseObject(Machine, 'Machine', input);
}
export function parseMachinePool(input: unknown): ParseResult<MachinePool> {
  return parseObject(MachinePool, 'MachinePool', input);
}
