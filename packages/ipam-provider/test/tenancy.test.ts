/**
 * Tenancy of global pools against the real API server with the provider running: `spec.namespaceSelector` and
 * `spec.maxAddressesPerNamespace` of a GlobalTallyIPPool. Two namespaces race for one capped pool at a reconcile
 * concurrency of 8; a namespace the selector does not pick gets no address; relabelling a namespace out of the selector
 * takes back nothing it holds. The pool (cluster-scoped, on a shared control plane) carries the run's name. The pure
 * decisions (verdict, per-key turns) are property-tested at the end.
 */
import { randomBytes } from 'node:crypto';
import { EventsV1Api } from '@kubernetes/client-node';
import { testEnv } from '@tally-ipam/testenv/vitest';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  ADDRESS_RESOURCE,
  CLAIM_NAMESPACE_CAP_REACHED_REASON,
  CLAIM_NAMESPACE_NOT_ALLOWED_REASON,
  CLAIM_RESOURCE,
  KeyedSerializer,
  NAMESPACE_RESOURCE,
  POOL_RESOURCES,
  poolTenancy,
  type StoredClaim,
  type StoredPool,
  tenancyVerdict,
} from '../src/index.js';
import {
  createClaim,
  createPool,
  forEachLimited,
  holdingsOfNamespace,
  readyCondition,
  useTestFile,
  waitFor,
  waitForAddress,
  waitForReason,
} from './support.js';

const CONCURRENCY = 8;
const { client, namespace } = useTestFile({ provider: { concurrency: CONCURRENCY } });
const RUN = randomBytes(4).toString('hex');
const TENANT_LABEL = 'tally.test/tenant';
const POOL_NAME = `tenancy-${RUN}`;
const POOL = { kind: 'GlobalTallyIPPool', name: POOL_NAME } as const;
const CAP = 3;
const CLAIMS_PER_NAMESPACE = 10;

const EventList = z.object({
  items: z.array(
    z.object({ type: z.string(), reason: z.string(), regarding: z.object({ name: z.string() }).loose() }).loose(),
  ),
});

async function labelNamespace(name: string, value: string | null): Promise<void> {
  await client.mergePatch(NAMESPACE_RESOURCE, { name }, { metadata: { labels: { [TENANT_LABEL]: value } } });
}

/** The namespace's claims by what their Ready condition says, once every one of them has one. */
async function claimsSettled(ns: string, count: number): Promise<Map<string, StoredClaim[]>> {
  return waitFor(`${count} claims of ${ns} with a Ready condition`, async () => {
    const claims = (await client.listAll(CLAIM_RESOURCE, { namespace: ns })).items;
    if (claims.length !== count || claims.some((claim) => readyCondition(claim) === undefined)) return undefined;
    const byReason = new Map<string, StoredClaim[]>();
    for (const claim of claims) {
      const reason = readyCondition(claim)?.reason ?? '';
      byReason.set(reason, [...(byReason.get(reason) ?? []), claim]);
    }
    return byReason;
  });
}

/** Unreleased ledger entries of the pool held for claims of the namespace. */
async function heldEntries(ns: string): Promise<number> {
  const held = await holdingsOfNamespace(client, ns);
  return held.filter((entry) => entry.spec.releasedAt === undefined && entry.spec.poolRef.name === POOL_NAME).length;
}

/** Waits until `ns` holds exactly `bound` addresses and every other claim waits with the cap's reason. */
async function capHeld(ns: string, claims: number): Promise<StoredClaim[]> {
  const byReason = await waitFor(`${ns}: ${CAP} bound, the rest waiting on the cap`, async () => {
    const settled = await claimsSettled(ns, claims);
    const bound = settled.get('AddressAllocated') ?? [];
    const waiting = settled.get(CLAIM_NAMESPACE_CAP_REACHED_REASON) ?? [];
    return bound.length + waiting.length === claims && bound.length >= CAP ? settled : undefined;
  });
  const bound = byReason.get('AddressAllocated') ?? [];
  expect(bound).toHaveLength(CAP);
  expect(await heldEntries(ns)).toBe(CAP);
  expect((await client.listAll(ADDRESS_RESOURCE, { namespace: ns })).items).toHaveLength(CAP);
  for (const claim of byReason.get(CLAIM_NAMESPACE_CAP_REACHED_REASON) ?? []) {
    expect(claim.status?.addressRef).toBeUndefined();
    expect(readyCondition(claim)?.message).toContain(`spec.maxAddressesPerNamespace is ${CAP}`);
  }
  return bound;
}

