/**
 * Side-by-side benchmark: Tally, the reference in-cluster provider, and three raw-client ceilings (Tally's writes; the
 * contract's minimum; the same by a client that also watches IPAddresses, as a provider must), each measured on a
 * fresh local control plane, in interleaved rounds, with the load average printed beside every figure and the ratios
 * at the end.
 *
 * Scenarios (`--scenario`, comma-separated, default all):
 *   burst       `--claims` claims (default 2 000) created at once in one pool;
 *   full-pool   the same burst into a pool already holding `--prefill` addresses (default 20 000);
 *   many-pools  `--pools` pools (default 20) × `--claims-per-pool` claims (default 200) created at once;
 *   steady      `--steady-claims` claims (default 1 000) at a steady `--rates` claims/s (default 50,100): p50/p99;
 *   memory      start-to-synced time and RSS of the providers over `--objects` allocations (default 50 000).
 * `--rounds` (default 2) interleaves the contenders round by round; `--contenders` picks them (opt-in beside the
 * default five: `tally-64`, `tally-32`, `tally-16`, Tally built with smaller ledger blocks, in the scenarios without a
 * prefill). `--split-cores=on` puts the control plane on cores of its own and every contender on the last core.
 * Claim → bound is measured the same way for all (create sent → watch event showing `status.addressRef`); API requests
 * come from the API server's own `apiserver_request_total`.
 *
 * Usage: pnpm --filter @tally-ipam/ipam-controller bench -- [flags]
 * Smoke: pnpm --filter @tally-ipam/ipam-controller bench -- --scenario=burst --claims=50 --rounds=1
 */

import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { tallyCRDDirectory } from '@tally-ipam/api-types';
import { Client, type KubeObject, type ResourceKind } from '@tally-ipam/controller-kit';
import { processCpuSeconds, startControlPlane } from '@tally-ipam/testenv';
import { z } from 'zod';
import { MAIN_JS } from '../test/controller-process.js';
import { CLUSTERS, cluster } from '../test/support.js';
import { README_PATH, type ScenarioRow, writeReadmeTable } from './readme-table.js';

const APP_DIR = fileURLToPath(new URL('..', import.meta.url));
const BUNDLE_SCRIPT = fileURLToPath(new URL('../../../tools/ship/image/bundle.sh', import.meta.url));

import {
  apiRequests,
  difference,
  mutatingRequests,
  type RequestCounts,
  totalRequests,
  writesTo,
} from './api-requests.js';
import {
  BLOCK_SIZE_VARIANTS,
  type BlockSizeVariant,
  isBlockSizeVariant,
  PREFILLED_SCENARIOS,
  refusePrefilledVariants,
  writeVariantBundles,
} from './block-size-variants.js';
import {
  ALL_CONTENDERS,
  BASELINE_CONTENDER,
  type BenchPool,
  CONTENDERS,
  type Contender,
  claimObject,
  PROVIDERS,
  peakRssMiB,
  poolKindOf,
  poolObject,
  prefill,
  type RunningProvider,
  rssMiB,
  startProvider,
  startRawWriter,
  WORKERS,
  waitSettled,
} from './contenders.js';
import { createClaims, percentile, watchBinds } from './load.js';
import { ensureReferenceProvider, type ReferenceProviderBinary } from './reference-provider.js';

const SCENARIOS = ['burst', 'full-pool', 'many-pools', 'steady', 'memory'] as const;
const NAMESPACES: ResourceKind = { apiVersion: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false };
const NAMESPACE = 'bench';

