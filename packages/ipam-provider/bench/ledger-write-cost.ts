/**
 * What one ledger write costs the API server, by CRD schema: the same full TallyAddressLedger (256 entries, or
 * BENCH_ENTRIES) replaced again and again (one entry's `heldSince` changes each time, as a real write changes
 * something) on a private control plane, under two CRDs served side by side: the shipped one, whose entries the API
 * server does not check field by field (`UNCHECKED_BY_API_SERVER`), and the same with every field of every entry
 * checked (the schema of `AddressLedgerEntry` as the CRD had it before). kube-apiserver's CPU time (from /proc) and
 * the round trip per PUT, in interleaved rounds; prints the ratio.
 * Run: `pnpm --filter @tally-ipam/ipam-provider exec tsx bench/ledger-write-cost.ts` (BENCH_PUTS per round, default
 * 100; BENCH_ROUNDS, default 4; BENCH_ENTRIES, default 256: what a write of a smaller block's ledger would cost).
 * `BENCH_README=on` writes the result into this package's README (`bench:ledger-write-cost`, the row of this ledger size).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  AddressLedgerEntry,
  MAX_LEDGER_ENTRIES,
  TALLY_GROUP,
  tallyAddressLedgerCustomResourceDefinition,
  toStructuralSchema,
} from '@tally-ipam/api-types';
import { Client, type ResourceKind } from '@tally-ipam/controller-kit';
import { ADDRESS_BLOCK_BITS } from '@tally-ipam/ledger';
import { benchDate, describeMachine, startControlPlane, writeBenchTable } from '@tally-ipam/testenv';

const PUTS = Number(process.env.BENCH_PUTS ?? 100);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
/** Entries in the ledger written: a full block of the layout (2^ADDRESS_BLOCK_BITS), or up to the schema's cap. */
const ENTRIES = Number(process.env.BENCH_ENTRIES ?? 2 ** ADDRESS_BLOCK_BITS);
if (!Number.isInteger(ENTRIES) || ENTRIES < 1 || ENTRIES > MAX_LEDGER_ENTRIES) {
  throw new Error(
    `BENCH_ENTRIES: "${String(process.env.BENCH_ENTRIES).slice(0, 20)}" is not an integer from 1 to ${MAX_LEDGER_ENTRIES}`,
  );
}
/** The checked copy is served under a group of its own, beside the shipped CRD. */
const CHECKED_GROUP = 'checked.tally.test';

type Json = Record<string, unknown>;
interface LedgerCRD {
  metadata: { name: string };
  spec: {
    group: string;
    versions: { schema: { openAPIV3Schema: { properties: { spec: { properties: { entries: Json } } } } } }[];
  };
}

const shipped = tallyAddressLedgerCustomResourceDefinition() as unknown as LedgerCRD;
const checked = structuredClone(shipped);
checked.metadata.name = `tallyaddressledgers.${CHECKED_GROUP}`;
checked.spec.group = CHECKED_GROUP;
for (const version of checked.spec.versions) {
  version.schema.openAPIV3Schema.properties.spec.properties.entries.items = toStructuralSchema(AddressLedgerEntry);
}

const dir = mkdtempSync(join(tmpdir(), 'ledger-write-cost-'));
writeFileSync(join(dir, 'shipped.yaml'), JSON.stringify(shipped));
writeFileSync(join(dir, 'checked.yaml'), JSON.stringify(checked));
const plane = await startControlPlane({
  crds: [join(dir, 'shipped.yaml'), join(dir, 'checked.yaml')],
  capiCRDs: [],
  ignoreTestKubeconfig: true,
  onProgress: (line) => console.log(`  ${line}`),
});
rmSync(dir, { recursive: true, force: true });
const apiServerPid = plane.processIds()['kube-apiserver'];
if (apiServerPid === undefined) throw new Error('the control plane reports no kube-apiserver process');
const client = new Client(plane.kubeConfig(), { fieldManager: 'ledger-write-cost-bench' });

