import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { AppsV1Api } from '@kubernetes/client-node';
import { appsVersion } from '@tally-ipam/release';
import {
  CLUSTER_API_RELEASES,
  clusterApiVersion,
  DEFAULT_CLUSTER_API_VERSION,
  KUBERNETES_VERSION,
} from '@tally-ipam/testenv';
import { testEnv } from '@tally-ipam/testenv/vitest';
import { capvVersionFor } from '@tally-ipam/vsphere';
import { describe, expect, it } from 'vitest';

/**
 * The README's compatibility table, checked against what this run used: every run of the e2e suite (the default
 * release, the compatibility job on the oldest supported one, the kind lane) finds its own Tally, Cluster API and
 * Kubernetes releases in one row; and the rows of this Tally release name exactly the Cluster API releases testenv
 * builds, so no release is listed that no run uses, nor one used that is not listed.
 */

const README = fileURLToPath(new URL('../../README.md', import.meta.url));
const MARKER = '<!-- compatibility table: one row per Tally release and Cluster API release -->';

interface CompatibilityRow {
  readonly tally: string;
  readonly clusterApi: string;
  readonly note: string;
  readonly kubernetes: readonly string[];
  readonly testedBy: string;
}

function readTable(): CompatibilityRow[] {
  const text = readFileSync(README, 'utf8');
  const start = text.indexOf(MARKER);
  if (start < 0) throw new Error(`README.md has no "${MARKER}"`);
  const lines = text
    .slice(start + MARKER.length)
    .trimStart()
    .split('\n');
  const rows: CompatibilityRow[] = [];
  for (const line of lines.slice(2)) {
    if (!line.startsWith('|')) break;
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim());
    const [tally, clusterApi, kubernetes, testedBy] = cells;
    const version = /^(v\d+\.\d+\.\d+)(?: \((.*)\))?$/.exec(clusterApi ?? '');
    if (cells.length !== 4 || !tally || !version?.[1] || !kubernetes || !testedBy) {
      throw new Error(`README.md's compatibility table has a row it cannot read: ${line}`);
    }
    rows.push({
      tally,
      clusterApi: version[1],
      note: version[2] ?? '',
      kubernetes: kubernetes.split(',').map((k) => k.trim()),
      testedBy,
    });
  }
  return rows;
}

const tallyMinor = appsVersion().split('.').slice(0, 2).join('.');

describe("the README's compatibility table", () => {
  it(`lists for Tally ${tallyMinor} exactly the Cluster API releases testenv builds, the default marked`, () => {
    const rows = readTable().filter((row) => row.tally === tallyMinor);
    expect(rows.map((row) => row.clusterApi).sort()).toEqual(Object.keys(CLUSTER_API_RELEASES).sort());
    expect(rows.filter((row) => row.note === 'default').map((row) => row.clusterApi)).toEqual([
      DEFAULT_CLUSTER_API_VERSION,
    ]);
    for (const row of rows) {
      expect(row.kubernetes, row.clusterApi).toEqual([KUBERNETES_VERSION]);
      // The CAPV release the scenario runs on each Cluster API release.
      expect(row.testedBy, row.clusterApi).toContain(`CAPV ${capvVersionFor(row.clusterApi)}`);
    }
  });

  it("has the row of this run's Tally, Cluster API and Kubernetes releases", async () => {
    const env = testEnv();
    const expected = clusterApiVersion(env.capiVersion);
    let running = expected;
    if (env.external) {
      // Cluster API as the cluster runs it: the tag of its manager's image.
      const deployment = await env.kubeConfig
        .makeApiClient(AppsV1Api)
        .readNamespacedDeployment({ namespace: 'capi-system', name: 'capi-controller-manager' });
      const image = deployment.spec?.template.spec?.containers.find((c) => c.name === 'manager')?.image ?? '';
      running = image.slice(image.lastIndexOf(':') + 1);
    } else {
      expect(env.capiManager?.local, 'the suite runs its own Cluster API manager').toBe(true);
    }
    expect(running).toBe(expected);
    const row = readTable().find((candidate) => candidate.tally === tallyMinor && candidate.clusterApi === running);
    expect(row, `a row for Tally ${tallyMinor} on Cluster API ${running}`).toBeDefined();
    // The API server's gitVersion, e.g. v1.34.10 (a kind node may append a build suffix: `+…`).
    expect(row?.kubernetes).toContain(env.version.replace(/\+.*$/, ''));
  });
});