const count = (fallback: number) => z.coerce.number().int().positive().max(1_000_000).default(fallback);
const flagsSchema = z.object({
  scenario: z
    .string()
    .default(SCENARIOS.join(','))
    .transform((text) => text.split(','))
    .pipe(z.array(z.enum(SCENARIOS)).min(1)),
  contenders: z
    .string()
    .default(CONTENDERS.join(','))
    .transform((text) => text.split(','))
    .pipe(z.array(z.enum(ALL_CONTENDERS)).min(1)),
  rounds: count(2),
  claims: count(2_000),
  prefill: count(20_000),
  pools: count(20).pipe(z.number().max(200)),
  'claims-per-pool': count(200),
  'steady-claims': count(1_000),
  rates: z
    .string()
    .default('50,100')
    .transform((text) => text.split(',').map(Number))
    .pipe(z.array(z.number().positive().max(10_000)).min(1)),
  objects: count(50_000).pipe(z.number().max(65_000)),
  tally: z.enum(['bundle', 'dist']).default('bundle'),
  /** How long a provider may take to settle its start-up work over pre-existing allocations, in seconds. */
  'settle-limit': count(1_800).pipe(z.number().max(14_400)),
  /**
   * `memory`: how long a settled provider is left idle before its RSS is read again, in seconds. A runtime gives
   * memory back on its own schedule: over 50,000 claims V8's memory reducer ran its full GCs 90–116 s after Tally's
   * start in two traced runs of 2026-11-26 (30–60 s after it went quiet in earlier rounds, whose starts ran more full GCs
   * of their own). 150 s reads RSS after it.
   */
  'idle-window': count(150).pipe(z.number().max(3_600)),
  /**
   * `memory`: after the measured start, how many more times each provider is stopped and started again on the same
   * control plane (0: none). Starts over the same objects are cheap samples of start → synced, which varies 8–24 s
   * between single starts on two shared cores.
   */
  restarts: z.coerce.number().int().min(0).max(50).default(0),
  /**
   * `memory` with `--restarts`: a second Tally entry (e.g. the bundle of an earlier commit) started in turn with the
   * current one on the same control plane, so a change to start-up is measured against its baseline in one run.
   */
  /**
   * `on`: the control plane's processes run on every core but the last, this process and every provider it starts on
   * the last one, as in a management cluster where the API server runs on control-plane nodes and the controller on a
   * worker. Every contender is measured the same way: the raw writers run in this process, on the controller's core.
   */
  'split-cores': z.enum(['on', 'off']).default('off'),
  /**
   * `on`: the medians of the scenarios run are written into the app's README, between its `bench:claims` markers
   * (their rows replaced, the other scenarios' kept). Off by default, so that a smoke run never replaces the figures.
   */
  readme: z.enum(['on', 'off']).default('off'),
  'tally-baseline': z
    .string()
    .min(1)
    .max(4_096)
    .refine((path) => existsSync(path), 'no such file')
    .optional(),
});
type Flags = z.infer<typeof flagsSchema>;

function parseFlags(): Flags {
  const { values } = parseArgs({
    // `pnpm … bench -- --flag` passes the `--` through.
    args: process.argv.slice(2).filter((arg) => arg !== '--'),
    options: Object.fromEntries(Object.keys(flagsSchema.shape).map((name) => [name, { type: 'string' as const }])),
  });
  const parsed = flagsSchema.safeParse(values);
  if (!parsed.success) {
    throw new Error(
      `bench flags: ${parsed.error.issues.map((issue) => `--${issue.path.join('.')}: ${issue.message}`).join('; ')}`,
    );
  }
  return parsed.data;
}

function load(): string {
  return loadavg()
    .map((value) => value.toFixed(1))
    .join(' ');
}

/** One measurement of one contender. */
interface Figure {
  readonly contender: Contender;
  readonly round: number;
  /** The figure ratios are taken of (claims/s, or p99 ms for steady, or MiB / s for memory). */
  readonly value: number;
  readonly line: string;
  /** All requests that change state, per claim (the claim's create included). */
  readonly writesPerClaim?: number | undefined;
  /** Writes of TallyAddressLedgers per claim (failed ones included). */
  readonly ledgerWritesPerClaim?: number | undefined;
  /** kube-apiserver CPU ms per claim while the claims were bound. */
  readonly apiServerCpuMsPerClaim?: number | undefined;
}

interface Run {
  readonly flags: Flags;
  readonly reference: ReferenceProviderBinary | undefined;
  /** What the `tally` contender runs: the production bundle (`--tally=bundle`) or `dist/main.js`. */
  readonly tallyEntry: string;
  /** What each block-size variant asked for runs: a patched copy of the production bundle. */
  readonly variantEntries: ReadonlyMap<BlockSizeVariant, string>;
  /** The medians of each scenario run, for the README's table (`--readme=on`). */
  readonly rows: ScenarioRow[];
}

function binariesOf(run: Run, contender: Contender): { readonly tally: string; readonly reference: string } {
  const reference = run.reference?.path ?? '';
  if (contender === BASELINE_CONTENDER) {
    const baseline = run.flags['tally-baseline'];
    if (!baseline) throw new Error(`contender ${BASELINE_CONTENDER} needs --tally-baseline=<bundle or main.js>`);
    return { tally: baseline, reference };
  }
  const variant = isBlockSizeVariant(contender) ? run.variantEntries.get(contender) : undefined;
  if (isBlockSizeVariant(contender) && variant === undefined) throw new Error(`${contender}: no bundle was built`);
  return { tally: variant ?? run.tallyEntry, reference };
}

/**
 * The production bundle, as the image holds it (`tools/ship/image/bundle.sh`: one esbuild file of `dist/main.js`):
 * the reference runs as its release binary, so Tally runs as what users run too. Its memory differs from `dist/main.js`
 * by tens of MiB (idle RSS ~90 against ~150 MiB: unbundled, `@kubernetes/client-node` loads every module it has).
 */
function bundleTally(): string {
  const out = join(mkdtempSync(join(tmpdir(), 'tally-bench-bundle-')), 'main.mjs');
  execFileSync('bash', [BUNDLE_SCRIPT, APP_DIR, out], { stdio: ['ignore', 'inherit', 'inherit'] });
  return out;
}

type Plane = Awaited<ReturnType<typeof startControlPlane>>;

