import { parseIPAddressClaim } from '@tally-ipam/api-types';
import { testEnv, withTestNamespace } from '@tally-ipam/testenv/vitest';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CLAIM_V1BETA1, CLAIM_V1BETA2, capiLogHint, Objects, rejection } from './harness.js';

// Another IPAM provider's pool: the Tally controller the global setup runs leaves these claims to the test, which
// writes their status as such a provider would.
const POOL_REF = { apiGroup: 'ipam.example.com', kind: 'OtherProvidersPool', name: 'pool-a' };
const TIME = '2026-01-01T00:00:00Z';

/** A claim as v1beta2 stores it: metav1 conditions, and the old Cluster API conditions under `deprecated.v1beta1`. */
const ClaimV1Beta2 = z.object({
  apiVersion: z.literal('ipam.cluster.x-k8s.io/v1beta2'),
  spec: z.object({ poolRef: z.object({ apiGroup: z.string(), kind: z.string(), name: z.string() }) }),
  status: z
    .object({
      addressRef: z.object({ name: z.string() }).optional(),
      conditions: z
        .array(z.object({ type: z.string(), status: z.string(), reason: z.string(), message: z.string().optional() }))
        .optional(),
      deprecated: z
        .object({
          v1beta1: z.object({
            conditions: z.array(
              z.object({ type: z.string(), status: z.string(), severity: z.string().optional(), reason: z.string() }),
            ),
          }),
        })
        .optional(),
    })
    .optional(),
});

/** The same claim seen by a v1beta1 client (e.g. an IPAM provider built on Cluster API < 1.11). */
const ClaimV1Beta1 = z.object({
  apiVersion: z.literal('ipam.cluster.x-k8s.io/v1beta1'),
  spec: z.object({ poolRef: z.object({ apiGroup: z.string(), kind: z.string(), name: z.string() }) }),
  status: z.object({
    addressRef: z.object({ name: z.string() }).optional(),
    v1beta2: z
      .object({ conditions: z.array(z.object({ type: z.string(), status: z.string(), reason: z.string() })) })
      .optional(),
  }),
});

describe('IPAddressClaims through Cluster API conversion and admission webhooks', () => {
  it('stores a claim created and updated at v1beta1 as v1beta2, with the v1beta1 conditions moved aside', async () => {
    const env = testEnv();
    const ns = await withTestNamespace(env.kubeConfig, 'e2e-ipam-v1beta1');
    const objects = new Objects(env.kubeConfig, ns.name);
    await objects.create(CLAIM_V1BETA1, {
      apiVersion: 'ipam.cluster.x-k8s.io/v1beta1',
      kind: 'IPAddressClaim',
      metadata: { name: 'claim' },
      spec: { poolRef: POOL_REF },
    });
    // A v1beta1 provider writes its status: Cluster API v1beta1 conditions (with severity) plus the v1beta2 ones.
    await objects.mergePatchStatus(CLAIM_V1BETA1, 'claim', {
      status: {
        addressRef: { name: 'claim-address' },
        conditions: [
          { type: 'Ready', status: 'False', severity: 'Warning', reason: 'PoolExhausted', lastTransitionTime: TIME },
        ],
        v1beta2: {
          conditions: [
            {
              type: 'Ready',
              status: 'False',
              reason: 'PoolExhausted',
              message: 'no free address',
              lastTransitionTime: TIME,
            },
          ],
        },
      },
    });

    const stored = await objects.get(CLAIM_V1BETA2, 'claim');
    const claim = ClaimV1Beta2.parse(stored);
    expect(claim.spec.poolRef).toEqual(POOL_REF);
    expect(claim.status?.addressRef).toEqual({ name: 'claim-address' });
    // Without the conversion webhook the API server would only relabel the object: the severity would sit in
    // status.conditions, and nothing would be under deprecated.
    expect(claim.status?.deprecated?.v1beta1.conditions).toEqual([
      { type: 'Ready', status: 'False', severity: 'Warning', reason: 'PoolExhausted' },
    ]);
    expect(claim.status?.conditions).toEqual([
      { type: 'Ready', status: 'False', reason: 'PoolExhausted', message: 'no free address' },
    ]);
    // Tally's own schema accepts the converted object.
    const parsed = parseIPAddressClaim(stored);
    expect(parsed.success ? [] : parsed.error.issues).toEqual([]);
  });

  it('shows a v1beta1 client the conditions a v1beta2 provider (Tally) writes', async () => {
    const env = testEnv();
    const ns = await withTestNamespace(env.kubeConfig, 'e2e-ipam-v1beta2');
    const objects = new Objects(env.kubeConfig, ns.name);
    await objects.create(CLAIM_V1BETA2, {
      apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
      kind: 'IPAddressClaim',
      metadata: { name: 'claim' },
      spec: { poolRef: POOL_REF },
    });
    await objects.mergePatchStatus(CLAIM_V1BETA2, 'claim', {
      status: {
        addressRef: { name: 'claim' },
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'Ready',
            message: '',
            lastTransitionTime: TIME,
            observedGeneration: 1,
          },
        ],
      },
    });
    const seen = ClaimV1Beta1.parse(await objects.get(CLAIM_V1BETA1, 'claim'));
    expect(seen.spec.poolRef).toEqual(POOL_REF);
    expect(seen.status.addressRef).toEqual({ name: 'claim' });
    expect(seen.status.v1beta2?.conditions).toEqual([{ type: 'Ready', status: 'True', reason: 'Ready' }]);
  });

  it('rejects a change to a claim spec through the v1beta1 API (validating webhook behind conversion)', async () => {
    const env = testEnv();
    const ns = await withTestNamespace(env.kubeConfig, 'e2e-ipam-immutable');
    const objects = new Objects(env.kubeConfig, ns.name);
    await objects.create(CLAIM_V1BETA1, {
      apiVersion: 'ipam.cluster.x-k8s.io/v1beta1',
      kind: 'IPAddressClaim',
      metadata: { name: 'claim' },
      spec: { poolRef: POOL_REF },
    });
    const rejected = await rejection(
      objects.mergePatch(CLAIM_V1BETA1, 'claim', { spec: { poolRef: { ...POOL_REF, name: 'pool-b' } } }),
    );
    // The webhook returns a bare field.Forbidden, which controller-runtime turns into a 403 denial.
    expect(rejected.code, `${rejected.body}; ${capiLogHint(env)}`).toBe(403);
    expect(rejected.body).toContain('admission webhook \\"validation.ipaddressclaim.ipam.cluster.x-k8s.io\\" denied');
    expect(rejected.body).toContain('IPAddressClaim spec is immutable');
    const unchanged = ClaimV1Beta2.parse(await objects.get(CLAIM_V1BETA2, 'claim'));
    expect(unchanged.spec.poolRef.name).toBe('pool-a');
  });
});
