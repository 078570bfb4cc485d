import {
  type ControllerAppIdentity,
  type ControllerFlags,
  FlagError,
  parseControllerFlags,
  readPackageVersion,
} from '@tally-ipam/controller-kit';

/** The Lease name of the controller (CAPI providers use `<provider>-leader-election` style names). */
export const LEADER_ELECTION_ID = 'tally-ipam-controller-leader-election';

/** The executable's names and usage text; the kit's `runControllerApp` does the rest of the command line. */
export const IPAM_CONTROLLER_APP: ControllerAppIdentity = {
  // Field manager of every write, and the prefix of the Events' reporting controller.
  name: 'tally-ipam',
  command: 'tally-ipam-controller',
  description: [
    'Runs the Tally IPAM provider. With no --kubeconfig, no $KUBECONFIG and not in a pod, it starts an embedded local',
    'control plane, installs the CRDs, and runs a demo (pools, a Cluster, claims) until Ctrl-C.',
    '',
    "  --enable-metal3-ipam[=true|false]  Also serve Metal3's IPAM API (ipam.metal3.io IPPool, IPClaim, IPAddress)",
    "                                     from the same address ledgers, in place of Metal3's own IPAM controller;",
    '                                     needs the ipam.metal3.io CRDs. Default false.',
    "  --enable-in-cluster-ipam[=true|false]  Also serve the in-cluster IPAM provider's pools (ipam.cluster.x-k8s.io/",
    '                                     v1alpha2 InClusterIPPool, GlobalInClusterIPPool, InClusterPrefixPool,',
    '                                     GlobalInClusterPrefixPool)',
    '                                     from the same address ledgers, in its place; needs its CRDs. Default false.',
  ].join('\n'),
  leaderElectionId: LEADER_ELECTION_ID,
  version: readPackageVersion(new URL('../package.json', import.meta.url)),
  // About four requests per claim (finalizer, IPAddress, status, shares of ledger and pool status writes): Cluster
  // API's 20/30 would cap binding at ~5 claims/s, where the README's bench measured 36-84 claims/s (~420 requests/s).
  // This still bounds a runaway loop while leaving that throughput alone.
  managerDefaults: { kubeAPIQPS: 500, kubeAPIBurst: 1000 },
  // Without --kubeconfig, $KUBECONFIG or a pod it runs the demo: ~/.kube/config is not read unless named.
  explicitClusterOnly: true,
  webhookPurpose: 'admission',
};

/** The kit's manager and webhook flags; `given` lets the demo pick free ports for the ones not given. */
export type AppFlags = ControllerFlags;

/** Parses the controller's command line; throws `FlagError` naming flag and value. */
export function parseAppFlags(argv: readonly string[]): AppFlags {
  return parseControllerFlags(argv, IPAM_CONTROLLER_APP);
}

/** The app's own flags, taken off the command line before the kit parses the rest. */
export const ENABLE_METAL3_FLAG = 'enable-metal3-ipam';
export const ENABLE_IN_CLUSTER_FLAG = 'enable-in-cluster-ipam';

/**
 * Takes a boolean flag (alone: true; `=true` / `=false`; the last one wins) out of the command line; the rest is
 * returned in order. Throws `FlagError` naming the flag and the value for anything else.
 */
function takeBooleanFlag(argv: readonly string[], flag: string): { readonly value: boolean; readonly rest: string[] } {
  const pattern = new RegExp(`^--?${flag}(?:=(.*))?$`);
  let enabled = false;
  const rest: string[] = [];
  for (const arg of argv) {
    const match = pattern.exec(arg);
    if (!match) {
      rest.push(arg);
      continue;
    }
    const value = match[1];
    if (value !== undefined && value !== 'true' && value !== 'false') {
      throw new FlagError(flag, value, 'must be true or false');
    }
    enabled = value !== 'false';
  }
  return { value: enabled, rest };
}

/** Takes `--enable-metal3-ipam` out of the command line; the rest goes to the kit's parser. */
export function takeMetal3Flag(argv: readonly string[]): { readonly enableMetal3: boolean; readonly rest: string[] } {
  const { value, rest } = takeBooleanFlag(argv, ENABLE_METAL3_FLAG);
  return { enableMetal3: value, rest };
}

/** The app's own flags, both taken off the command line; the rest goes to the kit's parser. */
export interface AppOwnFlags {
  readonly enableMetal3: boolean;
  readonly enableInCluster: boolean;
  readonly rest: string[];
}

/** Takes `--enable-metal3-ipam` and `--enable-in-cluster-ipam` out of the command line. */
export function takeAppOwnFlags(argv: readonly string[]): AppOwnFlags {
  const metal3 = takeMetal3Flag(argv);
  const inCluster = takeBooleanFlag(metal3.rest, ENABLE_IN_CLUSTER_FLAG);
  return { enableMetal3: metal3.enableMetal3, enableInCluster: inCluster.value, rest: inCluster.rest };
}