/** A fresh control plane with Tally's CRDs, the reference's pool CRDs and CAPI's IPAM and core CRDs. */
async function withControlPlane<T>(
  run: Run,
  work: (kubeconfigPath: string, client: Client, plane: Plane) => Promise<T>,
): Promise<T> {
  const plane = await startControlPlane({
    ignoreTestKubeconfig: true,
    crds: [tallyCRDDirectory(), ...(run.reference ? [run.reference.crdDir] : [])],
    capiCRDs: ['ipam.cluster.x-k8s.io', 'cluster.x-k8s.io'],
  });
  // Pinned once the plane runs (it starts with every core, as the Go runtime sizes itself then); the providers this
  // process starts inside `work` inherit its core.
  if (run.flags['split-cores'] === 'on') {
    for (const pid of Object.values(plane.processIds())) pinToCores(pid, CORES.controlPlane);
    pinToCores(process.pid, CORES.controller);
  }
  try {
    const client = new Client(plane.kubeConfig(), { fieldManager: 'bench' });
    await client.create(NAMESPACES, { metadata: { name: NAMESPACE } });
    await client.create(CLUSTERS, cluster(NAMESPACE, 'bench'));
    return await work(plane.kubeconfigPath, client, plane);
  } finally {
    if (run.flags['split-cores'] === 'on') pinToCores(process.pid, CORES.all);
    await plane.stop();
  }
}

/** Core lists for `--split-cores` (taskset's syntax): the control plane's, the controller's, and all of them. */
const CORES = {
  controlPlane: availableParallelism() > 1 ? `0-${availableParallelism() - 2}` : '0',
  controller: String(availableParallelism() - 1),
  all: `0-${availableParallelism() - 1}`,
} as const;

/** Every thread of a process onto these cores; threads it starts later inherit them. */
function pinToCores(pid: number, cores: string): void {
  execFileSync('taskset', ['--all-tasks', '--pid', '--cpu-list', cores, String(pid)], { stdio: 'ignore' });
}

async function createPools(
  client: Client,
  contender: Contender,
  pools: readonly BenchPool[],
): Promise<Map<string, { pool: BenchPool; object: KubeObject }>> {
  const created = new Map<string, { pool: BenchPool; object: KubeObject }>();
  const kind = poolKindOf(contender);
  const resource: ResourceKind = {
    apiVersion: kind === 'InClusterIPPool' ? 'ipam.cluster.x-k8s.io/v1alpha2' : 'ipam.cluster.x-k8s.io/v1alpha1',
    kind,
    plural: kind === 'InClusterIPPool' ? 'inclusterippools' : 'tallyippools',
    namespaced: true,
  };
  for (const pool of pools) {
    created.set(pool.name, { pool, object: await client.create(resource, poolObject(contender, NAMESPACE, pool)) });
  }
  return created;
}

interface LoadFigures {
  readonly claims: number;
  readonly seconds: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly requests: RequestCounts;
  readonly peakRss: number | undefined;
  readonly settleMs: number | undefined;
  /** CPU seconds spent while the claims were bound, by process (`bench` is this process: creates, watch, raw writer). */
  readonly cpu: ReadonlyMap<string, number>;
}

/**
 * CPU seconds used so far by the control plane's processes, the provider and this process: where a contender's cost
 * lands, beside the requests it makes (on two shared cores, the API server's CPU is what the contenders compete for).
 */
function cpuByProcess(processIds: Record<string, number>, provider: RunningProvider | undefined): Map<string, number> {
  const cpu = new Map<string, number>();
  for (const [name, pid] of Object.entries(processIds)) cpu.set(name, processCpuSeconds(pid));
  if (provider) cpu.set('provider', processCpuSeconds(provider.pid));
  const own = process.cpuUsage();
  cpu.set('bench', (own.user + own.system) / 1e6);
  return cpu;
}

/**
 * A provider started until synced, with what its start cost the machine: CPU seconds of each process (the provider's
 * all its own) and the API server's write requests meanwhile (a start that repairs or adopts writes; one that only
 * reads writes nothing).
 */
async function startMeasured(
  contender: Contender,
  binaries: { readonly tally: string; readonly reference: string },
  plane: Plane,
): Promise<{ provider: RunningProvider; cost: string }> {
  const kubeConfig = plane.kubeConfig();
  const before = await apiRequests(kubeConfig);
  const cpuBefore = cpuByProcess(plane.processIds(), undefined);
  const provider = await startProvider(contender, binaries, plane.kubeconfigPath, NAMESPACE);
  const cpuAfter = cpuByProcess(plane.processIds(), provider);
  const after = await apiRequests(kubeConfig);
  // The API server's share swings with its GC cycles (~10 CPU s each over a 50,000-claim plane), so the cycles that
  // ended inside the window are printed beside it. Go counts a cycle's CPU when the cycle ends: one still running at
  // synced is not in the figure.
  const gcCycles = after.gc.cycles - before.gc.cycles;
  const gcNote = ` (GC cycles ended meanwhile: ${gcCycles}, ${(after.gc.cpuSeconds - before.gc.cpuSeconds).toFixed(1)} CPU s)`;
  const cpu = [...cpuAfter]
    .map(
      ([name, seconds]) =>
        `${name} ${(seconds - (cpuBefore.get(name) ?? 0)).toFixed(1)}${name === 'kube-apiserver' ? gcNote : ''}`,
    )
    .join(', ');
  const writes = mutatingRequests(new Map(Object.entries(difference(after.byVerb, before.byVerb))));
  return { provider, cost: `CPU s to sync: ${cpu}; ${writes} writes` };
}

