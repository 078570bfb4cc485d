import {
  ADDRESS_RESOURCE,
  TALLY_ADDRESS_LEDGER_KIND,
  TALLY_GROUP,
  TALLY_V1ALPHA1_API_VERSION,
} from '@tally-ipam/api-types';
import { typedResource } from '@tally-ipam/controller-kit';
import { addressEntryKey, LEDGER_RESOURCE, ledgerNameOf } from '@tally-ipam/ledger';
import { waitFor } from '@tally-ipam/testenv';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import * as z from 'zod';
import { listIfServed } from '../src/kube/list.js';
import { AnyObject } from '../src/kube/resources.js';
import { buildScene, type Scene } from './fixtures.js';
import { runCli, usePluginTestFile } from './support.js';

/**
 * Every command against a real API server with Tally's IPAM provider serving real claims: the table, -o wide, and
 * -o json / -o yaml parsed back. The scene is fixtures.ts's, in 10.71.0.0/16; the leaks are planted in a namespace
 * of their own, 10.73.0.0/24.
 */

const file = usePluginTestFile();
let scene: Scene;
let orphans: string;

const Document = z.object({
  apiVersion: z.literal('kubectl-tally/v1'),
  kind: z.string(),
  items: z.array(z.record(z.string(), z.unknown())),
});

const Pool = z.looseObject({
  kind: z.string(),
  name: z.string(),
  namespace: z.string().optional(),
  counts: z.object({ total: z.number(), used: z.number(), free: z.number(), outOfRange: z.number() }),
  ready: z.looseObject({ status: z.string(), reason: z.string() }).nullable(),
  recentAllocations: z.number(),
  exhaustionEtaSeconds: z.number().nullable(),
});

async function ok(args: string[]): Promise<string> {
  const run = await runCli(args);
  expect(run.stderr, `kubectl-tally ${args.join(' ')}`).toBe('');
  expect(run.status, run.stderr).toBe(0);
  return run.stdout;
}

async function documentOf(args: string[], format: 'json' | 'yaml'): Promise<z.infer<typeof Document>> {
  const stdout = await ok([...args, '-o', format]);
  return Document.parse(format === 'json' ? JSON.parse(stdout) : parseYaml(stdout));
}

beforeAll(async () => {
  scene = await buildScene(file.client, await file.namespace('tally-cli'), '10.71');
  orphans = await file.namespace('tally-orphans');
});

