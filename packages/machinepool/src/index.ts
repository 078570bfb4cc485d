/**
 * @tally-ipam/machinepool: helpers for Cluster API's InfraMachinePool contract (v1beta2) as CAPI v1.12's MachinePool
 * controller reads it, MachinePool Machines included. See the README for the rule each helper serves.
 */
export * from './autoscale-from-zero.js';
export * from './bootstrap.js';
export * from './constants.js';
export * from './contract-fields.js';
export * from './crd.js';
export * from './label-format.js';
export * from './machine-pool-machines.js';
export * from './object-conditions.js';
export * from './owners.js';
export * from './pause.js';
export * from './pool-status.js';
export * from './provider-ids.js';
export * from './provisioned.js';
export * from './ready-condition.js';
export * from './resources.js';
export * from './scale-down.js';
export * from './write-state.js';
