import { tallyCRDDirectory } from '@tally-ipam/api-types';
import type { ResourceKind } from '@tally-ipam/controller-kit';
import { poolWebhookConfiguration } from '@tally-ipam/ipam-provider';
import { describeImageRun } from '@tally-ipam/ship/vitest';
import { expect, it } from 'vitest';
import { IPAM_PROVIDER } from '../scripts/render-components.js';
import { ADDRESSES, CLAIMS, CLUSTERS, claim, cluster, eventually, field, ipPool, POOLS } from './support.js';

const EVENTS: ResourceKind = { apiVersion: 'events.k8s.io/v1', kind: 'Event', plural: 'events', namespaced: true };

describeImageRun(IPAM_PROVIDER, {
  // An API server of its own with OwnerReferencesPermissionEnforcement, so the `/finalizers` rules are exercised:
  // IPAddresses carry blockOwnerDeletion owner references to their claim and pool.
  controlPlane: {
    crds: [tallyCRDDirectory()],
    capiCRDs: ['ipam.cluster.x-k8s.io', 'cluster.x-k8s.io'],
    apiServerFlags: ['--enable-admission-plugins=OwnerReferencesPermissionEnforcement'],
  },
  // The default of --leader-election-id (README).
  leaseName: 'tally-ipam-controller-leader-election',
  tests(run) {
    it('allocates an address for a claim against a TallyIPPool with the ServiceAccount token (the IPAM core path)', async () => {
      const { admin, controller } = run();
      const ns = await run().createNamespace('image');
      await admin.create(CLUSTERS, cluster(ns, 'workload'));
      await admin.create(POOLS, ipPool(ns, 'pool', { addresses: ['10.210.0.10-10.210.0.20'], prefix: 24 }));
      await admin.create(CLAIMS, claim(ns, 'machine-0', { kind: 'TallyIPPool', name: 'pool' }, 'workload'));
      const address = await eventually('IPAddress for machine-0', () =>
        admin.get(ADDRESSES, { namespace: ns, name: 'machine-0' }),
      ).catch((error: unknown) => {
        const output = controller.output().slice(-3000);
        throw new Error(`${String(error)}\ncontroller output (last 3000 characters):\n${output}`, { cause: error });
      });
      expect(field(address, 'spec', 'address')).toMatch(/^10\.210\.0\.(1\d|20)$/);
      expect(field(address, 'spec', 'prefix')).toBe(24);
      const claimed = await eventually('claim status.addressRef', async () => {
        const current = await admin.get(CLAIMS, { namespace: ns, name: 'machine-0' });
        if (field(current, 'status', 'addressRef', 'name') === undefined) throw new Error('no status.addressRef yet');
        return current;
      });
      expect(field(claimed, 'status', 'addressRef', 'name')).toBe('machine-0');
      const event = await eventually('AddressAllocated event', async () => {
        const events = await admin.list(EVENTS, { namespace: ns });
        const found = events.items.find((item) => field(item, 'reason') === 'AddressAllocated');
        if (!found) throw new Error('no AddressAllocated event yet');
        return found;
      });
      expect(field(event, 'regarding', 'name')).toBe('machine-0');
    });

    it('serves the pool admission webhook from the certificate in /tmp: a pool with an address cannot be deleted', async () => {
      const { admin } = run();
      const ns = await run().createNamespace('hook');
      await admin.create(CLUSTERS, cluster(ns, 'workload'));
      await admin.create(POOLS, ipPool(ns, 'pool', { addresses: ['10.211.0.10-10.211.0.20'], prefix: 24 }));
      await admin.create(CLAIMS, claim(ns, 'machine-0', { kind: 'TallyIPPool', name: 'pool' }, 'workload'));
      await eventually('IPAddress for machine-0', () => admin.get(ADDRESSES, { namespace: ns, name: 'machine-0' }));
      // The API server calls the webhook server of the process started from the image (url mode: no Service here).
      await run().registerWebhooks(
        poolWebhookConfiguration({
          name: `tally-image-test-${ns}`,
          client: run().webhookClient,
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
        }),
      );
      // Registration takes effect asynchronously: dry-run deletes until the webhook answers.
      const refusal = await eventually('the webhook refuses the delete', async () => {
        const error = await admin.delete(POOLS, { namespace: ns, name: 'pool' }, { dryRun: 'All' }).then(
          () => undefined,
          (failure: unknown) => failure,
        );
        if (error === undefined) throw new Error('delete admitted: the webhook is not called yet');
        return error;
      });
      expect(String(refusal)).toContain('Pool has IPAddresses allocated');
      await admin.get(POOLS, { namespace: ns, name: 'pool' });
    });
  },
});