/**
 * One run of one contender on a fresh control plane: pools, optional prefill, the contender started (a provider is
 * left to settle its start-up work first), then the claims, until all are bound.
 */
async function loadRun(
  run: Run,
  contender: Contender,
  pools: readonly BenchPool[],
  options: { prefill: number; claimsPerPool: number; ratePerSecond?: number },
): Promise<LoadFigures> {
  return withControlPlane(run, async (kubeconfigPath, client, plane) => {
    const kubeConfig = plane.kubeConfig();
    const created = await createPools(client, contender, pools);
    const nextIndex = new Map<string, number>();
    const writer = { kubeConfig, contender, namespace: NAMESPACE, pools: created, nextIndex };
    if (options.prefill > 0) {
      await prefill({ ...writer, pool: pools[0]?.name ?? '', count: options.prefill }, (line) =>
        console.log(`    ${line}`),
      );
    }
    const stop = new AbortController();
    let provider: RunningProvider | undefined;
    let settleMs: number | undefined;
    try {
      if (PROVIDERS.includes(contender)) {
        provider = await startProvider(contender, binariesOf(run, contender), kubeconfigPath, NAMESPACE);
        const limitS = run.flags['settle-limit'];
        settleMs = await waitSettled(provider.pid, limitS * 1000);
        // Claims sent while it still works through what was there would measure both at once.
        if (settleMs === undefined) {
          throw new Error(
            `${contender} was still busy with the pre-existing allocations after ${limitS} s (--settle-limit)`,
          );
        }
      } else {
        startRawWriter(writer, stop.signal);
      }
      const names = pools.flatMap((_, poolIndex) =>
        Array.from({ length: options.claimsPerPool }, (_unused, index) => ({
          name: `claim-${poolIndex}-${index}`,
          pool: pools[poolIndex] as BenchPool,
        })),
      );
      // Interleaved across pools, so "at once" means every pool at once.
      names.sort((a, b) => Number(a.name.split('-')[2]) - Number(b.name.split('-')[2]));
      const bound = watchBinds(kubeConfig, NAMESPACE, stop.signal);
      const before = await apiRequests(kubeConfig);
      const cpuBefore = cpuByProcess(plane.processIds(), provider);
      const sent = await createClaims(
        client,
        names.map(({ name, pool }) => claimObject(contender, NAMESPACE, name, pool)),
        options.ratePerSecond,
      );
      const wanted = new Set(names.map(({ name }) => name));
      await bound.waitFor(wanted, 1_800_000);
      const cpuAfter = cpuByProcess(plane.processIds(), provider);
      const after = await apiRequests(kubeConfig);
      const latencies = names
        .map(({ name }) => (bound.at.get(name) ?? Number.NaN) - (sent.get(name) ?? 0))
        .sort((a, b) => a - b);
      const first = Math.min(...sent.values());
      const last = Math.max(...names.map(({ name }) => bound.at.get(name) ?? 0));
      return {
        claims: names.length,
        seconds: (last - first) / 1000,
        p50Ms: percentile(latencies, 0.5),
        p99Ms: percentile(latencies, 0.99),
        requests: {
          byVerb: new Map(Object.entries(difference(after.byVerb, before.byVerb))),
          byTarget: new Map(Object.entries(difference(after.byTarget, before.byTarget))),
        },
        peakRss: provider ? peakRssMiB(provider.pid) : undefined,
        settleMs,
        cpu: new Map([...cpuAfter].map(([name, seconds]) => [name, seconds - (cpuBefore.get(name) ?? 0)])),
      };
    } finally {
      stop.abort();
      await provider?.stop();
    }
  });
}

function ledgerWrites(byTarget: ReadonlyMap<string, number>): number {
  return [...writesTo(byTarget, 'tallyaddressledgers').values()].reduce((sum, value) => sum + value, 0);
}

/** TallyAddressLedger writes per claim, with their count by verb: the budget is 0.1 beyond the contract's. */
function ledgerSummary(byTarget: ReadonlyMap<string, number>, claims: number): string {
  const writes = writesTo(byTarget, 'tallyaddressledgers');
  const total = ledgerWrites(byTarget);
  const verbs = [...writes].map(([verb, value]) => `${verb} ${value}`).join(', ');
  return `${(total / claims).toFixed(3)}${verbs ? ` (${verbs})` : ''}`;
}

