import {
  DEFAULT_WEBHOOK_CERT_DIR,
  DEFAULT_WEBHOOK_PORT,
  FlagError,
  type ManagerFlags,
  managerFlagsUsage,
  parseManagerFlags,
} from '@tally-ipam/controller-kit';

/** The Lease name of the controller when `--leader-elect` is on. */
export const LEADER_ELECTION_ID = 'sim-infra-controller-leader-election';

export interface WebhookFlags {
  /** 0 disables the webhook server (templates are then not guarded). */
  readonly port: number;
  readonly certDir: string;
  readonly certName: string;
  readonly keyName: string;
}

export interface AppFlags {
  readonly manager: ManagerFlags;
  readonly webhook: WebhookFlags;
  readonly help: boolean;
}

const WEBHOOK_FLAGS = ['webhook-port', 'webhook-cert-dir', 'webhook-cert-name', 'webhook-key-name'] as const;
type WebhookFlagName = (typeof WEBHOOK_FLAGS)[number];

function isWebhookFlag(name: string): name is WebhookFlagName {
  return (WEBHOOK_FLAGS as readonly string[]).includes(name);
}

/** Takes the webhook flags out of argv (`--flag value` or `--flag=value`); the kit parses the rest. */
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
    if (match[2] !== undefined) {
      webhook[name] = match[2];
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

/** Parses the command line (the kit's manager flags plus CAPI's webhook flags); throws `FlagError`. */
export function parseAppFlags(argv: readonly string[]): AppFlags {
  const { rest, webhook, help } = splitWebhookFlags(argv);
  const manager = parseManagerFlags(rest, { leaderElectionId: LEADER_ELECTION_ID });
  const portText = webhook['webhook-port'];
  if (portText !== undefined && (!/^(0|[1-9]\d{0,4})$/.test(portText) || Number(portText) > 65_535)) {
    throw new FlagError('webhook-port', portText, 'must be a port number 0-65535 (0 disables the webhook server)');
  }
  return {
    manager,
    webhook: {
      port: portText === undefined ? DEFAULT_WEBHOOK_PORT : Number(portText),
      certDir: nonEmpty('webhook-cert-dir', webhook['webhook-cert-dir'], DEFAULT_WEBHOOK_CERT_DIR),
      certName: nonEmpty('webhook-cert-name', webhook['webhook-cert-name'], 'tls.crt'),
      keyName: nonEmpty('webhook-key-name', webhook['webhook-key-name'], 'tls.key'),
    },
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
    `  --webhook-port <port>                template admission webhook port, 0 disables (default ${DEFAULT_WEBHOOK_PORT})`,
    `  --webhook-cert-dir <dir>             directory of the serving certificate (default ${DEFAULT_WEBHOOK_CERT_DIR})`,
    '  --webhook-cert-name <file>           certificate file in the cert dir (default tls.crt)',
    '  --webhook-key-name <file>            private key file in the cert dir (default tls.key)',
    '  -h, --help                           this text',
  ].join('\n');
}
