import { formatGoDuration } from '../manager/api-server-monitor.js';
import { FlagError } from '../manager/flag-error.js';
import { parseGoDuration } from '../manager/flags.js';
import {
  DEFAULT_WEBHOOK_CERT_DIR,
  DEFAULT_WEBHOOK_PORT,
  DEFAULT_WEBHOOK_SHUTDOWN_DELAY_MS,
  DEFAULT_WEBHOOK_SHUTDOWN_TIMEOUT_MS,
  MAX_WEBHOOK_SHUTDOWN_DELAY_MS,
} from './server.js';

/** The webhook server's flags, with controller-runtime's (and CAPI providers') names and defaults. */
export interface WebhookFlags {
  /** 0 disables the webhook server. */
  readonly port: number;
  readonly certDir: string;
  readonly certName: string;
  readonly keyName: string;
  /** `--webhook-shutdown-delay`: serving on after a stop is requested (see `WebhookServerOptions.shutdownDelayMs`). */
  readonly shutdownDelayMs: number;
}

const WEBHOOK_FLAGS = [
  'webhook-port',
  'webhook-cert-dir',
  'webhook-cert-name',
  'webhook-key-name',
  'webhook-shutdown-delay',
] as const;
type WebhookFlagName = (typeof WEBHOOK_FLAGS)[number];

function isWebhookFlag(name: string): name is WebhookFlagName {
  return (WEBHOOK_FLAGS as readonly string[]).includes(name);
}

function nonEmpty(flag: WebhookFlagName, value: string | undefined, fallback: string): string {
  if (value === undefined) return fallback;
  if (value === '') throw new FlagError(flag, value, 'must not be empty');
  return value;
}

/**
 * Takes the webhook flags (`--flag value` or `--flag=value`) and `-h`/`--help` out of argv and returns the rest for
 * `parseManagerFlags`, so one command line carries both sets with the same rules and errors. Throws `FlagError`.
 */
export function parseWebhookFlags(argv: readonly string[]): { webhook: WebhookFlags; rest: string[]; help: boolean } {
  const rest: string[] = [];
  const given: Partial<Record<WebhookFlagName, string>> = {};
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
      given[name] = match[2];
      continue;
    }
    const next = argv[index + 1];
    if (next === undefined || next.startsWith('--')) throw new FlagError(name, undefined, 'needs a value');
    given[name] = next;
    index += 1;
  }
  const portText = given['webhook-port'];
  if (portText !== undefined && (!/^(0|[1-9]\d{0,4})$/.test(portText) || Number(portText) > 65_535)) {
    throw new FlagError('webhook-port', portText, 'must be a port number 0-65535 (0 disables the webhook server)');
  }
  return {
    webhook: {
      shutdownDelayMs: shutdownDelay(given['webhook-shutdown-delay']),
      port: portText === undefined ? DEFAULT_WEBHOOK_PORT : Number(portText),
      certDir: nonEmpty('webhook-cert-dir', given['webhook-cert-dir'], DEFAULT_WEBHOOK_CERT_DIR),
      certName: nonEmpty('webhook-cert-name', given['webhook-cert-name'], 'tls.crt'),
      keyName: nonEmpty('webhook-key-name', given['webhook-key-name'], 'tls.key'),
    },
    rest,
    help,
  };
}

/** `0` or a Go duration up to `MAX_WEBHOOK_SHUTDOWN_DELAY_MS`, whole milliseconds. */
function shutdownDelay(value: string | undefined): number {
  if (value === undefined) return DEFAULT_WEBHOOK_SHUTDOWN_DELAY_MS;
  const ms = value === '0' ? 0 : parseGoDuration(value);
  if (ms === undefined || !Number.isInteger(ms)) {
    throw new FlagError('webhook-shutdown-delay', value, 'must be a duration such as 5s or 500ms, or 0');
  }
  if (ms > MAX_WEBHOOK_SHUTDOWN_DELAY_MS) {
    throw new FlagError(
      'webhook-shutdown-delay',
      value,
      `must be at most ${formatGoDuration(MAX_WEBHOOK_SHUTDOWN_DELAY_MS)}: with the ` +
        `${formatGoDuration(DEFAULT_WEBHOOK_SHUTDOWN_TIMEOUT_MS)} drain of in-flight requests a stop must fit the ` +
        'graceful shutdown timeout (30s) and a terminationGracePeriodSeconds of 30',
    );
  }
  return ms;
}

/** Usage lines for the flags `parseWebhookFlags` takes; `purpose` names what the webhook guards. */
export function webhookFlagsUsage(purpose: string): string {
  return [
    `  --webhook-port <port>                ${purpose} webhook port, 0 disables (default ${DEFAULT_WEBHOOK_PORT})`,
    `  --webhook-cert-dir <dir>             directory of the serving certificate (default ${DEFAULT_WEBHOOK_CERT_DIR})`,
    '  --webhook-cert-name <file>           certificate file in the cert dir (default tls.crt)',
    '  --webhook-key-name <file>            private key file in the cert dir (default tls.key)',
    '  --webhook-shutdown-delay <d>         keep serving webhooks this long after SIGTERM while the Pod leaves the',
    '                                       Service; /readyz fails at once ' +
      `(default ${formatGoDuration(DEFAULT_WEBHOOK_SHUTDOWN_DELAY_MS)}, ` +
      `at most ${formatGoDuration(MAX_WEBHOOK_SHUTDOWN_DELAY_MS)})`,
    '  -h, --help                           this text',
  ].join('\n');
}
