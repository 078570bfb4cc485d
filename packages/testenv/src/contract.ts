import { parse } from 'yaml';
import { z } from 'zod';

/**
 * The rule Cluster API v1.13 wrote into the clusterctl contract and every provider contract: the contract a provider's
 * `metadata.yaml` names for a release series must be the one its CRDs declare with their
 * `cluster.x-k8s.io/<contract>` label (whose value is the CRD's versions that implement it, `_`-separated). clusterctl
 * reads the first at `init` and `upgrade`, Cluster API's controllers read the second at run time; a provider whose two
 * disagree is installed under one contract and driven under another.
 */

const CONTRACT_LABEL_PREFIX = 'cluster.x-k8s.io/';

const Metadata = z.object({
  apiVersion: z.literal('clusterctl.cluster.x-k8s.io/v1alpha3'),
  kind: z.literal('Metadata'),
  releaseSeries: z.array(z.object({ major: z.number(), minor: z.number(), contract: z.string() })).min(1),
});

const Crd = z.looseObject({
  kind: z.literal('CustomResourceDefinition'),
  metadata: z.looseObject({ name: z.string(), labels: z.record(z.string(), z.string()).optional() }),
  spec: z.looseObject({ versions: z.array(z.looseObject({ name: z.string(), served: z.boolean() })) }),
});

/** The contract `metadata.yaml` (its text) names for the release series of `version` (`vMAJOR.MINOR.PATCH`). */
export function metadataContract(metadataText: string, version: string): string {
  const match = /^v(\d+)\.(\d+)\.\d+/.exec(version);
  if (!match) throw new Error(`${version} is not of the form vMAJOR.MINOR.PATCH`);
  const [major, minor] = [Number(match[1]), Number(match[2])];
  const metadata = Metadata.parse(parse(metadataText));
  const series = metadata.releaseSeries.find((entry) => entry.major === major && entry.minor === minor);
  if (!series) throw new Error(`metadata.yaml has no release series ${major}.${minor} (for ${version})`);
  return series.contract;
}

/**
 * Every way the CRDs of a provider release disagree with its `metadata.yaml` (empty when they agree): a CRD without
 * the label of the contract the release series names, or whose label names a version the CRD does not serve.
 */
export function contractLabelProblems(metadataText: string, version: string, crds: readonly unknown[]): string[] {
  const contract = metadataContract(metadataText, version);
  const label = `${CONTRACT_LABEL_PREFIX}${contract}`;
  const problems: string[] = [];
  if (crds.length === 0) problems.push('no CRDs');
  for (const object of crds) {
    const crd = Crd.parse(object);
    const value = crd.metadata.labels?.[label];
    if (value === undefined) {
      problems.push(`${crd.metadata.name} has no ${label} label (metadata.yaml: ${version} implements ${contract})`);
      continue;
    }
    const served = new Set(crd.spec.versions.filter((v) => v.served).map((v) => v.name));
    const named = value.split('_');
    const unserved = named.filter((v) => !served.has(v));
    if (value === '' || unserved.length > 0) {
      problems.push(`${crd.metadata.name}: ${label}=${value} names versions it does not serve (${[...served]})`);
    }
  }
  return problems;
}
