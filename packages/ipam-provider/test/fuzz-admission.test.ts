import { isDeepStrictEqual } from 'node:util';
import { tryBuildAddressPool } from '@tally-ipam/allocator';
import * as apiTypes from '@tally-ipam/api-types';
import {
  describeJSON,
  parseCluster,
  parseGlobalInClusterIPPool,
  parseGlobalInClusterPrefixPool,
  parseGlobalTallyIPPool,
  parseGlobalTallyPrefixPool,
  parseInClusterIPPool,
  parseInClusterPrefixPool,
  parseIPAddress,
  parseIPAddressClaim,
  parseMachine,
  parseMachinePool,
  parseMetal3IPAddress,
  parseMetal3IPClaim,
  parseMetal3IPPool,
  parseObject,
  parseTallyAddressLedger,
  parseTallyIPPool,
  parseTallyPrefixPool,
} from '@tally-ipam/api-types';
import type { AdmissionDecision, AdmissionRequest } from '@tally-ipam/controller-kit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type PoolAllocationsView, type PoolKindInfo, poolAdmissionHandler, type TallyPool } from '../src/index.js';
import { reservationIssues } from '../src/reservations.js';
import {
  MAX_ADMISSION_MESSAGE_LENGTH,
  MAX_ADMISSION_WARNING_LENGTH,
  MAX_ADMISSION_WARNINGS,
} from '../src/webhooks/pool-admission.js';
import { POOL_KINDS } from '../src/webhooks/pool-kinds.js';

/**
 * Hostile input for the pool admission handlers (the function the webhook server calls for each AdmissionReview) and
 * for every api-types parser: valid objects with one or more fields replaced by numeric edges, wrong types, huge
 * strings and deep nesting. Asserted for every input: nothing thrown, invalid input refused with a message naming a
 * field, every answer bounded in size, and no single input costing more than a generous budget of CPU time (a bound on
 * the work an input can cause, not a speed claim: a billion-bit shift took 4.5 s). CPU time, not wall-clock time: what
 * the process itself spent on the input, which other work on the machine does not lengthen (a preempted input took
 * long, it did not cost much); the wall-clock times are reported beside it.
 */

const PER_INPUT_BUDGET_MS = 1_000;
/**
 * How long one handler input may go without an answer before it counts as a hang (a promise that never settles): a
 * bound for a hang, testenv's default wait, never a speed. An input that answers costs at most the CPU budget above.
 */
const INPUT_HANG_BOUND_MS = 120_000;
/**
 * The fuzz tests run a fixed count of inputs, each bounded in CPU time and (the handlers) by the hang bound, so they
 * take no wall-clock timeout of vitest's: on a shared machine the same inputs take any multiple of their CPU time, and
 * vitest fails a synchronous test that outlasted its timeout after the fact, a speed claim and nothing else (it cannot
 * stop a synchronous loop either way).
 */
const COUNT_BOUNDED = { timeout: 0 } as const;
const HANDLER_RUNS = 25_000;
const PARSER_RUNS = 75_000;
const MAX_PARSE_MESSAGE_LENGTH = 8_192;

/** CPU time this process has spent so far (user and system, all its threads), in ms. */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** A point to measure an input from: wall-clock and CPU time. */
interface Mark {
  readonly wallMs: number;
  readonly cpuMs: number;
}

function mark(): Mark {
  return { wallMs: performance.now(), cpuMs: cpuMs() };
}

/** Per-input costs of one property: how many inputs, the costliest, and how many went over the CPU budget. */
class Timings {
  count = 0;
  costliestCpuMs = 0;
  slowestWallMs = 0;
  overBudget = 0;

  costliestInput = '';

