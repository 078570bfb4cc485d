import type { Condition } from '@tally-ipam/controller-kit/capi';
import { describe, expect, it } from 'vitest';
import { summarizeReadyCondition } from '../src/index.js';

const TIME = '2026-11-22T10:00:00Z';

function condition(type: string, status: Condition['status'], reason: string, message = ''): Condition {
  return { type, status, reason, message, lastTransitionTime: TIME, observedGeneration: 2 };
}

describe('summarizeReadyCondition (InfraMachinePool: conditions, Ready roll-up)', () => {
  const dependsOn = ['ReplicasReady', 'InstancesProvisioned'];

  it('is True when every dependency is True', () => {
    expect(
      summarizeReadyCondition({
        conditions: [
          condition('ReplicasReady', 'True', 'ReplicasReady'),
          condition('InstancesProvisioned', 'True', 'Provisioned'),
        ],
        dependsOn,
        observedGeneration: 4,
      }),
    ).toEqual({ type: 'Ready', status: 'True', reason: 'Ready', message: '', observedGeneration: 4 });
  });

  it('is False with the first False reason and every False message', () => {
    expect(
      summarizeReadyCondition({
        conditions: [
          condition('InstancesProvisioned', 'False', 'QuotaExceeded', 'quota of 3 instances reached'),
          condition('ReplicasReady', 'False', 'WaitingForReplicas', '1 of 3 desired replicas have a provider ID'),
        ],
        dependsOn,
        observedGeneration: 4,
      }),
    ).toEqual({
      type: 'Ready',
      status: 'False',
      reason: 'WaitingForReplicas',
      message:
        'ReplicasReady: 1 of 3 desired replicas have a provider ID; InstancesProvisioned: quota of 3 instances reached',
      observedGeneration: 4,
    });
  });

  it('is Unknown when nothing is False but a dependency is Unknown or missing', () => {
    const summary = summarizeReadyCondition({
      conditions: [condition('ReplicasReady', 'Unknown', 'Probing')],
      dependsOn,
      observedGeneration: 1,
    });
    expect(summary).toMatchObject({ status: 'Unknown', reason: 'ReadyUnknown' });
    // As CAPI's summary: a dependency without a message is named with its reason.
    expect(summary.message).toBe('ReplicasReady: Probing; InstancesProvisioned: not reported yet');
  });

  it('a False summary names the Unknown dependencies too, in the order of dependsOn', () => {
    expect(
      summarizeReadyCondition({
        conditions: [
          condition('ReplicasReady', 'Unknown', 'Probing', 'no answer from the cloud yet'),
          condition('InstancesProvisioned', 'False', 'QuotaExceeded', 'quota of 3 instances reached'),
        ],
        dependsOn,
        observedGeneration: 4,
      }),
    ).toEqual({
      type: 'Ready',
      status: 'False',
      reason: 'QuotaExceeded',
      message: 'ReplicasReady: no answer from the cloud yet; InstancesProvisioned: quota of 3 instances reached',
      observedGeneration: 4,
    });
  });

  it('a terminal failure wins over True dependencies, and deletion wins over everything', () => {
    const allTrue = [
      condition('ReplicasReady', 'True', 'ReplicasReady'),
      condition('InstancesProvisioned', 'True', 'P'),
    ];
    const failure = { reason: 'InvalidConfiguration', message: 'image "x" does not exist: fix spec.template.image' };
    expect(
      summarizeReadyCondition({ conditions: allTrue, dependsOn, observedGeneration: 1, terminalFailure: failure }),
    ).toEqual({ type: 'Ready', status: 'False', observedGeneration: 1, ...failure });
    expect(
      summarizeReadyCondition({
        conditions: allTrue,
        dependsOn,
        observedGeneration: 1,
        terminalFailure: failure,
        deleting: true,
      }),
    ).toMatchObject({ status: 'False', reason: 'Deleting' });
  });
});
