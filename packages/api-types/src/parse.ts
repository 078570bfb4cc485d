import type * as z from 'zod';
import { Cluster, Machine, MachinePool } from './cluster/v1beta2/types.js';
import { IPAddress, IPAddressClaim } from './ipam/v1beta2/types.js';
import { GlobalTallyIPPool, TallyIPPool } from './tally/v1alpha1/ip-pool.js';
import { GlobalTallyPrefixPool, TallyPrefixPool } from './tally/v1alpha1/prefix-pool.js';
import { clipText, describeJSON } from './text/clip.js';

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
  return describeJSON(value, MAX_ISSUE_TEXT);
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

/**
 * The most JSON values (array items, object members, at any depth) an object may hold. Real objects hold a few
 * hundred (a full pool: about 600); zod spends some microseconds on every value and more on every issue, so a value
 * list a hundred thousand long would cost seconds. Counted before zod runs, with an early stop.
 */
export const MAX_OBJECT_VALUES = 5_000;

interface WalkedNode {
  readonly value: object;
  readonly parent: WalkedNode | undefined;
  readonly key: PropertyKey;
}

function pathOf(node: WalkedNode): PropertyKey[] {
  const path: PropertyKey[] = [];
  for (let current: WalkedNode | undefined = node; current?.parent; current = current.parent) path.push(current.key);
  return path.reverse();
}

/** The container where the count of values passed `limit`, or undefined when the input is within it. */
function overLimit(input: unknown, limit: number): WalkedNode | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  let count = 0;
  const stack: WalkedNode[] = [{ value: input, parent: undefined, key: '' }];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    const keys: PropertyKey[] = Array.isArray(node.value) ? [] : Object.keys(node.value);
    const size = Array.isArray(node.value) ? node.value.length : keys.length;
    count += size;
    if (count > limit) return node;
    for (let index = 0; index < size; index += 1) {
      const key = Array.isArray(node.value) ? index : (keys[index] as PropertyKey);
      const child: unknown = (node.value as Record<PropertyKey, unknown>)[key];
      if (typeof child === 'object' && child !== null) stack.push({ value: child, parent: node, key });
    }
  }
  return undefined;
}

/** Parses `input` with `schema`, turning zod issues into field paths with the values found there. */
export function parseObject<S extends z.ZodType>(schema: S, kind: string, input: unknown): ParseResult<z.output<S>> {
  const crowded = overLimit(input, MAX_OBJECT_VALUES);
  if (crowded !== undefined) {
    const issue = {
      path: formatFieldPath(pathOf(crowded)),
      value: crowded.value,
      message: `the object holds more than ${MAX_OBJECT_VALUES} values (list items and fields); this one is where the count passed it`,
    };
    return { success: false, error: new ObjectParseError(kind, objectNameOf(input), [issue]) };
  }
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
