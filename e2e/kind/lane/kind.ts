/**
 * The kind cluster of the lane, on @tally-ipam/kind (the offline node image, kind and kubectl, the Cluster API manager
 * image, image loading and `docker exec` into nodes). Every cluster of the lane is named `tally-lane-…`, so a run
 * removes what a crashed earlier run left behind.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createKindCluster, loadImageArchive, nodeExec, type PreparedKind, prepareKind } from '@tally-ipam/kind';

const execFileAsync = promisify(execFile);

export const LANE_CLUSTER_PREFIX = 'tally-lane-';

export interface LaneCluster {
  readonly name: string;
  /** The admin kubeconfig (the API server through the port kind publishes on the host's loopback). */
  readonly kubeconfigPath: string;
  /** The node containers' names (= the Nodes' names). */
  readonly nodes: readonly string[];
  loadImageArchive(archive: string): Promise<void>;
  /** Deletes the cluster: its containers, network and volumes. */
  delete(): Promise<void>;
}

/** What the lane loads besides the apps, and kind itself. */
export interface LaneTooling {
  readonly capiManagerArchive: string;
  readonly prepared: PreparedKind;
}

let tooling: LaneTooling | undefined;

/** The node image, kind, kubectl and the Cluster API manager image: built offline or found in the cache. */
export async function prepareLane(progress: (line: string) => void): Promise<LaneTooling> {
  const prepared = await prepareKind({ onProgress: progress });
  tooling = { capiManagerArchive: prepared.capiManagerImageArchive, prepared };
  return tooling;
}

/**
 * Deletes every kind cluster named `tally-lane-…` and its network (`tally-kind-<name>`): what an earlier run that
 * crashed before its teardown left. Returns their names.
 */
export async function removeStaleLaneClusters(progress: (line: string) => void): Promise<string[]> {
  const { stdout } = await execFileAsync('docker', [
    'ps',
    '-a',
    '--filter',
    'label=io.x-k8s.kind.cluster',
    '--format',
    '{{.Label "io.x-k8s.kind.cluster"}}',
  ]);
  const stale = [...new Set(stdout.split('\n').filter((name) => name.startsWith(LANE_CLUSTER_PREFIX)))];
  for (const name of stale) {
    progress(`removing the kind cluster ${name} of an earlier run`);
    const { stdout: containers } = await execFileAsync('docker', [
      'ps',
      '-aq',
      '--filter',
      `label=io.x-k8s.kind.cluster=${name}`,
    ]);
    const ids = containers.split('\n').filter(Boolean);
    if (ids.length > 0) await execFileAsync('docker', ['rm', '-f', '-v', ...ids]);
    await execFileAsync('docker', ['network', 'rm', `tally-kind-${name}`]).catch(() => undefined);
  }
  return stale;
}

export async function createLaneCluster(name: string, progress: (line: string) => void): Promise<LaneCluster> {
  if (!name.startsWith(LANE_CLUSTER_PREFIX))
    throw new Error(`lane cluster names start with ${LANE_CLUSTER_PREFIX}: ${name}`);
  const prepared = tooling?.prepared;
  if (!prepared) throw new Error('createLaneCluster before prepareLane');
  const cluster = await createKindCluster({
    name,
    nodeImage: prepared.nodeImage,
    kindBinary: prepared.kindBinary,
    onProgress: progress,
  });
  return {
    name: cluster.name,
    kubeconfigPath: cluster.kubeconfigPath,
    nodes: [cluster.nodeContainer],
    loadImageArchive: (archive) => loadImageArchive(cluster, archive),
    delete: () => cluster.delete(),
  };
}

/** Runs a command in a node container of a lane cluster (from a test file, which has only the names). */
export async function laneNodeExec(node: string, command: readonly string[], input?: string): Promise<string> {
  return nodeExec({ nodeContainer: node }, command, input === undefined ? {} : { input });
}
