import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../src/cache/object.js';
import {
  isClusterPausedOrAnnotated,
  isPaused,
  PAUSED_ANNOTATION,
  pausedCondition,
  pauseReasons,
} from '../src/capi/index.js';

function object(kind: string, options: { paused?: boolean; annotated?: boolean } = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind,
    metadata: {
      name: kind.toLowerCase(),
      namespace: 'ns',
      generation: 3,
      ...(options.annotated ? { annotations: { [PAUSED_ANNOTATION]: '' } } : {}),
    },
    ...(options.paused === undefined ? {} : { spec: { paused: options.paused } }),
  } as KubeObject;
}

describe('the two meanings of pause, in one place', () => {
  it("by default follows CAPI's annotations.IsPaused: the Cluster's spec.paused or the object's annotation", () => {
    const annotatedCluster = object('Cluster', { annotated: true });
    expect(isPaused(annotatedCluster, object('Thing'))).toBe(false);
    expect(isPaused(object('Cluster', { paused: true }), object('Thing'))).toBe(true);
    expect(isPaused(undefined, object('Thing', { annotated: true }))).toBe(true);
    expect(pausedCondition(annotatedCluster, object('Thing'))).toMatchObject({ status: 'False', reason: 'NotPaused' });
  });

  it("with clusterAnnotation, the IPAM contract's reading: the Cluster's annotation pauses too", () => {
    const annotatedCluster = object('Cluster', { annotated: true });
    expect(isClusterPausedOrAnnotated(annotatedCluster)).toBe(true);
    expect(isPaused(annotatedCluster, object('Thing'), { clusterAnnotation: true })).toBe(true);
    expect(pauseReasons(annotatedCluster, object('Thing', { annotated: true }), { clusterAnnotation: true })).toEqual([
      `Cluster has the ${PAUSED_ANNOTATION} annotation`,
      `Thing has the ${PAUSED_ANNOTATION} annotation`,
    ]);
  });

  it('lists every sign, the Cluster first, and nothing when none is present', () => {
    const both = pauseReasons(
      object('Cluster', { paused: true, annotated: true }),
      object('Thing', { annotated: true }),
      {
        clusterAnnotation: true,
      },
    );
    expect(both).toEqual([
      'Cluster spec.paused is set',
      `Cluster has the ${PAUSED_ANNOTATION} annotation`,
      `Thing has the ${PAUSED_ANNOTATION} annotation`,
    ]);
    expect(pauseReasons(object('Cluster', { paused: false }), object('Thing'), { clusterAnnotation: true })).toEqual(
      [],
    );
    expect(pausedCondition(undefined, object('Thing'))).toEqual({
      type: 'Paused',
      status: 'False',
      reason: 'NotPaused',
      message: '',
      observedGeneration: 3,
    });
  });
});