function describeLoad(contender: Contender, round: number, figures: LoadFigures, loadBefore: string): string {
  const perClaim = (value: number): string => (value / figures.claims).toFixed(2);
  const writes = mutatingRequests(figures.requests.byVerb);
  const targets = [...figures.requests.byTarget]
    .filter(([, value]) => value / figures.claims >= 0.02)
    .sort(([, a], [, b]) => b - a)
    .map(([key, value]) => `${key} ${perClaim(value)}`)
    .join(', ');
  return [
    `  round ${round} ${contender.padEnd(16)} ${(figures.claims / figures.seconds).toFixed(1).padStart(7)} claims/s ` +
      `(${figures.claims} in ${figures.seconds.toFixed(1)} s), p50 ${figures.p50Ms.toFixed(0)} ms, ` +
      `p99 ${figures.p99Ms.toFixed(0)} ms | load ${loadBefore} → ${load()}`,
    `      requests per claim ${perClaim(totalRequests(figures.requests.byVerb))}, writes ${perClaim(writes)} ` +
      `(the claim's create included; the contract's minimum is 4)` +
      (figures.peakRss !== undefined ? `, peak RSS ${figures.peakRss.toFixed(0)} MiB` : '') +
      (figures.settleMs !== undefined ? `, settled ${(figures.settleMs / 1000).toFixed(1)} s after sync` : ''),
    `      by target (≥ 0.02 per claim): ${targets}`,
    `      ledger writes per claim ${ledgerSummary(figures.requests.byTarget, figures.claims)}`,
    `      CPU ms per claim: ${[...figures.cpu]
      .filter(([, seconds]) => seconds > 0)
      .map(([name, seconds]) => `${name} ${((seconds * 1000) / figures.claims).toFixed(2)}`)
      .join(', ')}`,
  ].join('\n');
}

async function loadScenario(
  run: Run,
  title: string,
  pools: readonly BenchPool[],
  options: { prefill: number; claimsPerPool: number; ratePerSecond?: number },
  value: (figures: LoadFigures) => number,
): Promise<Figure[]> {
  console.log(`\n== ${title}`);
  const figures: Figure[] = [];
  for (let round = 1; round <= run.flags.rounds; round += 1) {
    // Interleaved: every contender once per round, the order rotated so none always runs first.
    const order = run.flags.contenders.map(
      (_, index) => run.flags.contenders[(index + round - 1) % run.flags.contenders.length] as Contender,
    );
    for (const contender of order) {
      const loadBefore = load();
      const result = await loadRun(run, contender, pools, options);
      const line = describeLoad(contender, round, result, loadBefore);
      console.log(line);
      const writesPerClaim = mutatingRequests(result.requests.byVerb) / result.claims;
      const ledgerWritesPerClaim = ledgerWrites(result.requests.byTarget) / result.claims;
      const apiServerCpu = result.cpu.get('kube-apiserver');
      const apiServerCpuMsPerClaim = apiServerCpu === undefined ? undefined : (apiServerCpu * 1000) / result.claims;
      figures.push({
        contender,
        round,
        value: value(result),
        line,
        writesPerClaim,
        ledgerWritesPerClaim,
        apiServerCpuMsPerClaim,
      });
    }
  }
  return figures;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] ?? Number.NaN) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

/**
 * Ratios of the medians over the rounds: Tally against each other contender (and the reference to the minimum).
 * Returns the medians as the README table's row.
 */
function printRatios(title: string, figures: readonly Figure[], unit: string, higherIsBetter: boolean): ScenarioRow {
  const medianOf = (pick: (figure: Figure) => number | undefined): Map<Contender, number> => {
    const medians = new Map<Contender, number>();
    for (const contender of ALL_CONTENDERS) {
      const values = figures.flatMap((figure) => {
        const value = figure.contender === contender ? pick(figure) : undefined;
        return value === undefined ? [] : [value];
      });
      if (values.length > 0) medians.set(contender, median(values));
    }
    return medians;
  };
  const medians = medianOf((figure) => figure.value);
  const tallyWrites = figures.flatMap((figure) =>
    figure.contender === 'tally' && figure.writesPerClaim !== undefined ? [figure.writesPerClaim] : [],
  );
  const parts = [...medians].map(([contender, value]) => `${contender} ${value.toFixed(1)} ${unit}`);
  console.log(`  ${title}, median over rounds: ${parts.join(', ')}`);
  const perClaim = (label: string, values: Map<Contender, number>, decimals: number): void => {
    const listed = [...values].map(([contender, value]) => `${contender} ${value.toFixed(decimals)}`);
    if (listed.length > 0) console.log(`  ${label} (median over rounds): ${listed.join(', ')}`);
  };
  perClaim(
    'ledger writes per claim',
    medianOf((figure) => figure.ledgerWritesPerClaim),
    3,
  );
  perClaim(
    'kube-apiserver CPU ms per claim',
    medianOf((figure) => figure.apiServerCpuMsPerClaim),
    2,
  );
  const pairs: [Contender, Contender][] = [
    ['tally', 'reference'],
    ['tally', 'tally-writes'],
    ['tally', 'contract-minimum'],
    ['tally', 'contract-watching'],
    ['reference', 'contract-minimum'],
    ['tally-writes', 'contract-minimum'],
    ['contract-watching', 'contract-minimum'],
    ...BLOCK_SIZE_VARIANTS.flatMap((variant): [Contender, Contender][] => [
      [variant, 'contract-minimum'],
      [variant, 'tally'],
    ]),
    ['tally', BASELINE_CONTENDER],
    [BASELINE_CONTENDER, 'reference'],
    [BASELINE_CONTENDER, 'contract-minimum'],
  ];
  const ratios = pairs.flatMap(([a, b]) => {
    const x = medians.get(a);
    const y = medians.get(b);
    if (x === undefined || y === undefined) return [];
    return [`${a} / ${b} ${(higherIsBetter ? x / y : y / x).toFixed(2)}×`];
  });
  if (ratios.length > 0) console.log(`  ratios (> 1: the first is better): ${ratios.join(', ')}`);
  return {
    scenario: `${title} (${unit})`,
    medians,
    tallyWritesPerClaim: tallyWrites.length > 0 ? median(tallyWrites) : undefined,
  };
}

