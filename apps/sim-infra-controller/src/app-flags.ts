import {
  type ControllerAppIdentity,
  type ControllerFlags,
  parseControllerFlags,
  readPackageVersion,
} from '@tally-ipam/controller-kit/app';

/** The Lease name of the controller when `--leader-elect` is on. */
export const LEADER_ELECTION_ID = 'sim-infra-controller-leader-election';

/** The executable's names and usage text; the kit's `runControllerApp` does the rest of the command line. */
export const SIM_INFRA_CONTROLLER_APP: ControllerAppIdentity = {
  // Field manager of its writes and the prefix of its Events' reporting controller.
  name: 'sim-infra-controller',
  command: 'sim-infra-controller',
  description: [
    'Runs the Sim infrastructure provider (SimCluster, SimMachine, SimMachinePool) against the cluster of --kubeconfig, $KUBECONFIG',
    'or the pod it runs in.',
  ].join('\n'),
  leaderElectionId: LEADER_ELECTION_ID,
  version: readPackageVersion(new URL('../package.json', import.meta.url)),
  webhookPurpose: 'template admission',
};

export type AppFlags = ControllerFlags;

/** Parses the controller's command line; throws `FlagError` naming flag and value. */
export function parseAppFlags(argv: readonly string[]): AppFlags {
  return parseControllerFlags(argv, SIM_INFRA_CONTROLLER_APP);
}