  async time<T>(label: () => string, work: () => Promise<T> | T): Promise<T> {
    const from = mark();
    let timer: NodeJS.Timeout | undefined;
    const hang = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer within ${INPUT_HANG_BOUND_MS} ms, a hang: ${label()}`)),
        INPUT_HANG_BOUND_MS,
      );
    });
    try {
      const result = await Promise.race([work(), hang]);
      this.record(from, label);
      return result;
    } finally {
      clearTimeout(timer);
    }
  }

  record(from: Mark, label: () => string): void {
    const to = mark();
    const spentCpuMs = to.cpuMs - from.cpuMs;
    this.count += 1;
    this.slowestWallMs = Math.max(this.slowestWallMs, to.wallMs - from.wallMs);
    if (spentCpuMs > this.costliestCpuMs) {
      this.costliestCpuMs = spentCpuMs;
      this.costliestInput = label();
    }
    if (spentCpuMs > PER_INPUT_BUDGET_MS) this.overBudget += 1;
  }

  summary(): string {
    return (
      `costliest ${this.costliestCpuMs.toFixed(1)} ms of CPU (${this.costliestInput}), ` +
      `slowest ${this.slowestWallMs.toFixed(1)} ms of wall-clock time`
    );
  }
}

function nested(depth: number): unknown {
  let value: unknown = 'x';
  for (let level = 0; level < depth; level += 1) value = level % 2 === 0 ? [value] : { a: value };
  return value;
}

const DEEP = nested(100_000);
const HUGE = 'x'.repeat(1 << 20);
const HUGE_ADDRESS = `10.0.0.${'1'.repeat(64 * 1024)}`;

const numericEdge = fc.constantFrom(
  2 ** 31,
  -(2 ** 31),
  2 ** 31 - 1,
  2 ** 53,
  -(2 ** 53),
  2 ** 53 + 2,
  -(2 ** 30),
  -1e9,
  1e300,
  -1e300,
  Number.MAX_VALUE,
  Number.MIN_VALUE,
  -0,
  0.5,
  -1,
  129,
  128,
  33,
  32,
);
/** Astral characters are one character for the API server's length limits and two UTF-16 units for JavaScript. */
const astralCharacter = fc.integer({ min: 0x1_0000, max: 0x10_ffff }).map((point) => String.fromCodePoint(point));
const EMOJI = '\u{1F600}';
const nanLike = fc.constantFrom('NaN', 'Infinity', '-Infinity', '-0', '1e309', '0x10', ' 24', '24 ', '');
const shortHostileString = fc.oneof(
  fc.constantFrom('10.0.0.1\n', '10.0.0.1-', '-', '/', '::ffff:10.0.0.1', 'fd00::/0', '0.0.0.0/0', '10.0.0.0/-1'),
  fc.string({ maxLength: 60 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  // Around the limits of an address (45 characters) and an entry (91), counted in characters, not UTF-16 units.
  fc.string({ unit: fc.oneof(fc.constantFrom('1', '.', ':', 'f'), astralCharacter), minLength: 40, maxLength: 96 }),
);
// The webhook server caps a review at 7 MiB, so one input holds at most one of the huge strings.
const hostileString = fc.oneof(
  { weight: 1, arbitrary: fc.constantFrom(HUGE, HUGE_ADDRESS) },
  { weight: 6, arbitrary: shortHostileString },
);
const wrongType = fc.constantFrom<unknown>(null, true, false, {}, [], [[]], { a: 1 }, DEEP, [DEEP], undefined);
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: numericEdge },
  { weight: 2, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.double() },
  { weight: 2, arbitrary: nanLike },
  { weight: 4, arbitrary: hostileString },
  { weight: 3, arbitrary: wrongType },
  { weight: 1, arbitrary: fc.array(shortHostileString, { maxLength: 200 }) },
  { weight: 1, arbitrary: fc.constant(Array.from({ length: 6_000 }, () => '10.0.0.1')) },
  { weight: 1, arbitrary: fc.constant(Array.from({ length: 2_000 }, () => ({ claimName: 'a', address: '10.0.0.1' }))) },
);

const BASES: Record<string, Record<string, unknown>> = {
  TallyIPPool: {
    addresses: ['10.0.0.10-10.0.0.50', '10.0.0.100/30'],
    prefix: 24,
    gateway: '10.0.0.1',
    excludedAddresses: ['10.0.0.20'],
    allocationStrategy: 'LowestFree',
    addressReuseGracePeriodSeconds: 5,
    reservations: [{ claimName: 'cp-0', address: '10.0.0.11' }],
  },
  TallyPrefixPool: {
    prefixes: ['fd00:10::/48'],
    allocationPrefixLength: 64,
    gateway: 'fd00:10::1',
    excludedPrefixes: ['fd00:10:0:1::/64'],
  },
};
const baseSpec = (kind: string): Record<string, unknown> =>
  structuredClone(kind.includes('Prefix') ? BASES.TallyPrefixPool : BASES.TallyIPPool) as Record<string, unknown>;

const SPEC_FIELDS = [
  'prefix',
  'addresses',
  'gateway',
  'excludedAddresses',
  'allocationStrategy',
  'addressReuseGracePeriodSeconds',
  'allocateReservedIPAddresses',
  'reservations',
  'prefixes',
  'allocationPrefixLength',
  'excludedPrefixes',
];

/** One change to a valid object: a field (or an element of a list) replaced, or a whole part. */
const mutation = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({ where: fc.constant('spec'), field: fc.constantFrom(...SPEC_FIELDS), value: hostileValue }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      where: fc.constant('element'),
      field: fc.constantFrom('addresses', 'prefixes', 'excludedAddresses', 'excludedPrefixes'),
      value: hostileValue,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      where: fc.constant('reservation'),
      field: fc.constantFrom('claimName', 'address'),
      value: hostileValue,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      where: fc.constant('metadata'),
      field: fc.constantFrom(
        'name',
        'namespace',
        'labels',
        'annotations',
        'finalizers',
        'generation',
        'ownerReferences',
      ),
      value: hostileValue,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      where: fc.constant('root'),
      field: fc.constantFrom('spec', 'metadata', 'kind', 'apiVersion', 'status'),
      value: hostileValue,
    }),
  },
);

type Mutation = { where: string; field: string; value: unknown };

function objectAt(object: Record<string, unknown>, key: string): Record<string, unknown> {
  const value = object[key];
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  const replaced: Record<string, unknown> = {};
  object[key] = replaced;
  return replaced;
}

function applyMutation(object: Record<string, unknown>, change: Mutation): void {
  const spec = objectAt(object, 'spec');
  const metadata = objectAt(object, 'metadata');
  switch (change.where) {
    case 'spec':
      spec[change.field] = change.value;
      return;
    case 'element': {
      // Copies: the generated values are shared between inputs and must never change.
      const list = spec[change.field];
      spec[change.field] = Array.isArray(list) ? [change.value, ...list.slice(1)] : [change.value];
      return;
    }
    case 'reservation': {
      const reservations: unknown[] = Array.isArray(spec.reservations) ? spec.reservations : [];
      spec.reservations = [...reservations, { claimName: 'other', address: '10.0.0.12', [change.field]: change.value }];
      return;
    }
    case 'metadata':
      metadata[change.field] = change.value;
      return;
    default:
      object[change.field] = change.value;
  }
}

function poolObject(kind: PoolKindInfo, changes: readonly Mutation[]): Record<string, unknown> {
  const object: Record<string, unknown> = {
    apiVersion: 'ipam.cluster.x-k8s.io/v1alpha1',
    kind: kind.kind,
    metadata: { name: 'fuzzed', ...(kind.namespaced ? { namespace: 'fuzz' } : {}), uid: 'u', resourceVersion: '1' },
    spec: baseSpec(kind.kind),
  };
  for (const change of changes) applyMutation(object, change);
  return object;
}

/** An in-memory view (no Kubernetes involved): two other pools and allocations, so every rule has data to look at. */
function fixedView(): PoolAllocationsView {
  const pools = POOL_KINDS.filter((kind) => kind.kind === 'TallyIPPool' || kind.kind === 'TallyPrefixPool').map(
    (kind) => {
      const parsed = kind.schema.safeParse(poolObject(kind, []) as unknown as TallyPool);
      if (!parsed.success) throw new Error(`the base ${kind.kind} must parse: ${parsed.error.message}`);
      return { ...parsed.data, metadata: { ...parsed.data.metadata, name: 'other' } } as TallyPool;
    },
  );
  return {
    addressesOf: async (pool) =>
      pool.kind.includes('Prefix')
        ? [{ address: 'fd00:10:0:5::', prefix: 64, claimName: 'p-0' }]
        : [
            { address: '10.0.0.12', prefix: 24, claimName: 'a-0' },
            { address: '10.0.0.99', prefix: 24, claimName: 'stray' },
          ],
    listPools: async () => pools,
  };
}

function request(kind: PoolKindInfo, operation: AdmissionRequest['operation'], object: unknown, oldObject: unknown) {
  return {
    uid: 'fuzz',
    kind: { group: 'ipam.cluster.x-k8s.io', version: 'v1alpha1', kind: kind.kind },
    resource: { group: 'ipam.cluster.x-k8s.io', version: 'v1alpha1', resource: kind.plural },
    name: 'fuzzed',
    ...(kind.namespaced ? { namespace: 'fuzz' } : {}),
    operation,
    userInfo: {},
    object: operation === 'DELETE' ? undefined : object,
    oldObject: operation === 'CREATE' ? undefined : oldObject,
    dryRun: false,
    options: undefined,
  } satisfies AdmissionRequest;
}

function expectBounded(decision: AdmissionDecision): void {
  expect(decision.status?.message.length ?? 0).toBeLessThanOrEqual(MAX_ADMISSION_MESSAGE_LENGTH);
  expect(decision.warnings?.length ?? 0).toBeLessThanOrEqual(MAX_ADMISSION_WARNINGS);
  for (const warning of decision.warnings ?? [])
    expect(warning.length).toBeLessThanOrEqual(MAX_ADMISSION_WARNING_LENGTH);
}

function sameSpec(object: Record<string, unknown>, oldObject: Record<string, unknown>): boolean {
  try {
    return isDeepStrictEqual(object.spec, oldObject.spec);
  } catch {
    return false;
  }
}

const FIELD_NAMED = /(^|[\s:;])(spec|metadata|status|apiVersion|kind)\b|<root>/;

describe('fuzz: pool admission handlers and api-types parsers under hostile input', () => {
  it(
    `the pool handlers answer ${HANDLER_RUNS} generated reviews: no throw, field-naming denials, bounded`,
    COUNT_BOUNDED,
    async () => {
      const view = fixedView();
      const handlers = new Map(POOL_KINDS.map((kind) => [kind.kind, poolAdmissionHandler(kind, view)]));
      const timings = new Timings();
      const startedAt = performance.now();
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...POOL_KINDS),
          fc.constantFrom<AdmissionRequest['operation']>('CREATE', 'UPDATE', 'UPDATE', 'DELETE'),
          fc.array(mutation, { minLength: 1, maxLength: 3 }),
          fc.array(mutation, { maxLength: 2 }),
          async (kind, operation, changes, oldChanges) => {
            const object = poolObject(kind, changes);
            const oldObject = poolObject(kind, oldChanges);
            const handler = handlers.get(kind.kind);
            if (!handler) throw new Error(`no handler for ${kind.kind}`);
            const decision = await timings.time(
              () => `${operation} ${kind.kind} ${describeJSON({ changes, oldChanges }, 300)}`,
              () => handler(request(kind, operation, object, oldObject)),
            );
            expectBounded(decision);
            // DELETE looks at identity and annotations only; an update that leaves the spec as it was is always allowed.
            if (operation === 'DELETE' || (operation === 'UPDATE' && sameSpec(object, oldObject))) return;
            const valid = parseObject(kind.schema, kind.kind, object).success;
            if (!valid) {
              expect(decision.allowed).toBe(false);
              expect(decision.status?.code).toBe(422);
              expect(decision.status?.message).toMatch(FIELD_NAMED);
            }
          },
        ),
        { numRuns: HANDLER_RUNS, endOnFailure: true },
      );
      const totalMs = performance.now() - startedAt;
      console.log(`pool handlers: ${timings.count} inputs in ${(totalMs / 1000).toFixed(1)} s, ${timings.summary()}`);
      expect(timings.count).toBe(HANDLER_RUNS);
      expect(timings.overBudget).toBe(0);
    },
  );

  const IN_CLUSTER_IP_POOL_BODY = {
    spec: {
      addresses: ['10.0.0.10-10.0.0.50', '10.0.1.0/28'],
      prefix: 23,
      gateway: '10.0.0.1',
      excludedAddresses: ['10.0.0.20'],
      allocateReservedIPAddresses: false,
    },
    status: { ipAddresses: { total: 54, used: 0, free: 54, outOfRange: 0 } },
  };
  const IN_CLUSTER_PREFIX_POOL_BODY = {
    spec: { prefixes: ['fd00:1::/56'], allocationPrefixLength: 64, excludedPrefixes: ['fd00:1::/64'] },
  };
  const SIM_MACHINE_REF = { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'SimMachine', name: 'm' };
  const PARSERS: {
    name: string;
    parse: (input: unknown) => { success: boolean; error?: { issues: readonly { path: string }[]; message: string } };
    base: () => Record<string, unknown>;
  }[] = [
    { name: 'TallyIPPool', parse: parseTallyIPPool, base: () => poolObject(POOL_KINDS[0] as PoolKindInfo, []) },
    {
      name: 'GlobalTallyIPPool',
      parse: parseGlobalTallyIPPool,
      base: () => poolObject(POOL_KINDS[1] as PoolKindInfo, []),
    },
    { name: 'TallyPrefixPool', parse: parseTallyPrefixPool, base: () => poolObject(POOL_KINDS[2] as PoolKindInfo, []) },
    {
      name: 'GlobalTallyPrefixPool',
      parse: parseGlobalTallyPrefixPool,
      base: () => poolObject(POOL_KINDS[3] as PoolKindInfo, []),
    },
    {
      name: 'IPAddressClaim',
      parse: parseIPAddressClaim,
      base: () => ({
        apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
        kind: 'IPAddressClaim',
        metadata: { name: 'c', namespace: 'n' },
        spec: { clusterName: 'c', poolRef: { apiGroup: 'ipam.cluster.x-k8s.io', kind: 'TallyIPPool', name: 'p' } },
      }),
    },
    {
      name: 'IPAddress',
      parse: parseIPAddress,
      base: () => ({
        apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
        kind: 'IPAddress',
        metadata: { name: 'c', namespace: 'n' },
        spec: {
          address: '10.0.0.1',
          prefix: 24,
          gateway: '10.0.0.254',
          claimRef: { name: 'c' },
          poolRef: { apiGroup: 'ipam.cluster.x-k8s.io', kind: 'TallyIPPool', name: 'p' },
        },
      }),
    },
    {
      name: 'TallyAddressLedger',
      parse: parseTallyAddressLedger,
      base: () => ({
        apiVersion: 'ipam.cluster.x-k8s.io/v1alpha1',
        kind: 'TallyAddressLedger',
        metadata: { name: 'ip4-10.0.0.0.27' },
        spec: {
          entries: [
            {
              key: 'ip4-10.0.0.5',
              address: '10.0.0.5',
              poolRef: { apiGroup: 'ipam.cluster.x-k8s.io', kind: 'TallyIPPool', name: 'p', namespace: 'n' },
              claimRef: { namespace: 'n', name: 'c', uid: 'u' },
              heldSince: '2026-01-02T03:04:05Z',
            },
          ],
        },
      }),
    },
    // The in-cluster provider's four kinds: one object shape, an IP pool's or a prefix pool's body.
    ...(
      [
        ['InClusterIPPool', parseInClusterIPPool, 'n', IN_CLUSTER_IP_POOL_BODY],
        ['GlobalInClusterIPPool', parseGlobalInClusterIPPool, undefined, IN_CLUSTER_IP_POOL_BODY],
        ['InClusterPrefixPool', parseInClusterPrefixPool, 'n', IN_CLUSTER_PREFIX_POOL_BODY],
        ['GlobalInClusterPrefixPool', parseGlobalInClusterPrefixPool, undefined, IN_CLUSTER_PREFIX_POOL_BODY],
      ] as const
    ).map(([kind, parse, namespace, body]) => ({
      name: kind,
      parse,
      base: () => ({
        apiVersion: 'ipam.cluster.x-k8s.io/v1alpha2',
        kind,
        metadata: { name: 'p', ...(namespace ? { namespace } : {}) },
        ...structuredClone(body),
      }),
    })),
    {
      name: 'Metal3IPPool',
      parse: parseMetal3IPPool,
      base: () => ({
        apiVersion: 'ipam.metal3.io/v1alpha1',
        kind: 'IPPool',
        metadata: { name: 'p', namespace: 'n' },
        spec: {
          clusterName: 'c',
          namePrefix: 'p',
          pools: [{ start: '10.0.0.10', end: '10.0.0.50', subnet: '10.0.0.0/24', gateway: '10.0.0.1' }],
          preAllocations: { 'm-0': '10.0.0.11' },
          prefix: 24,
          gateway: '10.0.0.1',
          dnsServers: ['10.0.0.2'],
        },
      }),
    },
    {
      name: 'Metal3IPClaim',
      parse: parseMetal3IPClaim,
      base: () => ({
        apiVersion: 'ipam.metal3.io/v1alpha1',
        kind: 'IPClaim',
        metadata: { name: 'c', namespace: 'n' },
        spec: { pool: { name: 'p', namespace: 'n' } },
      }),
    },
    {
      name: 'Metal3IPAddress',
      parse: parseMetal3IPAddress,
      base: () => ({
        apiVersion: 'ipam.metal3.io/v1alpha1',
        kind: 'IPAddress',
        metadata: { name: 'p-10-0-0-11', namespace: 'n' },
        spec: {
          address: '10.0.0.11',
          prefix: 24,
          gateway: '10.0.0.1',
          claim: { name: 'c', namespace: 'n' },
          pool: { name: 'p', namespace: 'n' },
        },
      }),
    },
    {
      name: 'Cluster',
      parse: parseCluster,
      base: () => ({
        apiVersion: 'cluster.x-k8s.io/v1beta2',
        kind: 'Cluster',
        metadata: { name: 'c', namespace: 'n' },
        spec: { paused: false },
      }),
    },
    {
      name: 'Machine',
      parse: parseMachine,
      base: () => ({
        apiVersion: 'cluster.x-k8s.io/v1beta2',
        kind: 'Machine',
        metadata: { name: 'm', namespace: 'n' },
        spec: { clusterName: 'c', infrastructureRef: SIM_MACHINE_REF },
      }),
    },
    {
      name: 'MachinePool',
      parse: parseMachinePool,
      base: () => ({
        apiVersion: 'cluster.x-k8s.io/v1beta2',
        kind: 'MachinePool',
        metadata: { name: 'm', namespace: 'n' },
        spec: {
          clusterName: 'c',
          replicas: 3,
          template: { spec: { clusterName: 'c', infrastructureRef: SIM_MACHINE_REF } },
        },
      }),
    },
  ];

  it('fuzzes every parser api-types exports, and every base object parses', () => {
    const fuzzed = new Set<unknown>(PARSERS.map((parser) => parser.parse));
    // parseObject is the generic helper every named parser goes through, not a parser of one kind.
    const exported = Object.entries(apiTypes).filter(([name]) => /^parse[A-Z]/.test(name) && name !== 'parseObject');
    expect(exported.filter(([, parse]) => !fuzzed.has(parse)).map(([name]) => name)).toEqual([]);
    const failing = PARSERS.filter((parser) => !parser.parse(parser.base()).success).map((parser) => parser.name);
    expect(failing).toEqual([]);
  });

  const anyField = fc.constantFrom(
    ...SPEC_FIELDS,
    'address',
    'prefix',
    'gateway',
    'claimRef',
    'poolRef',
    'clusterName',
    'replicas',
    'paused',
    'releasedAt',
    'template',
    'entries',
    'pools',
    'preAllocations',
    'namePrefix',
    'dnsServers',
    'pool',
    'claim',
  );

  it(
    `every api-types parser takes ${PARSER_RUNS} generated objects: no throw, issues name fields, bounded`,
    COUNT_BOUNDED,
    () => {
      const timings = new Timings();
      const startedAt = performance.now();
      fc.assert(
        fc.property(
          fc.constantFrom(...PARSERS),
          fc.array(
            fc.oneof(fc.record({ where: fc.constant('spec'), field: anyField, value: hostileValue }), mutation),
            {
              minLength: 1,
              maxLength: 3,
            },
          ),
          (parser, changes) => {
            const object = parser.base();
            if (typeof object.spec !== 'object' || object.spec === null) object.spec = {};
            for (const change of changes) applyMutation(object, change);
            const from = mark();
            const result = parser.parse(object);
            timings.record(from, () => `${parser.name} ${describeJSON(changes, 300)}`);
            if (result.success) return;
            expect(result.error?.issues.length).toBeGreaterThan(0);
            for (const issue of result.error?.issues ?? []) expect(issue.path).not.toBe('');
            expect(result.error?.message.length).toBeLessThanOrEqual(MAX_PARSE_MESSAGE_LENGTH);
          },
        ),
        { numRuns: PARSER_RUNS, endOnFailure: true },
      );
      console.log(
        `api-types parsers: ${timings.count} inputs in ${((performance.now() - startedAt) / 1000).toFixed(1)} s, ${timings.summary()}`,
      );
      expect(timings.count).toBe(PARSER_RUNS);
      expect(timings.overBudget).toBe(0);
    },
  );
});

describe('a reservation address with emoji in it, sent straight to the pool handler', () => {
  const ipPoolKind = POOL_KINDS.find((kind) => kind.kind === 'TallyIPPool') as PoolKindInfo;
  const reserving = (address: string): Record<string, unknown> =>
    poolObject(ipPoolKind, [{ where: 'reservation', field: 'address', value: address }]);

  // The base pool already holds one reservation: the generated one is spec.reservations[1].
  it.each([
    ['23 emoji: 23 characters, 46 UTF-16 units', EMOJI.repeat(23)],
    ['an address and 36 emoji: 45 characters (the limit), 81 units', `10.0.0.11${EMOJI.repeat(36)}`],
    ['44 digits and an emoji: 45 characters, 46 units', `${'1'.repeat(44)}${EMOJI}`],
    ['46 characters, over the limit', `10.0.0.11${EMOJI.repeat(37)}`],
  ])('%s: a 422 naming spec.reservations[1].address and the value', async (_, address) => {
    const handler = poolAdmissionHandler(ipPoolKind, fixedView());
    for (const operation of ['CREATE', 'UPDATE'] as const) {
      const decision = await handler(request(ipPoolKind, operation, reserving(address), poolObject(ipPoolKind, [])));
      expect(decision).toMatchObject({ allowed: false, status: { code: 422, reason: 'Invalid' } });
      expect(decision.status?.message).toContain(`spec.reservations[1].address: `);
      expect(decision.status?.message).toContain(address);
    }
  });

  it('an address of ten thousand emoji is refused naming the field, its value echoed cut', async () => {
    const address = EMOJI.repeat(10_000);
    const decision = await poolAdmissionHandler(
      ipPoolKind,
      fixedView(),
    )(request(ipPoolKind, 'CREATE', reserving(address), undefined));
    expect(decision).toMatchObject({ allowed: false, status: { code: 422 } });
    const message = decision.status?.message ?? '';
    expect(message).toContain('spec.reservations[1].address: ');
    expect(message).toContain(`${EMOJI.repeat(10)}`);
    expect(message).toContain(apiTypes.ELLIPSIS);
    expect(message.length).toBeLessThan(1_000);
  });

  it('reservationIssues names the field of an address that is not one, instead of throwing', () => {
    const built = tryBuildAddressPool({ addresses: ['10.0.0.0/24'], prefix: 24 });
    if (!built.ok) throw new Error(`the pool must build: ${JSON.stringify(built.issues)}`);
    const issues = reservationIssues(built.pool, [
      { claimName: 'inside', address: '10.0.0.5' },
      { claimName: 'emoji', address: `10.0.0.${EMOJI}` },
      { claimName: 'outside', address: '10.0.1.5' },
    ]);
    expect(issues.map((issue) => issue.field)).toEqual(['spec.reservations[1].address', 'spec.reservations[2]']);
    expect(issues[0]).toMatchObject({ value: `10.0.0.${EMOJI}` });
    expect(issues[0]?.message).toContain(`address 10.0.0.${EMOJI} for claim emoji is not an IP address: `);
  });
});
