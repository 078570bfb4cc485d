import { validatingWebhookConfiguration } from '@tally-ipam/controller-kit/webhook';
import { describeImageRun } from '@tally-ipam/ship/vitest';
import {
  ADDRESS_RESOURCE,
  CLAIM_RESOURCE,
  CLUSTER_RESOURCE,
  MACHINE_RESOURCE,
  NODE_RESOURCE,
  SECRET_RESOURCE,
  SIM_GROUP,
  SIM_MACHINE_RESOURCE,
  SIM_MACHINE_TEMPLATE_RESOURCE,
  simCRDDirectory,
  simValidatingWebhookSpecs,
} from '@tally-ipam/sim-infra';
import { CLUSTER_NAME_LABEL, createClusterKubeconfigSecret } from '@tally-ipam/testenv';
import { expect, it } from 'vitest';
import { SIM_PROVIDER } from '../scripts/render-components.js';

const IPAM_GROUP = 'ipam.cluster.x-k8s.io';
const POOL = { apiGroup: IPAM_GROUP, kind: 'TallyIPPool', name: 'nodes' };

/** Polls `probe` until it returns a value; the failure names what never came (a deadline, not a measurement). */
async function eventually<T>(what: string, probe: () => Promise<T | undefined>, output: () => string): Promise<T> {
  const deadline = Date.now() + 120_000;
  let lastError: unknown;
  for (;;) {
    const value = await probe().catch((error: unknown) => {
      lastError = error;
      return undefined;
    });
    if (value !== undefined) return value;
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}; controller output:\n${output().slice(-3000)}`, {
        cause: lastError,
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describeImageRun(SIM_PROVIDER, {
  // Claims carry blockOwnerDeletion owner references to their SimMachine: with OwnerReferencesPermissionEnforcement
  // they need the `/finalizers` rule of the shipped role.
  controlPlane: {
    crds: [simCRDDirectory()],
    capiCRDs: ['cluster.x-k8s.io', 'ipam.cluster.x-k8s.io'],
    apiServerFlags: ['--enable-admission-plugins=OwnerReferencesPermissionEnforcement'],
  },
  // The default of --leader-election-id (README).
  leaseName: 'sim-infra-controller-leader-election',
  tests(run) {
    it('provisions a SimMachine with an IPAM address and registers its Node, with the ServiceAccount token', async () => {
      const { admin, controller, plane } = run();
      const output = (): string => controller.output();
      const ns = await run().createNamespace('sim-image');
      const cluster = await admin.create(CLUSTER_RESOURCE, {
        apiVersion: 'cluster.x-k8s.io/v1beta2',
        kind: 'Cluster',
        metadata: { name: 'workload', namespace: ns },
        spec: { infrastructureRef: { apiGroup: SIM_GROUP, kind: 'SimCluster', name: 'workload' } },
      });
      // What CAPI's Cluster controller would report, and the workload cluster's kubeconfig (this API server).
      await admin.mergePatch(
        CLUSTER_RESOURCE,
        { namespace: ns, name: 'workload' },
        { status: { initialization: { infrastructureProvisioned: true } } },
        { subresource: 'status' },
      );
      await createClusterKubeconfigSecret(plane.kubeConfig(), {
        namespace: ns,
        clusterName: 'workload',
        kubeconfigYaml: plane.kubeconfigYaml,
        clusterUid: cluster.metadata.uid ?? '',
      });
      await admin.create(SECRET_RESOURCE, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'bootstrap', namespace: ns },
        type: 'cluster.x-k8s.io/secret',
        data: { value: Buffer.from('#cloud-config\n').toString('base64') },
      });
      const machine = await admin.create(MACHINE_RESOURCE, {
        apiVersion: 'cluster.x-k8s.io/v1beta2',
        kind: 'Machine',
        metadata: { name: ns, namespace: ns, labels: { [CLUSTER_NAME_LABEL]: 'workload' } },
        spec: {
          clusterName: 'workload',
          bootstrap: { dataSecretName: 'bootstrap' },
          infrastructureRef: { apiGroup: SIM_GROUP, kind: 'SimMachine', name: ns },
        },
      });
      await admin.create(SIM_MACHINE_RESOURCE, {
        apiVersion: `${SIM_GROUP}/v1alpha1`,
        kind: 'SimMachine',
        metadata: {
          name: ns,
          namespace: ns,
          labels: { [CLUSTER_NAME_LABEL]: 'workload' },
          ownerReferences: [
            {
              apiVersion: 'cluster.x-k8s.io/v1beta2',
              kind: 'Machine',
              name: ns,
              uid: machine.metadata.uid ?? '',
              controller: true,
              blockOwnerDeletion: true,
            },
          ],
        },
        spec: { network: { devices: [{ name: 'eth0', addressesFromPools: [POOL] }] } },
      });

      // The test plays the IPAM provider: it answers the SimMachine's claim with an IPAddress.
      const claimName = `${ns}-eth0-0`;
      const claim = await eventually(
        `IPAddressClaim ${claimName}`,
        () => admin.get(CLAIM_RESOURCE, { namespace: ns, name: claimName }),
        output,
      );
      expect(claim.metadata.ownerReferences).toEqual([
        expect.objectContaining({ kind: 'SimMachine', name: ns, controller: true, blockOwnerDeletion: true }),
      ]);
      await admin.create(ADDRESS_RESOURCE, {
        apiVersion: `${IPAM_GROUP}/v1beta2`,
        kind: 'IPAddress',
        metadata: { name: claimName, namespace: ns },
        spec: {
          claimRef: { name: claimName },
          poolRef: POOL,
          address: '10.212.0.10',
          prefix: 24,
          gateway: '10.212.0.1',
        },
      });
      await admin.mergePatch(
        CLAIM_RESOURCE,
        { namespace: ns, name: claimName },
        { status: { addressRef: { name: claimName } } },
        { subresource: 'status' },
      );

      const provisioned = await eventually(
        'SimMachine provisioned with its address',
        async () => {
          const simMachine = await admin.get(SIM_MACHINE_RESOURCE, { namespace: ns, name: ns });
          return simMachine.status?.initialization?.provisioned ? simMachine : undefined;
        },
        output,
      );
      expect(provisioned.spec.providerID).toBe(`sim://${ns}/${ns}`);
      expect(provisioned.status?.addresses).toContainEqual({ type: 'InternalIP', address: '10.212.0.10' });
      const node = await eventually(
        'the Node registered through the workload kubeconfig, Ready',
        async () => {
          const found = await admin.get(NODE_RESOURCE, { name: ns });
          const ready = found.status?.conditions?.find((condition) => condition.type === 'Ready');
          return ready?.status === 'True' ? found : undefined;
        },
        output,
      );
      expect(node.spec?.providerID).toBe(`sim://${ns}/${ns}`);

      // Deletion: the Node and the claim go, then the finalizer.
      await admin.delete(SIM_MACHINE_RESOURCE, { namespace: ns, name: ns });
      await eventually(
        'SimMachine, its claim and its Node gone',
        async () => {
          const machines = await admin.list(SIM_MACHINE_RESOURCE, { namespace: ns });
          const claims = await admin.list(CLAIM_RESOURCE, { namespace: ns });
          const nodes = await admin.list(NODE_RESOURCE, {});
          const left = machines.items.length + claims.items.length;
          return left === 0 && !nodes.items.some((item) => item.metadata.name === ns) ? true : undefined;
        },
        output,
      );
    });

    it('serves the template webhook from the certificate in /tmp: spec.template.spec is immutable', async () => {
      const { admin, controller } = run();
      const ns = await run().createNamespace('sim-hook');
      await admin.create(SIM_MACHINE_TEMPLATE_RESOURCE, {
        apiVersion: `${SIM_GROUP}/v1alpha1`,
        kind: 'SimMachineTemplate',
        metadata: { name: 'workers', namespace: ns },
        spec: { template: { spec: { network: { devices: [{ name: 'eth0', addressesFromPools: [POOL] }] } } } },
      });
      // The API server calls the webhook server of the process started from the image (url mode: no Service here).
      await run().registerWebhooks(
        validatingWebhookConfiguration({
          name: `sim-image-test-${ns}`,
          client: run().webhookClient,
          webhooks: simValidatingWebhookSpecs({
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
          }),
        }),
      );
      const changed = { spec: { template: { spec: { network: { devices: [{ name: 'eth1' }] } } } } };
      // Registration takes effect asynchronously: dry-run updates until the webhook answers.
      const refusal = await eventually(
        'the webhook refuses the change',
        () =>
          admin
            .mergePatch(SIM_MACHINE_TEMPLATE_RESOURCE, { namespace: ns, name: 'workers' }, changed, { dryRun: 'All' })
            .then(
              () => undefined,
              (failure: unknown) => failure,
            ),
        () => controller.output(),
      );
      expect(String(refusal)).toContain('spec.template.spec is immutable');
    });
  },
});
