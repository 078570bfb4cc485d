import { readFileSync } from 'node:fs';
import { generatedSimCRDFiles, SIM_GROUP } from '@tally-ipam/sim-infra';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import * as z from 'zod';

const ClusterRole = z.object({
  kind: z.literal('ClusterRole'),
  metadata: z.object({ name: z.string(), labels: z.record(z.string(), z.string()).optional() }),
  rules: z.array(
    z.object({ apiGroups: z.array(z.string()), resources: z.array(z.string()), verbs: z.array(z.string()) }),
  ),
});
type ClusterRole = z.infer<typeof ClusterRole>;

function role(file: string): ClusterRole {
  return ClusterRole.parse(parse(readFileSync(new URL(`../config/rbac/${file}`, import.meta.url), 'utf8')));
}

function allows(clusterRole: ClusterRole, group: string, resource: string, verb: string): boolean {
  return clusterRole.rules.some(
    (rule) => rule.apiGroups.includes(group) && rule.resources.includes(resource) && rule.verbs.includes(verb),
  );
}

const simResources = generatedSimCRDFiles().map((file) => file.crd.spec.names.plural);

describe('RBAC manifests', () => {
  it('aggregate full access to every Sim kind into the Cluster API manager role', () => {
    const aggregated = role('capi-aggregated-role.yaml');
    expect(aggregated.metadata.labels?.['cluster.x-k8s.io/aggregate-to-manager']).toBe('true');
    for (const resource of simResources) {
      for (const verb of ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch']) {
        expect(allows(aggregated, SIM_GROUP, resource, verb), `${verb} ${resource}`).toBe(true);
      }
    }
  });

  it('give the controller what its reconcilers do', () => {
    const manager = role('role.yaml');
    for (const resource of ['simclusters', 'simmachines', 'simmachinepools']) {
      expect(allows(manager, SIM_GROUP, resource, 'watch')).toBe(true);
      expect(allows(manager, SIM_GROUP, resource, 'patch')).toBe(true);
      expect(allows(manager, SIM_GROUP, `${resource}/status`, 'patch')).toBe(true);
      expect(allows(manager, SIM_GROUP, `${resource}/finalizers`, 'update')).toBe(true);
    }
    for (const verb of ['create', 'delete', 'watch']) {
      expect(allows(manager, 'ipam.cluster.x-k8s.io', 'ipaddressclaims', verb)).toBe(true);
    }
    expect(allows(manager, 'ipam.cluster.x-k8s.io', 'ipaddresses', 'watch')).toBe(true);
    expect(allows(manager, 'cluster.x-k8s.io', 'machines', 'watch')).toBe(true);
    expect(allows(manager, 'cluster.x-k8s.io', 'clusters', 'watch')).toBe(true);
    expect(allows(manager, 'cluster.x-k8s.io', 'machinepools', 'watch')).toBe(true);
    expect(allows(manager, 'cluster.x-k8s.io', 'machines', 'delete')).toBe(true);
    expect(allows(manager, SIM_GROUP, 'simmachines', 'create')).toBe(true);
    expect(allows(manager, '', 'secrets', 'get')).toBe(true);
    expect(allows(manager, '', 'secrets', 'list')).toBe(false);
  });
});
