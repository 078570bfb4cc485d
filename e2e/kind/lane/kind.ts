/**
 * The kind cluster of the lane, on @tally-ipam/kind (the offline node image, kind and kubectl, image loading and
 * `docker exec` into nodes). Every cluster of the lane is named `tally-lane-…`, so a run removes what a crashed
 * earlier run left behind.
 */
export const LANE_CLUSTER_PREFIX = 'tally-lane-';

export interface LaneCluster {
  readonly name: string;
  /** The admin kubeconfig (the API server through the port kind publishes on the host's loopback). */
  readonly kubeconfigPath: string;
  /** The node containers' names. */
  readonly nodes: readonly string[];
  loadImageArchive(archive: string): Promise<void>;
  /** Runs a command in a node container and returns its standard output. */
  nodeExec(node: string, command: readonly string[]): Promise<string>;
  /** Deletes the cluster: its containers, network and volumes. */
  delete(): Promise<void>;
}

/** Everything the lane loads besides the apps: the Cluster API manager image's archive. */
export interface LaneTooling {
  readonly capiManagerArchive: string;
}

export async function prepareLane(_progress: (line: string) => void): Promise<LaneTooling> {
  throw new Error('the kind lane needs @tally-ipam/kind (branch kind-node), not merged yet');
}

export async function removeStaleLaneClusters(_progress: (line: string) => void): Promise<string[]> {
  throw new Error('the kind lane needs @tally-ipam/kind (branch kind-node), not merged yet');
}

export async function createLaneCluster(_name: string, _progress: (line: string) => void): Promise<LaneCluster> {
  throw new Error('the kind lane needs @tally-ipam/kind (branch kind-node), not merged yet');
}

/** Runs a command in a node container of a lane cluster (from a test file, which has only the names). */
export async function laneNodeExec(_node: string, _command: readonly string[]): Promise<string> {
  throw new Error('the kind lane needs @tally-ipam/kind (branch kind-node), not merged yet');
}