/**
 * `--restarts` more starts of a provider over the objects already in the cluster, alternating with the
 * `--tally-baseline` entry when given; prints each start and the medians (and their ratio to the baseline).
 */
async function restartSamples(run: Run, contender: Contender, plane: Plane): Promise<number[]> {
  const baseline = contender === 'tally' ? run.flags['tally-baseline'] : undefined;
  const entries = [
    { label: contender, binaries: binariesOf(run, contender) },
    ...(baseline ? [{ label: 'baseline', binaries: { ...binariesOf(run, contender), tally: baseline } }] : []),
  ];
  const synced = new Map<string, number[]>(entries.map((entry) => [entry.label, []]));
  for (let restart = 1; restart <= run.flags.restarts; restart += 1) {
    for (const entry of restart % 2 ? entries : [...entries].reverse()) {
      const loadAtStart = load();
      const { provider, cost } = await startMeasured(contender, entry.binaries, plane);
      try {
        const syncedS = (provider.syncedAt - provider.startedAt) / 1000;
        synced.get(entry.label)?.push(syncedS);
        console.log(
          `    restart ${restart} ${entry.label.padEnd(10)} start → synced ${syncedS.toFixed(1)} s ` +
            `(load ${loadAtStart}), RSS at sync ${(rssMiB(provider.pid) ?? Number.NaN).toFixed(0)} MiB | ${cost}`,
        );
      } finally {
        await provider.stop();
      }
    }
  }
  const medians = entries.map((entry) => ({ label: entry.label, median: median(synced.get(entry.label) ?? []) }));
  const [current, base] = medians;
  console.log(
    `  ${contender} over ${run.flags.restarts} restarts: median start → synced ` +
      medians.map((m) => `${m.label} ${m.median.toFixed(1)} s`).join(', ') +
      (current && base ? `; ${current.label} / baseline ${(current.median / base.median).toFixed(2)}×` : ''),
  );
  return synced.get(contender) ?? [];
}

