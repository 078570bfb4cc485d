/** What the lane's global setup tells its test files (plain data: it crosses vitest's `provide`). */
import type { LaneProvider } from './providers.js';

export const LANE_CLUSTER_PROVIDE_KEY = 'tallyLaneCluster';

export interface ProvidedLaneCluster {
  readonly name: string;
  readonly kubeconfigPath: string;
  /** Node container names (for `nodeExec`). */
  readonly nodes: readonly string[];
  readonly ipam: LaneProvider;
  readonly ipamReplicas: number;
}

/** Wall time of each phase of the lane, in milliseconds. */
export interface LanePhases {
  prepare?: number;
  imagesBuild?: number;
  clusterCreate?: number;
  imagesLoad?: number;
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
