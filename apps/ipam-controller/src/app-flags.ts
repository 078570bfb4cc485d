import {
  type ManagerFlags,
  managerFlagsUsage,
  parseManagerFlags,
  parseWebhookFlags,
  type WebhookFlags,
  webhookFlagsUsage,
} from '@tally-ipam/controller-kit';

/** The Lease name of the controller (CAPI providers use `<provider>-leader-election` style names). */
export const LEADER_ELECTION_ID = 'tally-ipam-controller-leader-election';

export interface AppFlags {
  readonly manager: ManagerFlags;
  readonly webhook: WebhookFlags;
  /** Flags present on the command line (without `--`): the demo picks free ports for the ones not given. */
  readonly given: ReadonlySet<string>;
  readonly help: boolean;
}

/** Parses the controller's command line (the kit's manager and webhook flags); throws `FlagError` naming flag and value. */
export function parseAppFlags(argv: readonly string[]): AppFlags {
  const { webhook, rest, help } = parseWebhookFlags(argv);
  const manager = parseManagerFlags(rest, { leaderElectionId: LEADER_ELECTION_ID });
  return {
    manager,
    webhook,
    given: new Set(argv.flatMap((arg) => /^--([a-z-]+)/.exec(arg)?.slice(1, 2) ?? [])),
    help,
  };
}

export function appUsage(): string {
  return [
    'usage: tally-ipam-controller [flags]',
    '',
    'Runs the Tally IPAM provider. With no --kubeconfig, no $KUBECONFIG and not in a pod, it starts an embedded local',
    'control plane, installs the CRDs, and runs a demo (pools, a Cluster, claims) until Ctrl-C.',
    '',
    managerFlagsUsage({ leaderElectionId: LEADER_ELECTION_ID }),
    webhookFlagsUsage('admission'),
  ].join('\n');
}
