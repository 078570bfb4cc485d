import {
  DEFAULT_WEBHOOK_CERT_DIR,
  DEFAULT_WEBHOOK_PORT,
  FlagError,
  type ManagerFlags,
  managerFlagsUsage,
  parseManagerFlags,
} from '@tally-ipam/controller-kit';

/** The Lease name of the controller (CAPI providers use `<provider>-leader-election` style names). */
export const LEADER_ELECTION_ID = 'tally-ipam-controller-leader-election';

/** The webhook server's flags (controller-runtime / the reference provider's names and defaults). */
export interface WebhookFlags {
  /** 0 disables the webhook server (no admission rules are served). */
  readonly port: number;
  readonly certDir: string;
  readonly certName: string;
  readonly keyName: string;
}

export interface AppFlags {
  readonly manager: ManagerFlags;
  readonly webhook: WebhookFlags;
  /** Flags present on the command line (without `--`): the demo picks free ports for the ones not given. */
  readonly given: ReadonlySet<string>;
  readonly help: boolean;
}

const WEBHOOK_FLAGS = ['webhook-port', 'webhook-cert-dir', 'webhook-cert-name', 'webhook-key-name'] as const;
type WebhookFlagName = (typeof WEBHOOK_FLAGS)[number];

function isWebhookFlag(name: string): name is WebhookFlagName {
  return (WEBHOOK_FLAGS as readonly string[]).includes(name);
}

/**
 * Takes the webhook flags (`--flag value` or `--flag=value`) out of argv and leaves the rest to the kit's manager
 * flag parser, so both sets are validated with the same rules and errors.
 */
function splitWebhookFlags(argv: readonly string[]): {
  rest: string[];
  webhook: Partial<Record<WebhookFlagName, string>>;
  help: boolean;
} {
  const rest: string[] = [];
  const webhook: Partial<Record<WebhookFlagName, string>> = {};
  let help = false;
  for (let index = 0; index < argv.length; index += 1) {
    const arg = argv[index] ?? '';
    if (arg === '--help' || arg === '-h') {
      help = true;
      continue;
    }
    const match = /^--([a-z-]+)(?:=(.*))?$/s.exec(arg);
    const name = match?.[1];
    if (!match || !name || !isWebhookFlag(name)) {
      rest.push(arg);
      continue;
    }
    const inline = match[2];
    if (inline !== undefined) {
      webhook[name] = inline;
      continue;
    }
    const next = argv[index + 1];
    if (next === undefined || next.startsWith('--')) throw new FlagError(name, undefined, 'needs a value');
    webhook[name] = next;
    index += 1;
  }
  return { rest, webhook, help };
}

function nonEmpty(flag: WebhookFlagName, value: string | undefined, fallback: string): string {
  if (value === undefined) return fallback;
  if (value === '') throw new FlagError(flag, value, 'must not be empty');
  return value;
}

/** Parses the controller's command line; throws `FlagError` naming the flag and the value. */
export function parseAppFlags(argv: readonly string[]): AppFlags {
  const { rest, webhook, help } = splitWebhookFlags(argv);
  const manager = parseManagerFlags(rest, { leaderElectionId: LEADER_ELECTION_ID });
  const portText = webhook['webhook-port'];
  if (portText !== undefined && !/^(0|[1-9]\d{0,4})$/.test(portText)) {
    throw new FlagError('webhook-port', portText, 'must be a port number 0-65535 (0 disables the webhook server)');
  }
  const port = portText === undefined ? DEFAULT_WEBHOOK_PORT : Number(portText);
  if (port > 65_535) throw new FlagError('webhook-port', portText, 'must be a port number 0-65535');
  return {
    manager,
    webhook: {
      port,
      certDir: nonEmpty('webhook-cert-dir', webhook['webhook-cert-dir'], DEFAULT_WEBHOOK_CERT_DIR),
      certName: nonEmpty('webhook-cert-name', webhook['webhook-cert-name'], 'tls.crt'),
      keyName: nonEmpty('webhook-key-name', webhook['webhook-key-name'], 'tls.key'),
    },
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
    `  --webhook-port <port>                admission webhook port, 0 disables (default ${DEFAULT_WEBHOOK_PORT})`,
    `  --webhook-cert-dir <dir>             directory of the serving certificate (default ${DEFAULT_WEBHOOK_CERT_DIR})`,
    '  --webhook-cert-name <file>           certificate file in the cert dir (default tls.crt)',
    '  --webhook-key-name <file>            private key file in the cert dir (default tls.key)',
    '  -h, --help                           this text',
  ].join('\n');
}
