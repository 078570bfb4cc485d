import { describe, expect, it } from 'vitest';
import { contractLabelProblems, metadataContract } from '../src/contract.js';

const METADATA = `apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3
kind: Metadata
releaseSeries:
  - major: 1
    minor: 15
    contract: v1beta1
  - major: 1
    minor: 16
    contract: v1beta2
`;

function crd(labels: Record<string, string>, served: string[] = ['v1beta1', 'v1beta2']): unknown {
  return {
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.infrastructure.example.com', labels },
    spec: { versions: served.map((name) => ({ name, served: true })) },
  };
}

describe("v1.13's rule: metadata.yaml's contract is the one the CRDs' labels declare", () => {
  it('reads the contract of the release series', () => {
    expect(metadataContract(METADATA, 'v1.15.2')).toBe('v1beta1');
    expect(metadataContract(METADATA, 'v1.16.1')).toBe('v1beta2');
    expect(() => metadataContract(METADATA, 'v1.17.0')).toThrow(/no release series 1\.17/);
    expect(() => metadataContract('kind: Other', 'v1.16.1')).toThrow();
  });

  it('agrees when every CRD carries the label of that contract, naming versions it serves', () => {
    expect(contractLabelProblems(METADATA, 'v1.16.1', [crd({ 'cluster.x-k8s.io/v1beta2': 'v1beta2' })])).toEqual([]);
    expect(
      contractLabelProblems(METADATA, 'v1.16.1', [crd({ 'cluster.x-k8s.io/v1beta2': 'v1beta1_v1beta2' })]),
    ).toEqual([]);
  });

  it('names each disagreement', () => {
    const [missing] = contractLabelProblems(METADATA, 'v1.16.1', [crd({ 'cluster.x-k8s.io/v1beta1': 'v1beta1' })]);
    expect(missing).toMatch(
      /has no cluster\.x-k8s\.io\/v1beta2 label \(metadata\.yaml: v1\.16\.1 implements v1beta2\)/,
    );
    const [unserved] = contractLabelProblems(METADATA, 'v1.16.1', [
      crd({ 'cluster.x-k8s.io/v1beta2': 'v1beta2' }, ['v1beta1']),
    ]);
    expect(unserved).toMatch(/names versions it does not serve/);
    expect(contractLabelProblems(METADATA, 'v1.16.1', [])).toEqual(['no CRDs']);
  });
});
