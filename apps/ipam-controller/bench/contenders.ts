/**
 * The five contenders of the side-by-side benchmark and the raw writers behind the three ceilings and the prefill.
 *
 * - `tally`: the built controller (`dist/main.js`) as a child process, default concurrency;
 * - `tally-64`, `tally-32`, `tally-16` (opt-in, not in the default list): the same with 64, 32 or 16 addresses per
 *   ledger block (see block-size-variants.ts);
 * - `reference`: the in-cluster provider (see reference-provider.ts), one claim worker as it ships;
 * - `tally-writes`: a raw client making exactly Tally's writes per claim and nothing else (the ceiling of Tally's
 *   design): finalizer patch, IPAddress create, status patch, and the ledger compare-and-swap writes amortised as Tally
 *   amortises them — through Tally's own writer (`AddressLedgers`: what is in flight on one block shares a write) and
 *   holding ahead with Tally's own bounds (`HoldAheadPlan`: a claim not held ahead holds its address and up to
 *   `HOLD_AHEAD_LIMIT` waiting claims' in one write; a claim held ahead writes nothing unless fewer than
 *   `HOLD_AHEAD_LOW_WATER` remain held ahead);
 * - `contract-minimum`: a raw client making only what the contract needs per claim: finalizer patch, IPAddress
 *   create, status patch;
 * - `contract-watching`: the same writes by a raw client that also keeps an informer of the IPAddresses, as every
 *   provider must (it has to see its IPAddresses go, to make them again or let them go): what the contract costs a
 *   controller. The API server serves that watch one event per claim, which `contract-minimum` does not pay.
 * The prefill (addresses already allocated before a run starts) is written by the same raw writer in each contender's
 * own shape, so the provider starts on state it would have written itself: for Tally, every IPAddress backed by its
 * claim's entry in the TallyAddressLedger of its block, written by `AddressLedgers`. When Tally's writes per claim
 * change, change `TALLY_WRITES` here: the ceiling and Tally's prefill follow.
 */

import { readFileSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import { TALLY_GROUP, TALLY_IP_POOL_KIND } from '@tally-ipam/api-types';
import { Cache, Client, type KubeObject } from '@tally-ipam/controller-kit';
import {
  ADDRESS_FINALIZER,
  CLAIM_FINALIZER,
  describePool,
  HOLD_AHEAD_LIMIT,
  HOLD_AHEAD_LOW_WATER,
} from '@tally-ipam/ipam-provider';
import { AddressLedgers, addressEntryKey } from '@tally-ipam/ledger';
import { processCpuSeconds } from '@tally-ipam/testenv';
import { pino } from 'pino';
import { type ControllerProcess, servingPort, startController } from '../test/controller-process.js';
import { forEachLimited } from '../test/random.js';
import { ADDRESSES, CLAIMS, field, IPAM_API_VERSION } from '../test/support.js';
import { BLOCK_SIZE_VARIANTS, isBlockSizeVariant } from './block-size-variants.js';
import { HoldAheadPlan } from './hold-ahead-plan.js';
import { REFERENCE_POOL_API_VERSION, startReferenceProvider } from './reference-provider.js';

/** The default contenders, and the columns of the README's table. */
export const CONTENDERS = ['tally', 'reference', 'tally-writes', 'contract-minimum', 'contract-watching'] as const;
/**
 * The bundle given by `--tally-baseline` (e.g. an earlier commit's), run as a contender of its own: a change is measured
 * against its baseline in one run, on the same control plane, round by round.
 */
export const BASELINE_CONTENDER = 'tally-baseline';
/** Every contender `--contenders` accepts: the default ones, the block-size variants and the baseline. */
export const ALL_CONTENDERS = [...CONTENDERS, ...BLOCK_SIZE_VARIANTS, BASELINE_CONTENDER] as const;
export type Contender = (typeof ALL_CONTENDERS)[number];
export const PROVIDERS: readonly Contender[] = ['tally', 'reference', ...BLOCK_SIZE_VARIANTS, BASELINE_CONTENDER];

/** Tally's default `--concurrency`; the raw ceilings get the same number of workers. */
export const WORKERS = 10;
const GROUP = 'ipam.cluster.x-k8s.io';
/** The reference provider's finalizers (its pkg/ipamutil). */
const REFERENCE_CLAIM_FINALIZER = 'ipam.cluster.x-k8s.io/ReleaseAddress';
const REFERENCE_ADDRESS_FINALIZER = 'ipam.cluster.x-k8s.io/ProtectAddress';

/** What a raw writer writes per claim beyond the contract's finalizer, IPAddress and status. */
interface WriteShape {
  readonly claimFinalizer: string;
  readonly addressFinalizer: string;
  /**
   * Tally's design: the address held in the TallyAddressLedger of its block before the IPAddress is created (by the
   * raw writer: holding ahead as Tally does; by the prefill: every hold in flight on a block in one write).
   */
  readonly ledger: boolean;
}

const TALLY_WRITES: WriteShape = { claimFinalizer: CLAIM_FINALIZER, addressFinalizer: ADDRESS_FINALIZER, ledger: true };
const CONTRACT_MINIMUM: WriteShape = {
  claimFinalizer: CLAIM_FINALIZER,
  addressFinalizer: ADDRESS_FINALIZER,
  ledger: false,
};
const REFERENCE_SHAPE: WriteShape = {
  claimFinalizer: REFERENCE_CLAIM_FINALIZER,
  addressFinalizer: REFERENCE_ADDRESS_FINALIZER,
  ledger: false,
};

/** The pool kind each contender's claims point at, and the shape its prefill is written in. */
export function poolKindOf(contender: Contender): string {
  return contender === 'reference' ? 'InClusterIPPool' : 'TallyIPPool';
}

function shapeOf(contender: Contender): WriteShape {
  if (contender === 'reference') return REFERENCE_SHAPE;
  return contender === 'contract-minimum' || contender === 'contract-watching' ? CONTRACT_MINIMUM : TALLY_WRITES;
}

/** One pool of a run: a /16 of its own, numbered by `octet`. */
export interface BenchPool {
  readonly name: string;
  readonly octet: number;
}

export function poolCidr(pool: BenchPool): string {
  return `10.${pool.octet}.0.0/16`;
}

/** The n-th address of a pool (n from 0), skipping the network address. */
export function nthAddress(pool: BenchPool, n: number): string {
  const ordinal = n + 1;
  return `10.${pool.octet}.${Math.floor(ordinal / 256)}.${ordinal % 256}`;
}

/** An object this bench writes, before the API server has seen it. */
export interface BenchObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace: string; finalizers?: string[] };
  readonly spec: Record<string, unknown>;
}

export function poolObject(contender: Contender, namespace: string, pool: BenchPool): BenchObject {
  const kind = poolKindOf(contender);
  return {
    apiVersion: kind === 'InClusterIPPool' ? REFERENCE_POOL_API_VERSION : 'ipam.cluster.x-k8s.io/v1alpha1',
    kind,
    metadata: { name: pool.name, namespace },
    spec: { addresses: [poolCidr(pool)], prefix: 16 },
  };
}

export function claimObject(contender: Contender, namespace: string, name: string, pool: BenchPool): BenchObject {
  return {
    apiVersion: IPAM_API_VERSION,
    kind: 'IPAddressClaim',
    metadata: { name, namespace },
    spec: { clusterName: 'bench', poolRef: { apiGroup: GROUP, kind: poolKindOf(contender), name: pool.name } },
  };
}

/**
 * The claim's Ready condition as the contender's provider writes it: for Tally's shapes the very message Tally's
 * reconcile writes (else Tally rewrites the status of every prefilled claim, and those writes land in the figures).
 */