/** Start-to-synced time and memory of the providers over `objects` allocations already in the cluster. */
async function memoryScenario(run: Run): Promise<ScenarioRow[]> {
  const { objects } = run.flags;
  console.log(`\n== memory: start → synced and RSS over ${objects} bound claims with their IPAddresses`);
  const providers = run.flags.contenders.filter((contender) => PROVIDERS.includes(contender));
  // Start → synced of every start (the first and any `--restarts`); RSS at rest of the first, the current bundle's
  // only (with `--tally-baseline`, even rounds start the baseline first).
  const figures: { contender: Contender; syncedS: number[]; idleMiB: number | undefined }[] = [];
  const currentFirstStarts: number[] = [];
  const baselineFirstStarts: number[] = [];
  for (let round = 1; round <= run.flags.rounds; round += 1) {
    for (const contender of round % 2 ? providers : [...providers].reverse()) {
      const loadBefore = load();
      const pool: BenchPool = { name: 'big', octet: 1 };
      await withControlPlane(run, async (_kubeconfigPath, client, plane) => {
        const created = await createPools(client, contender, [pool]);
        await prefill(
          {
            kubeConfig: plane.kubeConfig(),
            contender,
            namespace: NAMESPACE,
            pools: created,
            nextIndex: new Map(),
            pool: pool.name,
            count: objects,
          },
          (line) => console.log(`    ${line}`),
        );
        const loadAtStart = load();
        let figure: (typeof figures)[number] | undefined;
        // With a baseline, the first start after the prefill (right after the API server took the prefill's writes)
        // alternates between the two bundles round by round, as the restarts do.
        const baseline = contender === 'tally' ? run.flags['tally-baseline'] : undefined;
        const baselineFirst = baseline !== undefined && round % 2 === 0;
        const label = baselineFirst ? 'baseline' : contender;
        const binaries = baselineFirst
          ? { ...binariesOf(run, contender), tally: baseline }
          : binariesOf(run, contender);
        const { provider, cost } = await startMeasured(contender, binaries, plane);
        try {
          const syncedS = (provider.syncedAt - provider.startedAt) / 1000;
          const readyS = provider.readyAt === undefined ? undefined : (provider.readyAt - provider.startedAt) / 1000;
          const syncedMiB = rssMiB(provider.pid) ?? Number.NaN;
          const limitS = run.flags['settle-limit'];
          const settleMs = await waitSettled(provider.pid, limitS * 1000);
          const settledMiB = rssMiB(provider.pid) ?? Number.NaN;
          let idleMiB = settledMiB;
          let settled = `still busy ${limitS} s later (--settle-limit) at ${settledMiB.toFixed(0)} MiB`;
          if (settleMs !== undefined) {
            const windowS = run.flags['idle-window'];
            await delay(windowS * 1000);
            idleMiB = rssMiB(provider.pid) ?? Number.NaN;
            settled =
              `settled ${(settleMs / 1000).toFixed(1)} s later at ${settledMiB.toFixed(0)} MiB, ` +
              `${idleMiB.toFixed(0)} MiB after ${windowS} s idle`;
          }
          const peak = peakRssMiB(provider.pid) ?? Number.NaN;
          console.log(
            `  round ${round} ${label.padEnd(10)} start → synced ${syncedS.toFixed(1)} s` +
              `${readyS === undefined ? '' : ` (/readyz 200 after ${readyS.toFixed(1)} s)`} (load ${loadAtStart}), ` +
              `RSS at sync ${syncedMiB.toFixed(0)} MiB, ${settled}, peak ${peak.toFixed(0)} MiB | ` +
              `load ${loadBefore} → ${load()} | ${cost}`,
          );
          figure = baselineFirst
            ? { contender, syncedS: [], idleMiB: undefined }
            : { contender, syncedS: [syncedS], idleMiB };
          figures.push(figure);
          if (baselineFirst) baselineFirstStarts.push(syncedS);
          else if (baseline !== undefined) currentFirstStarts.push(syncedS);
        } finally {
          await provider.stop();
        }
        if (run.flags.restarts > 0) figure?.syncedS.push(...(await restartSamples(run, contender, plane)));
      });
    }
  }
  if (currentFirstStarts.length > 0 && baselineFirstStarts.length > 0) {
    const ratio = median(currentFirstStarts) / median(baselineFirstStarts);
    console.log(
      `  first starts after the prefill: tally ${currentFirstStarts.map((s) => s.toFixed(1)).join(', ')} s, ` +
        `baseline ${baselineFirstStarts.map((s) => s.toFixed(1)).join(', ')} s; tally / baseline ${ratio.toFixed(2)}×`,
    );
  }
  const tally = figures.filter((figure) => figure.contender === 'tally');
  const reference = figures.filter((figure) => figure.contender === 'reference');
  if (tally.length > 0 && reference.length > 0) {
    const atRest = (list: typeof figures): number[] =>
      list.flatMap((f) => (f.idleMiB === undefined ? [] : [f.idleMiB]));
    const memory = median(atRest(tally)) / median(atRest(reference));
    const sync = median(tally.flatMap((f) => f.syncedS)) / median(reference.flatMap((f) => f.syncedS));
    console.log(
      `  tally / reference (medians): RSS at rest ${memory.toFixed(2)}× (target ≤ 0.50), ` +
        `start → synced ${sync.toFixed(2)}× over every start (target ≤ 1.00)`,
    );
  }
  const rows: ScenarioRow[] = [];
  const medianOf = (values: readonly number[]): number | undefined => (values.length > 0 ? median(values) : undefined);
  const byContender = (pick: (figure: (typeof figures)[number]) => number[]): Map<Contender, number> =>
    new Map(
      providers.flatMap((contender) => {
        const value = medianOf(figures.filter((figure) => figure.contender === contender).flatMap(pick));
        return value === undefined ? [] : [[contender, value] as const];
      }),
    );
  rows.push({
    scenario: `memory, ${objects} bound claims: start → synced (s)`,
    medians: byContender((figure) => figure.syncedS),
  });
  rows.push({
    scenario: `memory, ${objects} bound claims: RSS at rest (MiB)`,
    medians: byContender((figure) => (figure.idleMiB === undefined ? [] : [figure.idleMiB])),
    decimals: 0,
  });
  return rows;
}