describe('global pool tenancy', () => {
  it('caps two namespaces racing at concurrency 8 exactly, refuses an unselected namespace, and takes nothing back on a relabel', async () => {
    const teamA = await namespace('tenant-a');
    const teamB = await namespace('tenant-b');
    const outsider = await namespace('tenant-x');
    await labelNamespace(teamA, RUN);
    await labelNamespace(teamB, RUN);
    await createPool(client, 'GlobalTallyIPPool', POOL_NAME, undefined, {
      addresses: ['10.53.0.0/26'],
      prefix: 24,
      namespaceSelector: { matchLabels: { [TENANT_LABEL]: RUN } },
      maxAddressesPerNamespace: CAP,
    });
    try {
      // Both namespaces' claims at once, interleaved, as fast as the client sends them.
      const names = Array.from({ length: CLAIMS_PER_NAMESPACE }, (_, index) => `claim-${index}`);
      const work = names.flatMap((name) => [
        { ns: teamA, name },
        { ns: teamB, name },
      ]);
      await forEachLimited(work, CONCURRENCY, ({ ns, name }) => createClaim(client, ns, name, POOL));
      const boundA = await capHeld(teamA, CLAIMS_PER_NAMESPACE);
      await capHeld(teamB, CLAIMS_PER_NAMESPACE);

      // Releasing one address of A lets exactly one of its waiting claims in; B is untouched.
      const released = boundA[0]?.metadata.name ?? '';
      await client.delete(CLAIM_RESOURCE, { namespace: teamA, name: released });
      await waitFor(`claim ${teamA}/${released} gone`, async () => {
        const left = (await client.listAll(CLAIM_RESOURCE, { namespace: teamA })).items;
        return left.every((claim) => claim.metadata.name !== released);
      });
      const afterRelease = await capHeld(teamA, CLAIMS_PER_NAMESPACE - 1);
      expect(afterRelease.map((claim) => claim.metadata.name)).not.toContain(released);
      await capHeld(teamB, CLAIMS_PER_NAMESPACE);

      // A namespace the selector does not pick: Ready=False with the reason, a Warning Event, no address, no entry.
      await createClaim(client, outsider, 'outside', POOL);
      const refused = await waitForReason(client, outsider, 'outside', CLAIM_NAMESPACE_NOT_ALLOWED_REASON);
      expect(readyCondition(refused)?.status).toBe('False');
      expect(readyCondition(refused)?.message).toContain(
        `namespace ${outsider} is not selected by spec.namespaceSelector of GlobalTallyIPPool ${POOL_NAME}`,
      );
      const events = testEnv().kubeConfig.makeApiClient(EventsV1Api);
      await waitFor('the NamespaceNotAllowed Event', async () => {
        const list = EventList.parse(await events.listNamespacedEvent({ namespace: outsider }));
        return list.items.some(
          (event) =>
            event.type === 'Warning' &&
            event.reason === CLAIM_NAMESPACE_NOT_ALLOWED_REASON &&
            event.regarding.name === 'outside',
        );
      });
      expect((await client.listAll(ADDRESS_RESOURCE, { namespace: outsider })).items).toEqual([]);
      expect(await heldEntries(outsider)).toBe(0);

      // Selecting the outsider lets its claim in (the namespace watch re-queues it).
      await labelNamespace(outsider, RUN);
      await waitForAddress(client, outsider, 'outside');

      // Relabelling B out of the selector: its three claims keep their addresses; a new claim of B is refused, and so
      // are the ones that waited on the cap.
      const heldBefore = (await client.listAll(ADDRESS_RESOURCE, { namespace: teamB })).items.map(
        (a) => a.spec.address,
      );
      await labelNamespace(teamB, null);
      await createClaim(client, teamB, 'late', POOL);
      await waitForReason(client, teamB, 'late', CLAIM_NAMESPACE_NOT_ALLOWED_REASON);
      const settledB = await waitFor(`${teamB}: the waiting claims say NamespaceNotAllowed`, async () => {
        const settled = await claimsSettled(teamB, CLAIMS_PER_NAMESPACE + 1);
        return (settled.get(CLAIM_NAMESPACE_NOT_ALLOWED_REASON) ?? []).length === CLAIMS_PER_NAMESPACE + 1 - CAP
          ? settled
          : undefined;
      });
      expect(settledB.get('AddressAllocated')).toHaveLength(CAP);
      const heldAfter = (await client.listAll(ADDRESS_RESOURCE, { namespace: teamB })).items.map((a) => a.spec.address);
      expect(heldAfter.sort()).toEqual(heldBefore.sort());
      expect(await heldEntries(teamB)).toBe(CAP);
    } finally {
      for (const ns of [teamA, teamB, outsider]) {
        for (const claim of (await client.listAll(CLAIM_RESOURCE, { namespace: ns })).items) {
          await client.delete(CLAIM_RESOURCE, { namespace: ns, name: claim.metadata.name });
        }
      }
      await waitFor('the tenancy claims released', async () => {
        for (const ns of [teamA, teamB, outsider]) if ((await heldEntries(ns)) > 0) return false;
        return true;
      });
      await client.delete(POOL_RESOURCES.GlobalTallyIPPool, { name: POOL_NAME });
    }
  });
});

