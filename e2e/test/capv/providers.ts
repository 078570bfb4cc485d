import { readFile } from 'node:fs/promises';
import { formatIP, parseIP, parseIPRange } from '@tally-ipam/allocator';
import {
  GLOBAL_TALLY_IP_POOL_KIND,
  IPAM_GROUP,
  TALLY_IP_POOL_KIND,
  TALLY_V1ALPHA1_API_VERSION,
} from '@tally-ipam/api-types';
import type { Client, TypedResourceKind } from '@tally-ipam/controller-kit/client';
import { LEDGER_RESOURCE } from '@tally-ipam/ledger';
import { REFERENCE_POOL_API_VERSION } from '@tally-ipam/vsphere';
import { z } from 'zod';
import { poolResource, type StoredPool } from './resources.js';

/** One pool the scenario's devices claim from, and what every address it hands out must look like. */
export interface PoolUnderTest {
  readonly ref: { readonly apiGroup: string; readonly kind: string; readonly name: string };
  /** Undefined for a cluster-scoped (global) pool. */
  readonly namespace: string | undefined;
  readonly resource: TypedResourceKind<StoredPool>;
  readonly range: string;
  readonly prefix: number;
  readonly gateway: string;
  contains(address: string): boolean;
}

export interface ScenarioPools {
  /** The first device's pool: namespaced, IPv4. */
  readonly v4: PoolUnderTest;
  /** The second device's pool: cluster-scoped, IPv6. */
  readonly v6: PoolUnderTest;
}

/** The IPAM provider the scenario runs against; everything else in the scenario is the same for both. */
export interface IpamProviderUnderTest {
  /** For messages and the timing line. */
  readonly name: string;
  /** Where to look when it did not do what was awaited. */
  readonly logHint: string;
  /**
   * Whether it reports `Ready` on the claims it binds. Tally does; the reference provider v1.1.0 writes no condition
   * on claims at all, only `status.addressRef` (CAPV then falls back to counting bound claims).
   */
  readonly claimsReportReady: boolean;
  createPools(client: Client, namespace: string, suffix: string): Promise<ScenarioPools>;
  deletePools(client: Client, pools: ScenarioPools): Promise<void>;
  /**
   * The addresses the provider's own bookkeeping holds for a pool, beyond the IPAddresses (Tally's address ledgers),
   * or undefined when it keeps none (the reference provider counts IPAddresses).
   */
  heldAddresses(client: Client, pool: PoolUnderTest): Promise<string[] | undefined>;
  /** Whether the provider's log shows it skipped this claim because its Cluster was paused (the pause barrier). */
  loggedPausedSkip(claim: { readonly namespace: string; readonly name: string }): Promise<boolean>;
}

/** Canonical text, so addresses from Go (netip), the allocator and the API compare equal. */
export function canonical(address: string): string {
  return formatIP(parseIP(address));
}

function pool(
  ref: PoolUnderTest['ref'],
  namespace: string | undefined,
  resource: TypedResourceKind<StoredPool>,
  spec: { range: string; prefix: number; gateway: string },
): PoolUnderTest {
  const { first, last } = parseIPRange(spec.range);
  return {
    ref,
    namespace,
    resource,
    ...spec,
    contains: (address) => {
      const value = parseIP(address).value;
      return value >= first && value <= last;
    },
  };
}

/** Both providers take the same spec fields for a pool of single addresses. */
async function createPoolObject(client: Client, target: PoolUnderTest, apiVersion: string): Promise<void> {
  await client.create(target.resource, {
    apiVersion,
    kind: target.ref.kind,
    metadata: { name: target.ref.name, ...(target.namespace ? { namespace: target.namespace } : {}) },
    spec: { addresses: [target.range], prefix: target.prefix, gateway: target.gateway },
  });
}

async function deletePoolObjects(client: Client, pools: ScenarioPools): Promise<void> {
  for (const target of [pools.v4, pools.v6]) {
    await client.delete(target.resource, { namespace: target.namespace, name: target.ref.name }).catch(() => {});
  }
}

/** JSON log lines of a pino logger, parsed where they parse. */
function jsonLines(text: string): unknown[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as unknown];
      } catch {
        return [];
      }
    });
}

const TallyPausedLine = z.looseObject({
  msg: z.literal('reconciliation paused'),
  controller: z.literal('tally-ipaddressclaim'),
  namespace: z.string(),
  name: z.string(),
});

/** Where a provider's log is read from: its log file (a process), or its Pods' logs (the kind lane). */
export interface ProviderLog {
  readonly hint: string;
  read(): Promise<string>;
}

/** The log file of the IPAM controller the suite's global setup runs as a process. */
export function tallyProcessLog(logPath: string): ProviderLog {
  return { hint: `the IPAM controller's log: ${logPath}`, read: () => readFile(logPath, 'utf8').catch(() => '') };
}

