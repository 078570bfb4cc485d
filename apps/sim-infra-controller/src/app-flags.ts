import { readFileSync } from 'node:fs';
import { type ControllerAppIdentity, type ControllerFlags, parseControllerFlags } from '@tally-ipam/controller-kit';
import { z } from 'zod';

/** This package's version for `--version`: its package.json next to dist/ (absent in the bundled image). */
function packageVersion(): string {
  try {
    const text = readFileSync(new URL('../package.json', import.meta.url), 'utf8');
    return z.object({ version: z.string().max(64) }).parse(JSON.parse(text)).version;
  } catch {
    return 'unknown (no package.json next to the executable)';
  }
}

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
  version: packageVersion(),
  webhookPurpose: 'template admission',
};

export type AppFlags = ControllerFlags;

/** Parses the controller's command line; throws `FlagError` naming flag and value. */
export function parseAppFlags(argv: readonly string[]): AppFlags {
  return parseControllerFlags(argv, SIM_INFRA_CONTROLLER_APP);
}