/** The decisions as pure functions: the verdict on one claim, and the per-key turns that keep a cap exact. */
const pool = 'GlobalTallyIPPool shared';

describe('tenancyVerdict', () => {
  it('admits any namespace without a selector, and refuses at the cap exactly', () => {
    fc.assert(
      fc.property(fc.nat(20), fc.nat(20), (cap, held) => {
        const verdict = tenancyVerdict({
          tenancy: { maxAddressesPerNamespace: cap },
          pool,
          namespace: 'team',
          namespaceLabels: undefined,
          held,
        });
        expect(verdict.admitted).toBe(held < cap);
        if (!verdict.admitted) {
          expect(verdict.reason).toBe('NamespaceCapReached');
          expect(verdict.message).toBe(
            `claims of namespace team hold ${held} addresses of ${pool}, its spec.maxAddressesPerNamespace is ${cap}: ` +
              'the claim is allocated as soon as one of them is released',
          );
        }
      }),
    );
  });

  it('refuses a namespace the selector does not pick, or one the cache does not hold, before counting', () => {
    const tenancy = { namespaceSelector: { matchLabels: { tier: 'gold' } }, maxAddressesPerNamespace: 5 };
    const ask = (labels: Record<string, string> | undefined) =>
      tenancyVerdict({ tenancy, pool, namespace: 'team', namespaceLabels: labels, held: 0 });
    expect(ask({ tier: 'gold', other: 'x' })).toEqual({ admitted: true });
    const unselected: (Record<string, string> | undefined)[] = [{ tier: 'silver' }, {}, undefined];
    for (const labels of unselected) {
      const verdict = ask(labels);
      expect(verdict.admitted ? '' : verdict.reason).toBe('NamespaceNotAllowed');
      expect(verdict.admitted ? '' : verdict.message).toBe(
        `namespace team is not selected by spec.namespaceSelector of ${pool} ({"matchLabels":{"tier":"gold"}}): ` +
          'label the namespace to match, or point spec.poolRef at another pool',
      );
    }
    // An empty selector selects every namespace (metav1.LabelSelector), a known namespace without labels too.
    expect(
      tenancyVerdict({ tenancy: { namespaceSelector: {} }, pool, namespace: 'team', namespaceLabels: {}, held: 9 }),
    ).toEqual({ admitted: true });
  });
});

describe('poolTenancy', () => {
  const stored = (kind: string, spec: unknown): StoredPool =>
    ({ apiVersion: 'ipam.cluster.x-k8s.io/v1alpha1', kind, metadata: { name: 'p' }, spec }) as StoredPool;
  it('reads the fields of global pools only, and only when one is set', () => {
    const spec = { addresses: ['10.0.0.0/24'], prefix: 24, maxAddressesPerNamespace: 2 };
    expect(poolTenancy(stored('GlobalTallyIPPool', spec))).toEqual({ maxAddressesPerNamespace: 2 });
    expect(poolTenancy(stored('GlobalTallyPrefixPool', { namespaceSelector: {} }))).toEqual({ namespaceSelector: {} });
    expect(poolTenancy(stored('TallyIPPool', spec))).toBeUndefined();
    expect(poolTenancy(stored('GlobalTallyIPPool', { addresses: ['10.0.0.0/24'], prefix: 24 }))).toBeUndefined();
  });
});

describe('KeyedSerializer', () => {
  it('never runs two tasks of one key at once, runs each key in submission order, and forgets idle keys', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ key: fc.constantFrom('a', 'b', 'c'), ticks: fc.nat(3) }), { minLength: 1, maxLength: 30 }),
        async (tasks) => {
          const serializer = new KeyedSerializer();
          const running = new Map<string, number>();
          const order = new Map<string, number[]>();
          await Promise.all(
            tasks.map((task, index) =>
              serializer.run(task.key, async () => {
                expect(running.get(task.key) ?? 0).toBe(0);
                running.set(task.key, 1);
                order.set(task.key, [...(order.get(task.key) ?? []), index]);
                for (let tick = 0; tick < task.ticks; tick += 1) await Promise.resolve();
                running.set(task.key, 0);
              }),
            ),
          );
          for (const indexes of order.values()) expect(indexes).toEqual([...indexes].sort((x, y) => x - y));
          expect(serializer.size).toBe(0);
        },
      ),
    );
  });

  it('runs the next task of a key after one that threw', async () => {
    const serializer = new KeyedSerializer();
    const failed = serializer.run('k', () => Promise.reject(new Error('boom')));
    const next = serializer.run('k', () => Promise.resolve('ran'));
    await expect(failed).rejects.toThrow('boom');
    await expect(next).resolves.toBe('ran');
    expect(serializer.size).toBe(0);
  });
});
