import { CLUSTER_GROUP } from '@tally-ipam/api-types';
import type { KubeObject } from '@tally-ipam/controller-kit/cache';
import { resourceHasFilterLabel } from '@tally-ipam/controller-kit/capi';
import { Client } from '@tally-ipam/controller-kit/client';
import type { Controller } from '@tally-ipam/controller-kit/controller';
import type { Manager } from '@tally-ipam/controller-kit/manager';
import { MACHINE_POOL_RESOURCE } from '@tally-ipam/machinepool';
import { SIM_GROUP } from './api/v1alpha1/constants.js';
import {
  ADDRESS_RESOURCE,
  CLAIM_RESOURCE,
  CLUSTER_RESOURCE,
  MACHINE_RESOURCE,
  SIM_CLUSTER_RESOURCE,
  SIM_MACHINE_POOL_RESOURCE,
  SIM_MACHINE_RESOURCE,
} from './resources.js';
import type { SimControllerContext } from './shared.js';
import { newSimClusterController } from './simcluster/index.js';
import { newSimMachineController } from './simmachine/index.js';
import { newSimMachinePoolController } from './simmachinepool/index.js';
import { newSimMachineTemplateController } from './simmachinetemplate/index.js';
import { WorkloadClusters } from './simulated-cloud.js';

/** Field manager of the provider's writes unless the options name another. */
export const SIM_FIELD_MANAGER = 'sim-infra-controller';
const DEFAULT_CONCURRENCY = 10;

export interface SimInfraProviderOptions {
  /** Watch this namespace only (CAPI's `--namespace`); all namespaces when absent. */
  readonly namespace?: string | undefined;
  /** Only objects labelled `cluster.x-k8s.io/watch-filter=<value>` (CAPI's `--watch-filter`); empty = all. */
  readonly watchFilter?: string | undefined;
  /** SimMachines (and SimClusters) reconciled in parallel. Default 10. */
  readonly concurrency?: number | undefined;
  /** Field manager of the provider's writes, also on the workload clusters. Default `sim-infra-controller`. */
  readonly fieldManager?: string | undefined;
  /** The clock of conditions and Node heartbeats. Default `new Date()`. */
  readonly now?: (() => Date) | undefined;
}

/** What `setupSimInfraProvider` registered. */
export interface SimInfraProvider {
  readonly simClusterController: Controller;
  readonly simMachineController: Controller;
  readonly simMachinePoolController: Controller;
  readonly simMachineTemplateController: Controller;
}

/** A runnable that releases what the provider holds when the manager stops. */
function closingRunnable(close: () => void): { needLeaderElection: false; start(signal: AbortSignal): Promise<void> } {
  return {
    needLeaderElection: false,
    start: (signal) =>
      new Promise<void>((resolve) => {
        const stop = (): void => {
          close();
          resolve();
        };
        if (signal.aborted) stop();
        else signal.addEventListener('abort', stop, { once: true });
      }),
  };
}

/**
 * Registers the Sim infrastructure provider on a controller-kit Manager: the shared caches, and the SimCluster,
 * SimMachine, SimMachinePool and SimMachineTemplate controllers (each wired in its own folder, next to its reconciler:
 * `controller.ts` declares its watches, `watches.ts` what they look up). Call before `manager.start`. The template webhooks are
 * separate (`registerSimWebhooks`), since they need a serving certificate.
 */
export function setupSimInfraProvider(manager: Manager, options: SimInfraProviderOptions = {}): SimInfraProvider {
  const namespace = options.namespace || undefined;
  const now = options.now ?? ((): Date => new Date());
  const cache = manager.cache;
  const logger = manager.logger.child({ component: 'sim-infra' });
  const fieldManager = options.fieldManager ?? SIM_FIELD_MANAGER;
  let client = manager.client;
  if (fieldManager !== manager.client.fieldManager) {
    const own = new Client(manager.kubeConfig, { fieldManager });
    client = own;
    manager.add(closingRunnable(() => own.close()));
  }
  const workloads = new WorkloadClusters(client, fieldManager, logger);
  manager.add(closingRunnable(() => workloads.close()));

  const scope = { namespace };
  const simClusters = cache.informerFor(SIM_CLUSTER_RESOURCE, scope);
  const simMachines = cache.informerFor(SIM_MACHINE_RESOURCE, scope);
  const clusters = cache.informerFor(CLUSTER_RESOURCE, scope);
  const claims = cache.informerFor(CLAIM_RESOURCE, scope);
  const addresses = cache.informerFor(ADDRESS_RESOURCE, scope);
  const machines = cache.informerFor(MACHINE_RESOURCE, scope);
  const simMachinePools = cache.informerFor(SIM_MACHINE_POOL_RESOURCE, scope);
  const machinePools = cache.informerFor(MACHINE_POOL_RESOURCE, scope);
  const shared: SimControllerContext = {
    client,
    cache,
    registry: manager.registry,
    logger,
    recorderFor: (name) => manager.getEventRecorderFor(name),
    workloads,
    now,
    namespace,
    filter: resourceHasFilterLabel<KubeObject>(options.watchFilter ?? ''),
    concurrency: options.concurrency ?? DEFAULT_CONCURRENCY,
    informers: { simClusters, simMachines, simMachinePools, clusters, claims, addresses, machines, machinePools },
  };
  const simMachineController = newSimMachineController(shared);
  const simClusterController = newSimClusterController(shared);
  const simMachinePoolController = newSimMachinePoolController(shared);
  const simMachineTemplateController = newSimMachineTemplateController(shared);

  manager.add(simMachineController);
  manager.add(simClusterController);
  manager.add(simMachinePoolController);
  manager.add(simMachineTemplateController);
  logger.info({ namespace: namespace ?? '<all>', group: SIM_GROUP, owner: CLUSTER_GROUP }, 'Sim provider set up');
  return { simClusterController, simMachineController, simMachinePoolController, simMachineTemplateController };
}
