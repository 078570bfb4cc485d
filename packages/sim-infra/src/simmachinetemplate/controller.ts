import type { Controller } from '@tally-ipam/controller-kit/controller';
import { SIM_MACHINE_TEMPLATE_RESOURCE } from '../resources.js';
import { newSimController, type SimControllerContext } from '../shared.js';
import { SimMachineTemplateReconciler } from './reconciler.js';

/** The SimMachineTemplate controller: keeps each template's autoscale-from-zero status; watches nothing else. */
export function newSimMachineTemplateController(shared: SimControllerContext): Controller {
  const reconciler = new SimMachineTemplateReconciler({
    client: shared.client,
    simMachineTemplates: shared.cache.informerFor(SIM_MACHINE_TEMPLATE_RESOURCE, { namespace: shared.namespace }),
  });
  return newSimController(shared, 'simmachinetemplate', SIM_MACHINE_TEMPLATE_RESOURCE, reconciler);
}
