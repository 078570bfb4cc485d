import { isDeepStrictEqual } from 'node:util';
import type { SharedInformer } from '@tally-ipam/controller-kit/cache';
import { type Client, isNotFound } from '@tally-ipam/controller-kit/client';
import type { ReconcileContext, Reconciler, Request, Result } from '@tally-ipam/controller-kit/controller';
import type { SimMachineTemplate } from '../api/v1alpha1/types.js';
import { SIM_MACHINE_TEMPLATE_RESOURCE } from '../resources.js';
import { simInstanceAutoscaleStatus } from '../util/instance-size.js';

export interface SimMachineTemplateReconcilerDeps {
  readonly client: Client;
  readonly simMachineTemplates: SharedInformer<SimMachineTemplate>;
}

/**
 * Announces the size of the machines a SimMachineTemplate makes (`status.capacity`, `status.nodeInfo`), which the
 * cluster autoscaler reads on the template a MachineDeployment or MachineSet references to scale it from zero. Only
 * the status is written, and only when it differs; a template has no finalizer and nothing to tear down, and it is
 * not paused with a Cluster (ClusterClass shares one template among many Clusters).
 */
export class SimMachineTemplateReconciler implements Reconciler {
  constructor(private readonly deps: SimMachineTemplateReconcilerDeps) {}

  async reconcile(request: Request, context: ReconcileContext): Promise<Result> {
    const template = this.deps.simMachineTemplates.store.get(`${request.namespace}/${request.name}`);
    if (!template || template.metadata.deletionTimestamp) return {};
    const desired = simInstanceAutoscaleStatus(template.spec.template.spec.size);
    const status: Record<string, unknown> = template.status ?? {};
    if (isDeepStrictEqual(status.capacity, desired.capacity) && isDeepStrictEqual(status.nodeInfo, desired.nodeInfo)) {
      return {};
    }
    try {
      await this.deps.client.patchStatus(
        SIM_MACHINE_TEMPLATE_RESOURCE,
        template,
        { ...desired },
        {
          signal: context.signal,
        },
      );
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    return {};
  }
}