/** kube-apiserver's user + system CPU time so far, from /proc (clock ticks of 10 ms). */
function apiServerCpuMs(): number {
  const fields = readFileSync(`/proc/${apiServerPid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** A ledger of ENTRIES entries; `stamp` moves the first entry's `heldSince`, so every write changes the object. */
function fullLedgerEntries(stamp: number): Json[] {
  return Array.from({ length: ENTRIES }, (_, index) => ({
    key: `ip4-10.20.30.${index}`,
    address: `10.20.30.${index}`,
    poolRef: { apiGroup: TALLY_GROUP, kind: 'TallyIPPool', namespace: 'bench', name: 'pool-a' },
    claimRef: {
      namespace: 'bench',
      name: `machine-${index}-eth0`,
      uid: `7f0c4e1a-0000-4000-8000-${String(index).padStart(12, '0')}`,
    },
    heldSince: new Date(Date.UTC(2026, 0, 1) + (index === 0 ? stamp : 0) * 1000).toISOString().replace('.000', ''),
  }));
}

const VARIANTS = ['shipped', 'checked'] as const;
type Variant = (typeof VARIANTS)[number];
const kinds: Record<Variant, ResourceKind> = {
  shipped: {
    apiVersion: `${TALLY_GROUP}/v1alpha1`,
    kind: 'TallyAddressLedger',
    plural: 'tallyaddressledgers',
    namespaced: false,
  },
  checked: {
    apiVersion: `${CHECKED_GROUP}/v1alpha1`,
    kind: 'TallyAddressLedger',
    plural: 'tallyaddressledgers',
    namespaced: false,
  },
};
const latest = new Map<Variant, Json>();
for (const variant of VARIANTS) {
  const kind = kinds[variant];
  const created = await client.create(kind, {
    apiVersion: kind.apiVersion,
    kind: kind.kind,
    metadata: { name: 'ip4-10.20.30.0.24' },
    spec: { entries: fullLedgerEntries(0) },
  });
  latest.set(variant, created as unknown as Json);
}

const totals = new Map<Variant, { cpuMs: number; wallMs: number; puts: number }>(
  VARIANTS.map((variant) => [variant, { cpuMs: 0, wallMs: 0, puts: 0 }]),
);
let stamp = 1;
for (let round = 1; round <= ROUNDS; round += 1) {
  // Interleaved, the order rotated, so neither variant always runs first.
  for (const variant of round % 2 ? VARIANTS : [...VARIANTS].reverse()) {
    const kind = kinds[variant];
    const cpuBefore = apiServerCpuMs();
    const started = performance.now();
    for (let put = 0; put < PUTS; put += 1) {
      const current = latest.get(variant) as Json;
      const updated = await client.update(kind, { ...current, spec: { entries: fullLedgerEntries(stamp++) } } as never);
      latest.set(variant, updated as unknown as Json);
    }
    const wallMs = performance.now() - started;
    const cpuMs = apiServerCpuMs() - cpuBefore;
    const total = totals.get(variant) as { cpuMs: number; wallMs: number; puts: number };
    total.cpuMs += cpuMs;
    total.wallMs += wallMs;
    total.puts += PUTS;
    console.log(
      `round ${round} ${variant.padEnd(7)} kube-apiserver CPU ${(cpuMs / PUTS).toFixed(1)} ms per PUT, ` +
        `round trip ${(wallMs / PUTS).toFixed(1)} ms`,
    );
  }
}
const per = (variant: Variant, what: 'cpuMs' | 'wallMs'): number => {
  const total = totals.get(variant) as { cpuMs: number; wallMs: number; puts: number };
  return total[what] / total.puts;
};
console.log(
  `shipped / checked (${ENTRIES}-entry ledger, ${ROUNDS} × ${PUTS} PUTs each): kube-apiserver CPU per PUT ` +
    `${(per('shipped', 'cpuMs') / per('checked', 'cpuMs')).toFixed(2)}× (${per('shipped', 'cpuMs').toFixed(1)} against ` +
    `${per('checked', 'cpuMs').toFixed(1)} ms), round trip ${(per('shipped', 'wallMs') / per('checked', 'wallMs')).toFixed(2)}×`,
);
if (process.env.BENCH_README === 'on') {
  writeBenchTable(fileURLToPath(new URL('../README.md', import.meta.url)), {
    name: 'ledger-write-cost',
    caption:
      'kube-apiserver CPU per `PUT` of a full ledger under the shipped CRD (entries not checked field by field) and ' +
      'under the same CRD checking every field, served side by side, interleaved rounds ' +
      '(`BENCH_README=on pnpm --filter @tally-ipam/ipam-provider exec tsx bench/ledger-write-cost.ts`). Target: the ' +
      'shipped CRD costs less.',
    header: [
      'ledger',
      'shipped, ms per PUT',
      'every field checked, ms per PUT',
      'shipped / checked',
      'round trip',
      'measured',
    ],
    rows: [
      [
        `${ENTRIES} entries`,
        per('shipped', 'cpuMs').toFixed(1),
        per('checked', 'cpuMs').toFixed(1),
        `${(per('shipped', 'cpuMs') / per('checked', 'cpuMs')).toFixed(2)}×`,
        `${(per('shipped', 'wallMs') / per('checked', 'wallMs')).toFixed(2)}×`,
        `${benchDate()}, ${ROUNDS} × ${PUTS} PUTs each; ${describeMachine()}`,
      ],
    ],
  });
}
client.close();
await plane.stop();