function readyCondition(
  contender: Contender,
  address: string,
  pool: BenchPool,
  claim: KubeObject,
): Record<string, unknown> {
  const ref = { kind: 'TallyIPPool' as const, name: pool.name, namespace: claim.metadata.namespace };
  const message =
    contender === 'reference'
      ? ''
      : `${address} allocated from ${describePool(ref)} (IPAddress ${claim.metadata.name})`;
  return {
    type: 'Ready',
    status: 'True',
    reason: 'AddressAllocated',
    message,
    lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    observedGeneration: 1,
  };
}

/** One ledger writer per client, as Tally has one per process: the holds in flight on one block share a write. */
const ledgerWriters = new WeakMap<Client, AddressLedgers>();

function ledgerWriterOf(client: Client): AddressLedgers {
  let writer = ledgerWriters.get(client);
  if (!writer) {
    writer = new AddressLedgers({ client, now: Date.now });
    ledgerWriters.set(client, writer);
  }
  return writer;
}

/**
 * Submits the hold of `address` for `claim` in the TallyAddressLedger of its block, in Tally's entry shape. Holds
 * submitted in one turn of the event loop go into one write.
 */
async function holdInLedger(client: Client, claim: KubeObject, pool: BenchPool, address: string): Promise<void> {
  const namespace = claim.metadata.namespace ?? '';
  const { name } = claim.metadata;
  const held = await ledgerWriterOf(client).hold(
    { address, prefix: 0, isPrefix: false, entryKey: addressEntryKey(address) },
    { apiGroup: TALLY_GROUP, kind: TALLY_IP_POOL_KIND, name: pool.name, namespace },
    { namespace, name, uid: claim.metadata.uid ?? '' },
    0,
  );
  if (!held.ok) {
    throw new Error(`${address} is held by ${held.holder.claimRef.namespace}/${held.holder.claimRef.name}`);
  }
}

/**
 * After the claim carries its finalizer and its address is held (where the shape holds): the IPAddress, then the
 * claim's status pointing at it.
 */
