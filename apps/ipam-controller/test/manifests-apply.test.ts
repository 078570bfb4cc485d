import { describeAppliedComponents } from '@tally-ipam/ship/vitest';
import { testEnv } from '@tally-ipam/testenv/vitest';
import { IPAM_PROVIDER } from '../scripts/render-components.js';

const ipam = 'ipam.cluster.x-k8s.io';

describeAppliedComponents(IPAM_PROVIDER, () => testEnv().kubeConfig, {
  access: [
    // The lock objects of 0.1.0 are retired: nothing of theirs is granted.
    [{ verb: 'list', group: ipam, resource: 'tallyaddresslocks' }, false],
    [{ verb: 'update', group: ipam, resource: 'tallyaddressledgers' }, true],
    [{ verb: 'patch', group: ipam, resource: 'tallyaddressledgers' }, false],
    [{ verb: 'create', group: ipam, resource: 'ipaddresses', namespace: 'any' }, true],
    [{ verb: 'patch', group: ipam, resource: 'ipaddressclaims', subresource: 'status', namespace: 'any' }, true],
    [{ verb: 'update', group: ipam, resource: 'tallyippools', subresource: 'finalizers', namespace: 'any' }, true],
    [{ verb: 'watch', group: 'cluster.x-k8s.io', resource: 'clusters' }, true],
    // Namespaces: cached for global pools' namespaceSelector, never written.
    [{ verb: 'watch', group: '', resource: 'namespaces' }, true],
    [{ verb: 'list', group: '', resource: 'namespaces' }, true],
    [{ verb: 'patch', group: '', resource: 'namespaces' }, false],
    [{ verb: 'create', group: 'ipam.metal3.io', resource: 'ipaddresses', namespace: 'any' }, true],
    [{ verb: 'patch', group: 'ipam.metal3.io', resource: 'ipclaims', subresource: 'status', namespace: 'any' }, true],
    [{ verb: 'create', group: 'events.k8s.io', resource: 'events', namespace: 'any' }, true],
    [{ verb: 'update', group: 'coordination.k8s.io', resource: 'leases', namespace: 'tally-system' }, true],
    // Refused: leases elsewhere, writes to Clusters, deleting claims or pools, Secrets, core Events.
    [{ verb: 'update', group: 'coordination.k8s.io', resource: 'leases', namespace: 'default' }, false],
    [{ verb: 'patch', group: 'cluster.x-k8s.io', resource: 'clusters', namespace: 'any' }, false],
    [{ verb: 'delete', group: ipam, resource: 'ipaddressclaims', namespace: 'any' }, false],
    [{ verb: 'delete', group: ipam, resource: 'tallyippools', namespace: 'any' }, false],
    [{ verb: 'create', group: ipam, resource: 'tallyippools', namespace: 'any' }, false],
    [{ verb: 'delete', group: 'ipam.metal3.io', resource: 'ippools', namespace: 'any' }, false],
    [{ verb: 'get', group: '', resource: 'secrets', namespace: 'tally-system' }, false],
    [{ verb: 'create', group: '', resource: 'events', namespace: 'any' }, false],
  ],
});