/** Tally as the suite runs it (the built app as a process, or the lane's Deployment); `log` is where its log is. */
export function tallyProvider(log: ProviderLog): IpamProviderUnderTest {
  return {
    name: 'Tally',
    logHint: log.hint,
    claimsReportReady: true,
    createPools: async (client, namespace, suffix) => {
      const pools: ScenarioPools = {
        v4: pool(
          { apiGroup: IPAM_GROUP, kind: TALLY_IP_POOL_KIND, name: 'capv-v4' },
          namespace,
          poolResource(TALLY_V1ALPHA1_API_VERSION, TALLY_IP_POOL_KIND, 'tallyippools', true),
          { range: '10.90.0.10-10.90.0.29', prefix: 24, gateway: '10.90.0.1' },
        ),
        v6: pool(
          { apiGroup: IPAM_GROUP, kind: GLOBAL_TALLY_IP_POOL_KIND, name: `capv-v6-${suffix}` },
          undefined,
          poolResource(TALLY_V1ALPHA1_API_VERSION, GLOBAL_TALLY_IP_POOL_KIND, 'globaltallyippools', false),
          { range: 'fd00:90::10-fd00:90::2f', prefix: 64, gateway: 'fd00:90::1' },
        ),
      };
      await createPoolObject(client, pools.v4, TALLY_V1ALPHA1_API_VERSION);
      await createPoolObject(client, pools.v6, TALLY_V1ALPHA1_API_VERSION);
      return pools;
    },
    deletePools: deletePoolObjects,
    heldAddresses: async (client, target) =>
      (await client.list(LEDGER_RESOURCE)).items
        .flatMap((ledger) => ledger.spec.entries ?? [])
        .filter(
          (entry) =>
            entry.poolRef.kind === target.ref.kind &&
            entry.poolRef.name === target.ref.name &&
            (entry.poolRef.namespace ?? undefined) === target.namespace,
        )
        .map((entry) => canonical(entry.address)),
    loggedPausedSkip: async (claim) => {
      const text = await log.read();
      return jsonLines(text).some((record) => {
        const line = TallyPausedLine.safeParse(record);
        return line.success && line.data.namespace === claim.namespace && line.data.name === claim.name;
      });
    },
  };
}

/** The reference provider as the test runs it: its release and where its log (klog text lines) is read. */
export interface RunningReference {
  readonly version: string;
  readonly log: ProviderLog;
}

/**
 * The scenario's pools of the reference's kinds (`InClusterIPPool`, `GlobalInClusterIPPool`), on `10.<net>.0.0/24`
 * and `fd00:<net>::/64`: each scenario its own `net`, so no two scenarios' addresses meet in Tally's ledgers.
 */
async function createInClusterPools(
  client: Client,
  namespace: string,
  suffix: string,
  net: number,
): Promise<ScenarioPools> {
  const pools: ScenarioPools = {
    v4: pool(
      { apiGroup: IPAM_GROUP, kind: 'InClusterIPPool', name: 'capv-v4' },
      namespace,
      poolResource(REFERENCE_POOL_API_VERSION, 'InClusterIPPool', 'inclusterippools', true),
      { range: `10.${net}.0.10-10.${net}.0.29`, prefix: 24, gateway: `10.${net}.0.1` },
    ),
    v6: pool(
      { apiGroup: IPAM_GROUP, kind: 'GlobalInClusterIPPool', name: `capv-v6-${suffix}` },
      undefined,
      poolResource(REFERENCE_POOL_API_VERSION, 'GlobalInClusterIPPool', 'globalinclusterippools', false),
      { range: `fd00:${net}::10-fd00:${net}::2f`, prefix: 64, gateway: `fd00:${net}::1` },
    ),
  };
  await createPoolObject(client, pools.v4, REFERENCE_POOL_API_VERSION);
  await createPoolObject(client, pools.v6, REFERENCE_POOL_API_VERSION);
  return pools;
}

/**
 * The reference in-cluster provider v1.1.0, run by the test itself: a process next to the control plane
 * (`startReferenceIpam`) or a Deployment on the kind lane (`reference-pod.ts`). Its pools are on `net` (above).
 */
export function referenceProvider(reference: RunningReference, net = 91): IpamProviderUnderTest {
  return {
    name: `the reference in-cluster provider ${reference.version}`,
    logHint: reference.log.hint,
    claimsReportReady: false,
    createPools: (client, namespace, suffix) => createInClusterPools(client, namespace, suffix, net),
    deletePools: deletePoolObjects,
    heldAddresses: async () => undefined,
    // klog text: `"IPAddressClaim linked to a cluster that is paused, skipping reconciliation" … IPAddressClaim="ns/name"`.
    loggedPausedSkip: async (claim) =>
      (await reference.log.read())
        .split('\n')
        .some(
          (line) =>
            line.includes('"IPAddressClaim linked to a cluster that is paused, skipping reconciliation"') &&
            line.includes(`IPAddressClaim="${claim.namespace}/${claim.name}"`),
        ),
  };
}

/**
 * Tally run with `--enable-in-cluster-ipam` (a process of the test's own, `tally-in-cluster.ts`): the reference's
 * pool kinds on `net`, its bookkeeping Tally's address ledgers and its `Ready` condition on claims, as `tallyProvider`.
 */
export function tallyInClusterProvider(log: ProviderLog, net: number): IpamProviderUnderTest {
  return {
    ...tallyProvider(log),
    name: 'Tally serving the in-cluster kinds',
    createPools: (client, namespace, suffix) => createInClusterPools(client, namespace, suffix, net),
  };
}