async function bind(
  client: Client,
  contender: Contender,
  claim: KubeObject,
  entry: { pool: BenchPool; object: KubeObject },
  address: string,
): Promise<void> {
  const shape = shapeOf(contender);
  const poolKind = poolKindOf(contender);
  const { pool } = entry;
  const namespace = claim.metadata.namespace ?? '';
  const { name } = claim.metadata;
  await client.create(ADDRESSES, {
    apiVersion: ADDRESSES.apiVersion,
    kind: ADDRESSES.kind,
    metadata: {
      name,
      namespace,
      finalizers: [shape.addressFinalizer],
      ownerReferences: [
        {
          apiVersion: IPAM_API_VERSION,
          kind: 'IPAddressClaim',
          name,
          uid: claim.metadata.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
        {
          apiVersion: entry.object.apiVersion,
          kind: poolKind,
          name: pool.name,
          uid: entry.object.metadata.uid ?? '',
          controller: false,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: { address, prefix: 16, poolRef: { apiGroup: GROUP, kind: poolKind, name: pool.name }, claimRef: { name } },
  });
  await client.patchStatus(CLAIMS, claim, {
    addressRef: { name: claim.metadata.name },
    conditions: [readyCondition(contender, address, pool, claim)],
  });
}

export interface RawWriterOptions {
  readonly kubeConfig: KubeConfig;
  readonly contender: Contender;
  readonly namespace: string;
  /** The pools as created (with uids), by name. */
  readonly pools: ReadonlyMap<string, { pool: BenchPool; object: KubeObject }>;
  /** Per pool, the index of the next address to hand out (after the prefill). */
  readonly nextIndex: Map<string, number>;
}

/**
 * A ceiling: `WORKERS` workers reacting to each new claim with the contender's writes and nothing else (no allocator,
 * no cache reads, no pool status).
 */
export function startRawWriter(options: RawWriterOptions, signal: AbortSignal): void {
  const { kubeConfig, contender, namespace, pools, nextIndex } = options;
  const shape = shapeOf(contender);
  const client = new Client(kubeConfig, { fieldManager: `bench-${contender}` });
  const queue: KubeObject[] = [];
  const cache = new Cache({ kubeConfig, logger: pino({ level: 'silent' }) });
  // Claims already bound (the prefill) are not the writer's to answer.
  const onAdd = (object: KubeObject): void => {
    if (!field(object, 'status', 'addressRef', 'name')) queue.push(object);
  };
  cache.addEventHandler(CLAIMS, { onAdd }, { namespace });
  // Nothing to do with them here; the informer is the point: its list and watch are what a provider pays for.
  if (contender === 'contract-watching') cache.addEventHandler(ADDRESSES, {}, { namespace });
  void cache.start(signal);
  const plan = new HoldAheadPlan({ limit: HOLD_AHEAD_LIMIT, lowWater: HOLD_AHEAD_LOW_WATER });
  /** The address of each claim held so far (by uid), answered once its ledger write is. */
  const holdings = new Map<string, Promise<string>>();
  const nextAddress = (entry: { pool: BenchPool }): string => {
    const index = nextIndex.get(entry.pool.name) ?? 0;
    nextIndex.set(entry.pool.name, index + 1);
    return nthAddress(entry.pool, index);
  };
  const poolOf = (claim: KubeObject): { pool: BenchPool; object: KubeObject } => {
    const poolName = String(field(claim, 'spec', 'poolRef', 'name'));
    const entry = pools.get(poolName);
    if (!entry) throw new Error(`claim ${claim.metadata.name}: no bench pool named "${poolName}"`);
    return entry;
  };
  /** Tally's holding ahead: every hold this worker makes is submitted in this one turn, so they share a write. */
  const addressOf = (claim: KubeObject, entry: { pool: BenchPool; object: KubeObject }): Promise<string> => {
    const uid = claim.metadata.uid ?? '';
    const waiting = queue.filter((other) => field(other, 'spec', 'poolRef', 'name') === entry.pool.name);
    const byUID = new Map(waiting.map((other) => [other.metadata.uid ?? '', other]));
    const decision = plan.serve(entry.pool.name, uid, [...byUID.keys()]);
    for (const heldUID of decision.hold) {
      const address = nextAddress(entry);
      const holder = heldUID === uid ? claim : byUID.get(heldUID);
      if (!holder) throw new Error(`hold ahead: claim uid ${heldUID} is not waiting`);
      holdings.set(
        heldUID,
        holdInLedger(client, holder, entry.pool, address).then(() => address),
      );
    }
    const own = holdings.get(uid);
    if (!own) throw new Error(`claim ${claim.metadata.name}: neither held ahead nor held now`);
    holdings.delete(uid);
    return own;
  };
  const work = async (claim: KubeObject): Promise<void> => {
    const entry = poolOf(claim);
    const patched = await client.mergePatch(
      CLAIMS,
      { namespace, name: claim.metadata.name },
      { metadata: { finalizers: [shape.claimFinalizer], resourceVersion: claim.metadata.resourceVersion } },
    );
    const address = shape.ledger ? await addressOf(patched, entry) : nextAddress(entry);
    await bind(client, contender, patched, entry, address);
  };
  for (let worker = 0; worker < WORKERS; worker += 1) {
    void (async () => {
      while (!signal.aborted) {
        const item = queue.shift();
        if (item) await work(item);
        else await delay(2);
      }
    })();
  }
}

/**
 * Writes `count` bound claims into `pool` in the contender's own shape (the claim created with its finalizer, then
 * ledger hold and IPAddress, then status), `concurrency` at a time: the state a provider would have left after allocating
 * them. Progress every 15 s.
 */
export async function prefill(
  options: RawWriterOptions & { readonly pool: string; readonly count: number },
  progress: (message: string) => void,
): Promise<void> {
  const { kubeConfig, contender, namespace, pools, count } = options;
  // The prefill's ledgers are written with this process's block size, which need not be the variant's or the baseline's.
  if (isBlockSizeVariant(contender) || contender === BASELINE_CONTENDER) {
    throw new Error(`prefill: contender ${contender} cannot start on a prefill`);
  }
  const entry = pools.get(options.pool);
  if (!entry) throw new Error(`prefill: no bench pool named "${options.pool}"`);
  const shape = shapeOf(contender);
  const client = new Client(kubeConfig, { fieldManager: `bench-prefill-${contender}` });
  const started = performance.now();
  let done = 0;
  const timer = setInterval(() => {
    progress(`prefill ${contender}: ${done} of ${count} (${((performance.now() - started) / 1000).toFixed(0)} s)`);
  }, 15_000);
  try {
    const indexes = Array.from({ length: count }, (_, index) => index);
    await forEachLimited(indexes, 40, async (index) => {
      const body = claimObject(contender, namespace, `prefill-${index}`, entry.pool);
      body.metadata.finalizers = [shape.claimFinalizer];
      const claim = await client.create(CLAIMS, body);
      const address = nthAddress(entry.pool, index);
      if (shape.ledger) await holdInLedger(client, claim, entry.pool, address);
      await bind(client, contender, claim, entry, address);
      done += 1;
    });
  } finally {
    clearInterval(timer);
  }
  options.nextIndex.set(options.pool, count);
  progress(`prefill ${contender}: ${count} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

/** A provider under test, running as a child process. */
export interface RunningProvider {
  readonly pid: number;
  /**
   * performance.now() when its caches had synced, both read the same way: when the line saying its controllers start
   * their workers reached this process (Tally: its first "starting workers", logged once every cache has synced;
   * reference: its last "Starting workers", one per controller as its own informers sync).
   */
  readonly syncedAt: number;
  /** Tally only: performance.now() when `/readyz` first answered 200 (later under the reconciles that follow sync). */
  readonly readyAt?: number;
  readonly startedAt: number;
  stop(): Promise<void>;
}

async function httpStatus(url: string): Promise<number> {
  return new Promise((resolve) => {
    get(url, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    }).on('error', () => resolve(0));
  });
}

async function startTally(entry: string, kubeconfigPath: string, namespace: string): Promise<RunningProvider> {
  const startedAt = performance.now();
  const controller: ControllerProcess = startController(
    [
      '--kubeconfig',
      kubeconfigPath,
      '--namespace',
      namespace,
      `--concurrency=${WORKERS}`,
      '--metrics-bind-address=127.0.0.1:0',
      '--health-probe-bind-address=127.0.0.1:0',
      '--webhook-port=0',
    ],
    process.env,
    entry,
  );
  // Read as the reference's line is: the moment the line arrives, not when a poll of the collected lines finds it.
  const WORKERS_LINE = '"msg":"starting workers"';
  let workersStartedAt: number | undefined;
  let previousTail = '';
  const onStdout = (chunk: string): void => {
    // The text may be cut between two chunks: the end of the previous one is searched with this one.
    const text = previousTail + chunk;
    previousTail = text.slice(-WORKERS_LINE.length);
    if (workersStartedAt === undefined && text.includes(WORKERS_LINE)) {
      workersStartedAt = performance.now();
      controller.child.stdout?.off('data', onStdout);
    }
  };
  controller.child.stdout?.on('data', onStdout);
  const port = await servingPort(controller, 'health probes');
  const metricsPort = await servingPort(controller, 'metrics');
  // Tally's readiness is "caches synced".
  const deadline = Date.now() + 600_000;
  while ((await httpStatus(`http://127.0.0.1:${port}/readyz`)) !== 200) {
    if (Date.now() > deadline) throw new Error('Tally: /readyz not 200 within 600 s');
    await delay(50);
  }
  const readyAt = performance.now();
  // /readyz says the caches synced, so the line has been written; it may still be in the pipe.
  await controller.waitForLine((line) => line.includes(WORKERS_LINE), '"starting workers" log line');
  return {
    pid: controller.pid,
    startedAt,
    syncedAt: workersStartedAt ?? readyAt,
    readyAt,
    stop: async () => {
      // TALLY_BENCH_METRICS_DIR: keep Tally's /metrics (work queues, reconciles, event loop) as it was at the end.
      const metricsDir = process.env.TALLY_BENCH_METRICS_DIR;
      if (metricsDir) {
        const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
        writeFileSync(join(metricsDir, `tally-${controller.pid}.prom`), text);
      }
      await controller.stop('SIGTERM');
    },
  };
}

async function startReference(binary: string, kubeconfigPath: string, namespace: string): Promise<RunningProvider> {
  const startedAt = performance.now();
  const reference = startReferenceProvider({ binary, kubeconfigPath, namespace });
  const syncedAt = await Promise.race([
    reference.synced,
    delay(600_000).then(() => {
      throw new Error(`reference provider: not synced within 600 s:\n${reference.tail()}`);
    }),
  ]);
  return { pid: reference.pid, startedAt, syncedAt, stop: () => reference.stop() };
}

/**
 * `binaries.tally`: the JS entry this Tally contender runs from (a variant's own bundle for a variant);
 * `binaries.reference`: the reference provider's binary.
 */
export function startProvider(
  contender: Contender,
  binaries: { readonly tally: string; readonly reference: string },
  kubeconfigPath: string,
  namespace: string,
): Promise<RunningProvider> {
  if (contender === 'reference') return startReference(binaries.reference, kubeconfigPath, namespace);
  if (contender !== 'tally' && contender !== BASELINE_CONTENDER && !isBlockSizeVariant(contender)) {
    throw new Error(`startProvider: contender ${contender} is a raw writer, not a provider`);
  }
  return startTally(binaries.tally, kubeconfigPath, namespace);
}

function procStatus(pid: number, field: 'VmHWM' | 'VmRSS'): number | undefined {
  try {
    const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Resident set size now, MiB. */
export function rssMiB(pid: number): number | undefined {
  return procStatus(pid, 'VmRSS');
}

/** Peak resident set size (VmHWM), MiB. */
export function peakRssMiB(pid: number): number | undefined {
  return procStatus(pid, 'VmHWM');
}

/**
 * Waits until the process has used under 5 % of one core for 3 s in a row: its start-up reconciles are done, so the
 * next measurement sees only its reaction to the new claims. Returns how long that took, in ms, or `undefined` if the
 * process was still busy after `limitMs` (the reference's start-up over tens of thousands of claims can take longer
 * than a benchmark can wait; the caller says what that means for its figure).
 */
export async function waitSettled(pid: number, limitMs: number): Promise<number | undefined> {
  const started = performance.now();
  // V8's sampling profiler (TALLY_CONTROLLER_CPU_PROF_DIR) alone keeps an idle Node process at ~7 % of a core.
  const quietCpuPerSecond = process.env.TALLY_CONTROLLER_CPU_PROF_DIR ? 0.1 : 0.05;
  let quietWindows = 0;
  let last = processCpuSeconds(pid);
  let lastProgress = started;
  while (quietWindows < 3) {
    if (performance.now() - started > limitMs) return undefined;
    await delay(1_000);
    const now = processCpuSeconds(pid);
    quietWindows = now - last < quietCpuPerSecond ? quietWindows + 1 : 0;
    last = now;
    if (performance.now() - lastProgress >= 60_000) {
      lastProgress = performance.now();
      console.log(
        `    pid ${pid} still busy ${((lastProgress - started) / 1000).toFixed(0)} s after start (${now.toFixed(0)} CPU s so far)`,
      );
    }
  }
  return performance.now() - started;
}
