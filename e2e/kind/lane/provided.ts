/** What the lane's global setup tells its test files (plain data: it crosses vitest's `provide`). */
import type { ClusterctlSetup } from '../../test/lifecycle/clusterctl.js';
import type { LaneCapv } from './capv.js';
import type { LaneProvider } from './providers.js';

export const LANE_CLUSTER_PROVIDE_KEY = 'tallyLaneCluster';

/** Tally's and Sim's provider versions in the lane's clusterctl repository. */
export interface LaneVersions {
  /** What `clusterctl init` installed: `previous` when the lane starts there, else `current`. */
  readonly installed: string;
  /** This tree's providers (published as the next minor release). */
  readonly current: string;
  /** The release the lane upgrades from, when it starts there. */
  readonly previous?: string;
}

export interface ProvidedLaneCluster {
  readonly name: string;
  readonly kubeconfigPath: string;
  /** Node container names (for `nodeExec`). */
  readonly nodes: readonly string[];
  readonly ipam: LaneProvider;
  readonly ipamReplicas: number;
  /** The clusterctl the lane installed with (its repository, configuration and HOME). */
  readonly clusterctl: ClusterctlSetup;
  readonly versions: LaneVersions;
  /** CAPV in the lane's repository and its images loaded, for the CAPV scenario (which installs it). */
  readonly capv?: LaneCapv;
}

/** Wall time of each phase of the lane, in milliseconds. */
export interface LanePhases {
  prepare?: number;
  /**
   * CAPV's manager image, the vCenter simulator's and the reference IPAM provider's (from the cache, or built from the
   * binaries).
   */
  capvImagesBuild?: number;
  imagesBuild?: number;
  /** The previous release's tree (`buildRelease`: from the cache, or installed and built). */
  previousRelease?: number;
  /** The previous release's images, built while the cluster is created (from that start until both are done). */
  previousImagesBuild?: number;
  clusterCreate?: number;
  imagesLoad?: number;
  /** Rendering, certificates, the clusterctl repository, Metal3's CRDs and `clusterctl init`. */
  installs?: number;
  rollouts?: number;
  /** From the end of the setup to the start of the teardown: every test file, the chaos test included. */
  tests?: number;
  clusterDelete?: number;
}

declare module 'vitest' {
  export interface ProvidedContext {
    tallyLaneCluster: ProvidedLaneCluster;
  }
}
