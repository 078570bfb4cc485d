import {
  type ControllerAppIdentity,
  type ControllerFlags,
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
  ].join('\n'),
  leaderElectionId: LEADER_ELECTION_ID,
  version: readPackageVersion(new URL('../package.json', import.meta.url)),
  // About four requests per claim (finalizer, IPAddress, status, shares of ledger and pool status writes): Cluster
  // API's 20/30 would cap binding at ~5 claims/s, where the README's bench measured 36-84 claims/s (~420 requests/s).
  // This still bounds a runaway loop while leaving that throughput alone.
  managerDefaults: { kubeAPIQPS: 500, kubeAPIBurst: 1000 },
  webhookPurpose: 'admission',
};

/** The kit's manager and webhook flags; `given` lets the demo pick free ports for the ones not given. */
export type AppFlags = ControllerFlags;

/** Parses the controller's command line; throws `FlagError` naming flag and value. */
export function parseAppFlags(argv: readonly string[]): AppFlags {
  return parseControllerFlags(argv, IPAM_CONTROLLER_APP);
}
