import { createGlobalSetup } from './vitest-setup.js';

/**
 * A ready-made global setup (`globalSetup: ['@tally-ipam/testenv/vitest/global-setup']`): one control plane with
 * kube-controller-manager and no CRDs. Write your own with `createGlobalSetup` to install CRDs.
 */
export default createGlobalSetup({ controllerManager: true });
