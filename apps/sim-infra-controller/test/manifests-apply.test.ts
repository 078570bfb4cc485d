import { describeAppliedComponents } from '@tally-ipam/ship/vitest';
import { SIM_GROUP } from '@tally-ipam/sim-infra';
import { testEnv } from '@tally-ipam/testenv/vitest';
import { SIM_PROVIDER } from '../scripts/render-components.js';

const ipam = 'ipam.cluster.x-k8s.io';
const capi = 'cluster.x-k8s.io';

describeAppliedComponents(SIM_PROVIDER, () => testEnv().kubeConfig, {
  access: [
    [{ verb: 'watch', group: SIM_GROUP, resource: 'simmachines' }, true],
    [{ verb: 'patch', group: SIM_GROUP, resource: 'simmachinepools', subresource: 'status', namespace: 'any' }, true],
    [{ verb: 'update', group: SIM_GROUP, resource: 'simmachines', subresource: 'finalizers', namespace: 'any' }, true],
    [{ verb: 'create', group: SIM_GROUP, resource: 'simmachines', namespace: 'any' }, true],
    [{ verb: 'watch', group: SIM_GROUP, resource: 'simmachinetemplates' }, true],
    [{ verb: 'create', group: ipam, resource: 'ipaddressclaims', namespace: 'any' }, true],
    [{ verb: 'delete', group: ipam, resource: 'ipaddressclaims', namespace: 'any' }, true],
    [{ verb: 'watch', group: ipam, resource: 'ipaddresses' }, true],
    [{ verb: 'watch', group: capi, resource: 'machinepools' }, true],
    [{ verb: 'delete', group: capi, resource: 'machines', namespace: 'any' }, true],
    [{ verb: 'get', group: '', resource: 'secrets', namespace: 'any' }, true],
    [{ verb: 'create', group: 'events.k8s.io', resource: 'events', namespace: 'any' }, true],
    [{ verb: 'update', group: 'coordination.k8s.io', resource: 'leases', namespace: 'sim-system' }, true],
    // Refused: Leases elsewhere, listing Secrets, writing Clusters or IPAddresses (the IPAM provider's), deleting
    // SimClusters or templates, Nodes of the management cluster, core Events.
    [{ verb: 'update', group: 'coordination.k8s.io', resource: 'leases', namespace: 'default' }, false],
    [{ verb: 'list', group: '', resource: 'secrets', namespace: 'any' }, false],
    [{ verb: 'patch', group: capi, resource: 'clusters', namespace: 'any' }, false],
    [{ verb: 'create', group: ipam, resource: 'ipaddresses', namespace: 'any' }, false],
    [{ verb: 'delete', group: SIM_GROUP, resource: 'simclusters', namespace: 'any' }, false],
    [{ verb: 'update', group: SIM_GROUP, resource: 'simmachinetemplates', namespace: 'any' }, false],
    [{ verb: 'create', group: '', resource: 'nodes' }, false],
    [{ verb: 'create', group: '', resource: 'events', namespace: 'any' }, false],
  ],
});
