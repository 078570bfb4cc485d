import { type ManagerFlagDefaults, type ManagerFlags, managerFlagsUsage, parseManagerFlags } from '../manager/flags.js';
import { parseWebhookFlags, type WebhookFlags, webhookFlagsUsage } from '../webhook/flags.js';

/** What tells one controller executable from another: its names, its usage text, what its webhook guards. */
export interface ControllerAppIdentity {
  /** The manager's name: field manager of every write and prefix of the Events' reporting controller. */
  readonly name: string;
  /** The command in the usage line, e.g. `tally-ipam-controller`. */
  readonly command: string;
  /** One or more lines between the usage line and the flags. */
  readonly description: string;
  /** The default Lease name (CAPI providers use `<provider>-leader-election` style names). */
  readonly leaderElectionId: string;
  /** What the admission webhook guards, for the `--webhook-port` usage line (e.g. `admission`). */
  readonly webhookPurpose: string;
  /** Printed by `--version`. */
  readonly version?: string;
  /** The app's own defaults for manager flags (e.g. a higher `--kube-api-qps`), over Cluster API's. */
  readonly managerDefaults?: Omit<ManagerFlagDefaults, 'leaderElectionId' | 'homeKubeconfig'>;
  /**
   * True for an app that acts only on a cluster named on purpose (`--kubeconfig`, `$KUBECONFIG`, a pod's service
   * account) and runs something else without one (`runControllerApp`'s `withoutExplicitCluster`, which implies it):
   * the usage text then does not list `~/.kube/config` as a default of `--kubeconfig`.
   */
  readonly explicitClusterOnly?: boolean;
}

function managerDefaultsOf(app: ControllerAppIdentity): ManagerFlagDefaults {
  return {
    ...app.managerDefaults,
    leaderElectionId: app.leaderElectionId,
    ...(app.explicitClusterOnly ? { homeKubeconfig: false } : {}),
  };
}

/** A controller executable's command line: the kit's manager flags and the webhook flags, validated. */
export interface ControllerFlags {
  readonly manager: ManagerFlags;
  readonly webhook: WebhookFlags;
  /** Flags present on the command line (without `--`), for callers that choose defaults of their own. */
  readonly given: ReadonlySet<string>;
  readonly help: boolean;
}

/**
 * Parses a controller executable's command line (`--flag value` or `--flag=value`): the webhook flags and `-h`/`--help`
 * first, everything else as manager flags. Throws `FlagError` naming the flag and the value.
 */
export function parseControllerFlags(argv: readonly string[], app: ControllerAppIdentity): ControllerFlags {
  const { webhook, rest, help } = parseWebhookFlags(argv);
  const manager = parseManagerFlags(rest, managerDefaultsOf(app));
  return {
    manager,
    webhook,
    given: new Set(argv.flatMap((arg) => /^--?([a-z-]+)/.exec(arg)?.slice(1, 2) ?? [])),
    help,
  };
}

/** The usage text of a controller executable: usage line, description, manager flags, webhook flags. */
export function controllerFlagsUsage(app: ControllerAppIdentity): string {
  return [
    `usage: ${app.command} [flags]`,
    '',
    app.description,
    '',
    managerFlagsUsage(managerDefaultsOf(app)),
    webhookFlagsUsage(app.webhookPurpose),
  ].join('\n');
}
