import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  isInfraMachinePoolProvisioned,
  machinePoolStatusFromInstances,
  normalizeProviderIDList,
  type PoolInstance,
  PoolInstancesError,
  provisionedStatus,
  REPLICAS_READY_CONDITION,
} from '../src/index.js';

const instances = fc
  .uniqueArray(fc.nat(40), { maxLength: 12 })
  .chain((indexes) =>
    fc.tuple(
      ...indexes.map((index) =>
        fc.record({
          instanceName: fc.constant(`worker-${index}`),
          providerID: fc.option(fc.constant(`sample://ns/worker-${index}`), { nil: undefined }),
          ready: fc.boolean(),
        }),
      ),
    ),
  )
  .map((list): PoolInstance[] => list);

describe('machinePoolStatusFromInstances', () => {
  it('reports replicas, the normalised providerIDList and ready/provisioned as CAPD does', () => {
    fc.assert(
      fc.property(instances, fc.option(fc.nat(14), { nil: undefined }), fc.boolean(), (list, desired, was) => {
        const state = machinePoolStatusFromInstances({
          instances: list,
          desiredReplicas: desired,
          wasProvisioned: was,
          observedGeneration: 3,
        });
        const ids = normalizeProviderIDList(list.map((instance) => instance.providerID));
        expect(state.status.replicas).toBe(list.length);
        expect(state.providerIDList).toEqual(ids.length > 0 ? ids : undefined);
        const allUp = list.length === (desired ?? 1) && list.every((instance) => instance.providerID !== undefined);
        expect(state.status.ready).toBe(was || allUp);
        expect(state.status.initialization.provisioned).toBe(state.status.ready);
        expect(state.replicasReadyCondition.type).toBe(REPLICAS_READY_CONDITION);
        expect(state.replicasReadyCondition.status).toBe(allUp ? 'True' : 'False');
        expect(state.replicasReadyCondition.observedGeneration).toBe(3);
        expect(state.readyReplicas).toBe(list.filter((instance) => instance.ready).length);
        expect(state.status.instances.map((instance) => instance.instanceName)).toEqual(
          list.map((instance) => instance.instanceName).sort(),
        );
        expect(state.status).not.toHaveProperty('infrastructureMachineKind');
      }),
    );
  });

  it('once provisioned stays provisioned while instances come and go (CAPI re-reads status.ready each time)', () => {
    const state = machinePoolStatusFromInstances({
      instances: [{ instanceName: 'a', ready: false }],
      desiredReplicas: 3,
      wasProvisioned: true,
      observedGeneration: 1,
    });
    expect(state.status.ready).toBe(true);
    expect(state.replicasReadyCondition.status).toBe('False');
    expect(state.replicasReadyCondition.message).toBe('0 of 3 desired replicas have a provider ID (1 instances exist)');
  });

  it('a pool scaled to zero is provisioned with no providerIDList at all', () => {
    const state = machinePoolStatusFromInstances({
      instances: [],
      desiredReplicas: 0,
      wasProvisioned: false,
      observedGeneration: 1,
    });
    expect(state.status).toMatchObject({ replicas: 0, ready: true, initialization: { provisioned: true } });
    expect(state.providerIDList).toBeUndefined();
  });

  it('carries infrastructureMachineKind and instance details', () => {
    const state = machinePoolStatusFromInstances({
      instances: [
        {
          instanceName: 'b',
          providerID: 'sample://b',
          ready: true,
          version: 'v1.34.0',
          addresses: [{ type: 'InternalIP', address: '10.0.0.2' }],
        },
      ],
      desiredReplicas: 1,
      wasProvisioned: false,
      observedGeneration: 1,
      infrastructureMachineKind: 'SampleMachine',
    });
    expect(state.status.infrastructureMachineKind).toBe('SampleMachine');
    expect(state.status.instances).toEqual([
      {
        instanceName: 'b',
        providerID: 'sample://b',
        ready: true,
        version: 'v1.34.0',
        addresses: [{ type: 'InternalIP', address: '10.0.0.2' }],
      },
    ]);
  });

  it('refuses duplicate instance names and shared provider IDs, naming them', () => {
    const input = { desiredReplicas: 2, wasProvisioned: false, observedGeneration: 1 };
    expect(() =>
      machinePoolStatusFromInstances({
        ...input,
        instances: [
          { instanceName: 'a', ready: true },
          { instanceName: 'a', ready: true },
        ],
      }),
    ).toThrow(PoolInstancesError);
    expect(() =>
      machinePoolStatusFromInstances({
        ...input,
        instances: [
          { instanceName: 'a', providerID: 'p://1', ready: true },
          { instanceName: 'b', providerID: 'p://1', ready: true },
        ],
      }),
    ).toThrow(/instances "a" and "b" share provider ID "p:\/\/1"/);
  });
});

describe('provisioned (InfraMachinePool: initialization completed)', () => {
  it('writes both status.ready and status.initialization.provisioned', () => {
    expect(provisionedStatus()).toEqual({ ready: true, initialization: { provisioned: true } });
  });

  it('reads provisioned the way CAPI v1.12 does: status.ready only', () => {
    expect(isInfraMachinePoolProvisioned({ status: { ready: true } })).toBe(true);
    expect(isInfraMachinePoolProvisioned({ status: { initialization: { provisioned: true } } })).toBe(false);
    expect(isInfraMachinePoolProvisioned({})).toBe(false);
  });
});