describe('kubectl tally pools', () => {
  it('shows each pool with its counts, bar, ETA and readiness as a table', async () => {
    const lines = (await ok(['pools', '-n', scene.namespace])).trimEnd().split('\n');
    expect(lines[0]).toMatch(/^KIND\s+NAME\s+TOTAL\s+USED\s+FREE\s+OUT-OF-RANGE\s+UTILISATION\s+ETA\s+READY$/);
    const roomy = lines.find((line) => /^TallyIPPool\s+roomy\s/.test(line));
    expect(roomy).toMatch(/^TallyIPPool\s+roomy\s+4\s+2\s+2\s+0\s+\[#####\.\.\.\.\.\]\s+50%\s+~\S+\s+True$/);
    const tiny = lines.find((line) => /^TallyIPPool\s+tiny\s/.test(line));
    expect(tiny).toMatch(/^TallyIPPool\s+tiny\s+1\s+1\s+0\s+0\s+\[##########\]\s+100%\s+exhausted\s+\S+$/);
  });

  it.each(['json', 'yaml'] as const)('-o %s parses back to the same counts', async (format) => {
    const document = await documentOf(['pools', '-n', scene.namespace], format);
    expect(document.kind).toBe('PoolList');
    const pools = document.items.map((item) => Pool.parse(item));
    const roomy = pools.find((pool) => pool.name === 'roomy');
    expect(roomy?.counts).toEqual({ total: 4, used: 2, free: 2, outOfRange: 0 });
    expect(roomy?.recentAllocations).toBe(2);
    // Two allocations within the hour, two free: the ETA is an hour at that rate.
    expect(roomy?.exhaustionEtaSeconds).toBe(3600);
    const tiny = pools.find((pool) => pool.name === 'tiny');
    expect(tiny?.counts.free).toBe(0);
    expect(tiny?.exhaustionEtaSeconds).toBe(0);
  });

  it('-o wide adds the Ready reason and the age; -A adds the namespace', async () => {
    const wide = (await ok(['pools', '-n', scene.namespace, '-o', 'wide'])).split('\n');
    expect(wide[0]).toMatch(/\sREADY\s+REASON\s+AGE$/);
    const all = (await ok(['pools', '-A'])).split('\n');
    expect(all[0]).toMatch(/^NAMESPACE\s+KIND\s+NAME\s/);
    expect(all.some((line) => line.startsWith(`${scene.namespace} `) && /\sroomy\s/.test(line))).toBe(true);
  });

  it('takes a resource the API server does not serve (a CRD not installed, as Metal3 may be) for none, not an error', async () => {
    const unserved = typedResource(
      { apiVersion: 'absent.kubectl-tally.test/v1', kind: 'Nothing', plural: 'nothings', namespaced: true },
      AnyObject,
    );
    expect(await listIfServed(file.client, unserved, { namespace: scene.namespace })).toBeUndefined();
  });

  it('says so on stderr, with status 0, when a namespace has no pools', async () => {
    const run = await runCli(['pools', '-n', orphans]);
    expect(run).toEqual({ status: 0, stdout: '', stderr: 'No pools found.\n' });
  });
});

const Holding = z.looseObject({
  address: z.string(),
  namespace: z.string(),
  claim: z.object({ kind: z.string(), name: z.string(), state: z.string() }).nullable(),
  ipAddress: z.looseObject({ name: z.string() }).nullable(),
  ledgerEntry: z.looseObject({ ledger: z.string(), key: z.string() }).nullable(),
  pool: z.object({ kind: z.string(), name: z.string(), state: z.string() }),
  owners: z.array(z.object({ kind: z.string(), name: z.string(), state: z.string() }).loose()),
  cluster: z.object({ name: z.string(), state: z.string() }).nullable(),
});

describe('kubectl tally who', () => {
  it('finds every holder inside a CIDR, with entry, IPAddress, claim, pool and owners up to the Cluster', async () => {
    for (const format of ['json', 'yaml'] as const) {
      const document = await documentOf(['who', '10.71.0.0/24'], format);
      const held = document.items.map((item) => Holding.parse(item));
      expect(held.map((holding) => holding.claim?.name).sort()).toEqual(['web-0', 'web-1']);
      const web0 = held.find((holding) => holding.claim?.name === 'web-0');
      expect(web0?.address).toBe(scene.addresses['web-0']);
      expect(web0?.ledgerEntry?.key).toBe(addressEntryKey(scene.addresses['web-0'] ?? ''));
      expect(web0?.ipAddress).not.toBeNull();
      expect(web0?.pool).toEqual({ kind: 'TallyIPPool', name: 'roomy', state: 'found' });
      expect(web0?.owners.map(({ kind, name, state }) => ({ kind, name, state }))).toEqual([
        { kind: 'Machine', name: 'm1', state: 'found' },
        { kind: 'Cluster', name: 'c1', state: 'found' },
      ]);
      expect(web0?.cluster).toEqual({ name: 'c1', state: 'found' });
      const web1 = held.find((holding) => holding.claim?.name === 'web-1');
      expect(web1?.owners.map(({ kind, name, state }) => ({ kind, name, state }))).toEqual([
        { kind: 'Machine', name: 'gone', state: 'missing' },
      ]);
    }
  });

  it('shows one address as a table row, and the owner chain with -o wide', async () => {
    const address = scene.addresses['web-0'] ?? '';
    const lines = (await ok(['who', address])).trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ADDRESS\s+NAMESPACE\s+CLAIM\s+IPADDRESS\s+POOL\s+HELD\s+MACHINE\s+CLUSTER$/);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(
      new RegExp(
        `^${address.replace(/\./g, '\\.')}\\s+${scene.namespace}\\s+IPAddressClaim/web-0\\s+\\S+\\s+TallyIPPool/roomy\\s+\\S+\\s+m1\\s+c1$`,
      ),
    );
    const wide = (await ok(['who', address, '-o', 'wide'])).split('\n');
    expect(wide[1]).toContain('Machine/m1 <- Cluster/c1');
  });

  it('says when nothing inside the argument is held', async () => {
    expect(await runCli(['who', '192.0.2.0/24'])).toEqual({
      status: 0,
      stdout: '',
      stderr: 'No address inside 192.0.2.0/24 is held.\n',
    });
  });

  it('refuses an argument that is no address, naming it and cutting it', async () => {
    const run = await runCli(['who', `10.0.0.1/${'9'.repeat(70)}`]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^error: who: <address\|CIDR> is 79 characters, at most 64: "10\.0\.0\.1\/9+…"/);
    const bad = await runCli(['who', '10.0.0.256']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('"10.0.0.256" is not an IP address or CIDR');
  });
});

const Report = z.looseObject({
  kind: z.literal('ClaimReport'),
  conditions: z.array(z.looseObject({ type: z.string(), status: z.string(), reason: z.string() })),
  pool: z.looseObject({ name: z.string(), exhausted: z.boolean(), paused: z.array(z.string()) }),
  claimPaused: z.array(z.string()),
  events: z.array(z.looseObject({ reason: z.string(), type: z.string() })),
  lastWrite: z.looseObject({ manager: z.string() }).nullable().optional(),
});

describe('kubectl tally why', () => {
  it('shows a bound claim: its address, Ready condition, pool, no pause, its Events', async () => {
    const text = await ok(['why', 'web-0', '-n', scene.namespace]);
    expect(text).toContain(`IPAddressClaim ${scene.namespace}/web-0\nBound: ${scene.addresses['web-0']} (IPAddress `);
    expect(text).toMatch(/\n {2}Ready\s+True\s+AddressAllocated\s/);
    expect(text).toContain('Pool: TallyIPPool/roomy in');
    expect(text).toContain('  paused:    no');
    expect(text).toContain('  cluster: c1\n');
    expect(text).toMatch(
      /Events \(newest last\):\n {2}TYPE\s+REASON\s+AGE\s+FROM\s+NOTE\n {2}Normal\s+AddressAllocated\s/,
    );
    expect(text).toMatch(/ {2}last write: \S+ (Update|Apply)/);
  });

  it('shows a waiting claim of an exhausted pool, and its PoolExhausted Event', async () => {
    const report = await waitFor('the PoolExhausted Event of solo-1 to be listed', async () => {
      const parsed = Report.parse(JSON.parse(await ok(['why', 'solo-1', '-n', scene.namespace, '-o', 'json'])));
      return parsed.events.some((event) => event.reason === 'PoolExhausted') ? parsed : undefined;
    });
    expect(report.conditions.find((condition) => condition.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'PoolExhausted',
    });
    expect(report.pool).toMatchObject({ name: 'tiny', exhausted: true, paused: [] });
    expect(report.claimPaused).toEqual([]);
    const yamlReport = Report.parse(parseYaml(await ok(['why', 'solo-1', '-n', scene.namespace, '-o', 'yaml'])));
    expect(yamlReport.pool.exhausted).toBe(true);
    const text = await ok(['why', 'solo-1', '-n', scene.namespace]);
    expect(text).toMatch(/\nWaiting: PoolExhausted: /);
    expect(text).toContain('  exhausted: yes');
    expect(text).toMatch(/\n {2}Warning\s+PoolExhausted\s/);
  });

  it('fails with status 1 and the namespace for a claim that does not exist', async () => {
    const run = await runCli(['why', 'nobody', '-n', scene.namespace]);
    expect(run).toEqual({
      status: 1,
      stdout: '',
      stderr: `error: IPAddressClaim "nobody" not found in namespace "${scene.namespace}"\n`,
    });
  });
});

const Leak = z.looseObject({
  kind: z.string(),
  namespace: z.string(),
  name: z.string(),
  address: z.string(),
  claim: z.string(),
  ageSeconds: z.number().nullable(),
});

describe('kubectl tally leaks', () => {
  it('finds an IPAddress without a claim and a ledger entry without an IPAddress, with their ages', async () => {
    await file.client.create(ADDRESS_RESOURCE, {
      apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
      kind: 'IPAddress',
      metadata: { name: 'stray', namespace: orphans },
      spec: {
        address: '10.73.0.9',
        prefix: 24,
        claimRef: { name: 'vanished' },
        poolRef: { apiGroup: TALLY_GROUP, kind: 'TallyIPPool', name: 'gone' },
      },
    });
    const heldSince = new Date(Date.now() - 3 * 3600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    await file.client.create(LEDGER_RESOURCE, {
      apiVersion: TALLY_V1ALPHA1_API_VERSION,
      kind: TALLY_ADDRESS_LEDGER_KIND,
      metadata: { name: ledgerNameOf({ address: '10.73.0.5', prefix: 0, isPrefix: false }) },
      spec: {
        entries: [
          {
            key: addressEntryKey('10.73.0.5'),
            address: '10.73.0.5',
            poolRef: { apiGroup: TALLY_GROUP, kind: 'TallyIPPool', name: 'gone', namespace: orphans },
            claimRef: { namespace: orphans, name: 'forgotten', uid: '11111111-1111-4111-8111-111111111111' },
            heldSince,
          },
        ],
      },
    });
    for (const format of ['json', 'yaml'] as const) {
      const leaks = (await documentOf(['leaks', '-n', orphans, '--min-age', '0s'], format)).items.map((item) =>
        Leak.parse(item),
      );
      expect(leaks.map(({ kind, name, address, claim }) => ({ kind, name, address, claim }))).toEqual([
        {
          kind: 'LedgerEntry',
          name: `${ledgerNameOf({ address: '10.73.0.5', prefix: 0, isPrefix: false })}/${addressEntryKey('10.73.0.5')}`,
          address: '10.73.0.5',
          claim: 'forgotten',
        },
        { kind: 'IPAddress', name: 'stray', address: '10.73.0.9', claim: 'vanished' },
      ]);
      expect(leaks[0]?.ageSeconds).toBeGreaterThanOrEqual(3 * 3600);
    }
    // By default a leak younger than a minute is in flight: the seconds-old IPAddress is left out, the entry kept.
    const byDefault = (await documentOf(['leaks', '-n', orphans], 'json')).items.map((item) => Leak.parse(item));
    expect(byDefault.map((leak) => leak.address)).toEqual(['10.73.0.5']);
    const lines = (await ok(['leaks', '-A', '-o', 'wide', '--min-age', '0s'])).split('\n');
    expect(lines[0]).toMatch(/^KIND\s+NAMESPACE\s+NAME\s+ADDRESS\s+POOL\s+CLAIM\s+AGE\s+WHY$/);
    expect(lines.find((line) => line.includes('stray'))).toMatch(
      /^IPAddress\s+\S+\s+stray\s+10\.73\.0\.9\s+TallyIPPool\/gone\s+vanished\s+\S+\s+claim vanished does not exist$/,
    );
    expect(lines.find((line) => line.includes('10.73.0.5'))).toMatch(
      /^LedgerEntry\s.*\s3h\d*m?\s+no IPAddress of 10\.73\.0\.5 in /,
    );
  });

  it('finds none where every address has its claim and every entry its IPAddress', async () => {
    expect(await runCli(['leaks', '-n', scene.namespace])).toEqual({
      status: 0,
      stdout: '',
      stderr: `No leaks found in namespace ${scene.namespace}.\n`,
    });
  });
});

describe('the command line', () => {
  it('answers --help per command with its flags, and refuses unknown flags on stderr with status 2', async () => {
    for (const command of ['pools', 'who', 'why', 'leaks']) {
      const help = await runCli([command, '--help'], { kubeconfig: 'none' });
      expect(help.status).toBe(0);
      expect(help.stdout).toContain(`kubectl tally ${command}`);
      expect(help.stdout).toContain('-o, --output FORMAT');
    }
    const unknown = await runCli(['pools', '--frobnicate']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/^error: .*--frobnicate/);
  });

  it('uses --context, and names a context the kubeconfig does not have', async () => {
    const run = await runCli(['pools', '-n', scene.namespace, '--context', 'nowhere']);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/^error: context "nowhere" is not in the kubeconfig \(it has: \S+/);
  });

  it('reads KUBECONFIG when no --kubeconfig is given, and fails on stderr with neither', async () => {
    const run = await runCli(['pools', '-n', scene.namespace], { kubeconfig: 'env' });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/\sroomy\s/);
    const none = await runCli(['pools'], { kubeconfig: 'none' });
    expect(none.status).toBe(1);
    expect(none.stderr).toMatch(/^error: /);
  });
});