async function main(): Promise<void> {
  const flags = parseFlags();
  // Before anything is built or started: a refusal must not come an hour into a run.
  refusePrefilledVariants(flags.scenario, flags.contenders);
  if (flags.contenders.includes(BASELINE_CONTENDER)) {
    if (!flags['tally-baseline']) throw new Error(`contender ${BASELINE_CONTENDER} needs --tally-baseline=<bundle>`);
    const prefilled = flags.scenario.find((scenario) => PREFILLED_SCENARIOS.includes(scenario));
    if (prefilled) {
      throw new Error(
        `contender ${BASELINE_CONTENDER} cannot run scenario ${prefilled}: it starts on a prefill written with this ` +
          "build's ledgers; for start and memory against a baseline use --tally-baseline with --restarts",
      );
    }
  }
  console.log(
    `bench: scenarios ${flags.scenario.join(', ')}; contenders ${flags.contenders.join(', ')}; rounds ${flags.rounds}; ` +
      `workers ${WORKERS}; node ${process.version}; load ${load()}`,
  );
  if (flags['split-cores'] === 'on') {
    if (availableParallelism() < 2) throw new Error('--split-cores=on: needs at least 2 cores');
    console.log(
      `  split cores: control plane on cores ${CORES.controlPlane}; this process, its raw writers and the providers ` +
        `on core ${CORES.controller}`,
    );
  }
  const reference = flags.contenders.includes('reference')
    ? await ensureReferenceProvider({ onProgress: (line) => console.log(`  ${line}`) })
    : undefined;
  if (reference) {
    console.log(
      `  reference: ${reference.path} (${reference.version}, ${reference.goVersion}; ` +
        `${reference.builtNow ? 'built now' : 'cached'}, build took ${(reference.buildDurationMs / 1000).toFixed(0)} s)`,
    );
  }
  const variants = flags.contenders.filter(isBlockSizeVariant);
  // The variants are copies of the production bundle, so it is built for them even with `--tally=dist`.
  const bundle = flags.tally === 'bundle' || variants.length > 0 ? bundleTally() : undefined;
  const tallyEntry = flags.tally === 'bundle' && bundle ? bundle : MAIN_JS;
  if (flags.contenders.includes('tally')) console.log(`  tally: ${tallyEntry} (--tally=${flags.tally})`);
  try {
    const variantEntries = bundle
      ? writeVariantBundles(bundle, dirname(bundle), variants)
      : new Map<BlockSizeVariant, string>();
    for (const [variant, path] of variantEntries) console.log(`  ${variant}: ${path}`);
    const run: Run = { flags, reference, tallyEntry, variantEntries, rows: [] };
    await runScenarios(run);
    if (flags.readme === 'on' && run.rows.length > 0) {
      writeReadmeTable(run.rows, flags.rounds);
      console.log(`\nREADME: ${run.rows.length} row(s) of the bench:claims table written to ${README_PATH}`);
    }
  } finally {
    // The bundle and its variants are this run's own (4–5 MB each): a run must not leave them behind in the temporary
    // directory.
    if (bundle) rmSync(dirname(bundle), { recursive: true, force: true });
  }
}

async function runScenarios(run: Run): Promise<void> {
  const { flags } = run;
  const throughput = (figures: LoadFigures): number => figures.claims / figures.seconds;
  for (const scenario of flags.scenario) {
    if (scenario === 'burst' || scenario === 'full-pool') {
      const prefillCount = scenario === 'burst' ? 0 : flags.prefill;
      const title =
        scenario === 'burst'
          ? `burst: ${flags.claims} claims at once into one pool`
          : `full-pool: ${flags.claims} claims at once into a pool already holding ${prefillCount} addresses`;
      const figures = await loadScenario(
        run,
        title,
        [{ name: 'pool', octet: 1 }],
        { prefill: prefillCount, claimsPerPool: flags.claims },
        throughput,
      );
      const size = scenario === 'burst' ? `${flags.claims} claims` : `${flags.claims} claims over ${prefillCount}`;
      run.rows.push({
        ...printRatios(scenario, figures, 'claims/s', true),
        scenario: `${scenario}, ${size} (claims/s)`,
      });
    } else if (scenario === 'many-pools') {
      const pools = Array.from({ length: flags.pools }, (_, index) => ({ name: `pool-${index}`, octet: index + 1 }));
      const figures = await loadScenario(
        run,
        `many-pools: ${flags.pools} pools × ${flags['claims-per-pool']} claims at once`,
        pools,
        { prefill: 0, claimsPerPool: flags['claims-per-pool'] },
        throughput,
      );
      run.rows.push({
        ...printRatios(scenario, figures, 'claims/s', true),
        scenario: `many-pools, ${flags.pools} × ${flags['claims-per-pool']} (claims/s)`,
      });
    } else if (scenario === 'steady') {
      for (const rate of flags.rates) {
        const figures = await loadScenario(
          run,
          `steady: ${flags['steady-claims']} claims at ${rate}/s into one pool`,
          [{ name: 'pool', octet: 1 }],
          { prefill: 0, claimsPerPool: flags['steady-claims'], ratePerSecond: rate },
          (result) => result.p99Ms,
        );
        run.rows.push({
          ...printRatios(`steady ${rate}/s p99`, figures, 'ms', false),
          scenario: `steady ${rate}/s, ${flags['steady-claims']} claims: p99 (ms)`,
          decimals: 0,
        });
      }
    } else {
      run.rows.push(...(await memoryScenario(run)));
    }
  }
}

// Exit explicitly: informers and keep-alive connections of the finished runs must not keep the process waiting.
await main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
