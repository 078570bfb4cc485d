import {
  type ManagerFlags,
  managerFlagsUsage,
  parseManagerFlags,
  parseWebhookFlags,
  type WebhookFlags,
  webhookFlagsUsage,
} from '@tally-ipam/controller-kit';

/** The Lease name of the controller when `--leader-elect` is on. */
export const LEADER_ELECTION_ID = 'sim-infra-controller-leader-election';

export interface AppFlags {
  readonly manager: ManagerFlags;
  readonly webhook: WebhookFlags;
  readonly help: boolean;
}

/** Parses the controller's command line (the kit's manager and webhook flags); throws `FlagError` naming flag and value. */
export function parseAppFlags(argv: readonly string[]): AppFlags {
  const { webhook, rest, help } = parseWebhookFlags(argv);
  const manager = parseManagerFlags(rest, { leaderElectionId: LEADER_ELECTION_ID });
  return {
    manager,
    webhook,
    help,
  };
}

export function appUsage(): string {
  return [
    'usage: sim-infra-controller [flags]',
    '',
    'Runs the Sim infrastructure provider (SimCluster, SimMachine, SimMachinePool) against the cluster of --kubeconfig, $KUBECONFIG',
    'or the pod it runs in.',
    '',
    managerFlagsUsage({ leaderElectionId: LEADER_ELECTION_ID }),
    webhookFlagsUsage('template admission'),
  ].join('\n');
}
