/** The tenancy decisions as pure functions: the verdict on one claim, and the per-key turns that keep a cap exact. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeyedSerializer, poolTenancy, type StoredPool, tenancyVerdict } from '../src/index.js';

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
    for (const labels of [{ tier: 'silver' }, {}, undefined]) {
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
