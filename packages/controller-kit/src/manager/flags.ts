import { type ParseArgsConfig, parseArgs } from 'node:util';
import { z } from 'zod';
import { parseBindAddress } from './bind-address.js';
import { DEFAULT_LEADER_ELECTION_TIMINGS, validateLeaderElectionTimings } from './leader-election.js';

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The manager's command line, validated (controller-runtime / CAPI provider flag names). */
export interface ManagerFlags {
  /** Path of a kubeconfig; absent means KUBECONFIG, in-cluster, then ~/.kube/config. */
  readonly kubeconfig: string | undefined;
  /** Namespace to watch; undefined means all namespaces. */
  readonly namespace: string | undefined;
  /** Only reconcile objects labelled `cluster.x-k8s.io/watch-filter=<value>`; empty means all. */
  readonly watchFilter: string;
  readonly leaderElect: boolean;
  /** Namespace of the leader-election Lease; undefined means the in-cluster namespace. */
  readonly leaderElectionNamespace: string | undefined;
  readonly leaderElectionId: string;
  /** CAPI's `--leader-elect-lease-duration` / `-renew-deadline` / `-retry-period`, in milliseconds. */
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  readonly metricsBindAddress: string;
  readonly healthProbeBindAddress: string;
  /** Concurrent reconciles per controller. */
  readonly concurrency: number;
  readonly logLevel: LogLevel;
}

export interface ManagerFlagDefaults {
  /** The Lease name, e.g. `tally-ipam-controller-leader-election`. Required: it is the controller's identity. */
  readonly leaderElectionId: string;
  readonly metricsBindAddress?: string;
  readonly healthProbeBindAddress?: string;
  readonly concurrency?: number;
  readonly logLevel?: LogLevel;
}

/** A command-line error naming the flag and the offending value. */
export class FlagError extends Error {
  override readonly name = 'FlagError';
  constructor(
    readonly flag: string,
    readonly value: string | undefined,
    reason: string,
  ) {
    super(
      value === undefined
        ? `flag --${flag}: ${reason}`
        : `invalid value ${JSON.stringify(value)} for flag --${flag}: ${reason}`,
    );
  }
}

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

const BOOLEAN_FLAGS = ['leader-elect'] as const;

const options = {
  kubeconfig: { type: 'string' },
  namespace: { type: 'string' },
  'watch-filter': { type: 'string' },
  'leader-elect': { type: 'boolean' },
  'leader-election-namespace': { type: 'string' },
  'leader-election-id': { type: 'string' },
  'leader-elect-lease-duration': { type: 'string' },
  'leader-elect-renew-deadline': { type: 'string' },
  'leader-elect-retry-period': { type: 'string' },
  'metrics-bind-address': { type: 'string' },
  'health-probe-bind-address': { type: 'string' },
  concurrency: { type: 'string' },
  'log-level': { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

type FlagName = keyof typeof options;

/** One zod check per flag value; the message becomes the FlagError's reason. */
const checks: { readonly [F in FlagName]?: z.ZodType<string> } = {
  namespace: z
    .string()
    .max(63, 'must be at most 63 characters')
    .refine((value) => value === '' || DNS1123_LABEL.test(value), {
      message: 'must be a namespace name (lower-case DNS-1123 label), or empty for all namespaces',
    }),
  'leader-election-namespace': z
    .string()
    .max(63, 'must be at most 63 characters')
    .regex(DNS1123_LABEL, 'must be a namespace name (lower-case DNS-1123 label)'),
  'leader-election-id': z
    .string()
    .min(1, 'must not be empty')
    .max(253, 'must be at most 253 characters')
    .regex(DNS1123_SUBDOMAIN, 'must be a Lease name (lower-case DNS-1123 subdomain)'),
  'watch-filter': z
    .string()
    .max(63, 'must be at most 63 characters')
    .regex(LABEL_VALUE, 'must be a label value (alphanumerics, "-", "_", "."; starting and ending alphanumeric)'),
  concurrency: z.string().regex(/^[1-9]\d{0,5}$/, 'must be a positive integer'),
  'log-level': z.string().refine((value) => (LOG_LEVELS as readonly string[]).includes(value), {
    message: `must be one of ${LOG_LEVELS.join(', ')}`,
  }),
  kubeconfig: z.string().min(1, 'must not be empty'),
};

/**
 * Parses kube-style manager flags (`--flag value` or `--flag=value`; booleans as `--flag`, `--flag=true|false`).
 * Throws `FlagError` naming the flag and value for unknown flags, missing values and invalid values.
 */
export function parseManagerFlags(argv: readonly string[], defaults: ManagerFlagDefaults): ManagerFlags {
  const { args, booleans } = extractBooleanAssignments(argv);
  let values: Partial<Record<FlagName, string | boolean>>;
  try {
    const parsed = parseArgs({ args, options, strict: true, allowPositionals: false });
    values = parsed.values;
  } catch (error) {
    throw translateParseError(error);
  }
  for (const [flag, value] of Object.entries(booleans)) values[flag as FlagName] = value;

  const text = (flag: FlagName, fallback: string | undefined): string | undefined => {
    const value = values[flag];
    if (value === undefined) return fallback;
    if (typeof value !== 'string') throw new FlagError(flag, String(value), 'expects a value');
    const check = checks[flag];
    const result = check?.safeParse(value);
    if (result && !result.success) throw new FlagError(flag, value, result.error.issues[0]?.message ?? 'invalid');
    return value;
  };
  const bindAddress = (flag: FlagName, fallback: string): string => {
    const value = text(flag, fallback) ?? fallback;
    try {
      parseBindAddress(value);
    } catch {
      throw new FlagError(flag, value, 'expected [host]:port with a port 0-65535, or 0 to disable');
    }
    return value;
  };

  const leaderElectionId = text('leader-election-id', defaults.leaderElectionId) ?? defaults.leaderElectionId;
  const idCheck = checks['leader-election-id']?.safeParse(leaderElectionId);
  if (idCheck && !idCheck.success) {
    throw new FlagError('leader-election-id', leaderElectionId, idCheck.error.issues[0]?.message ?? 'invalid');
  }
  const duration = (flag: FlagName, fallbackMs: number): number => {
    const value = text(flag, undefined);
    if (value === undefined) return fallbackMs;
    const ms = parseGoDuration(value);
    if (ms === undefined || ms <= 0)
      throw new FlagError(flag, value, 'must be a positive duration such as 15s, 500ms or 1m');
    return ms;
  };
  const timings = {
    leaseDurationMs: duration('leader-elect-lease-duration', DEFAULT_LEADER_ELECTION_TIMINGS.leaseDurationMs),
    renewDeadlineMs: duration('leader-elect-renew-deadline', DEFAULT_LEADER_ELECTION_TIMINGS.renewDeadlineMs),
    retryPeriodMs: duration('leader-elect-retry-period', DEFAULT_LEADER_ELECTION_TIMINGS.retryPeriodMs),
  };
  try {
    validateLeaderElectionTimings(timings);
  } catch (error) {
    throw new FlagError(
      'leader-elect-lease-duration',
      undefined,
      error instanceof Error ? error.message : String(error),
    );
  }
  const namespace = text('namespace', undefined);
  return {
    ...timings,
    kubeconfig: text('kubeconfig', undefined),
    namespace: namespace === '' ? undefined : namespace,
    watchFilter: text('watch-filter', '') ?? '',
    leaderElect: values['leader-elect'] === true,
    leaderElectionNamespace: text('leader-election-namespace', undefined),
    leaderElectionId,
    metricsBindAddress: bindAddress('metrics-bind-address', defaults.metricsBindAddress ?? ':8080'),
    healthProbeBindAddress: bindAddress('health-probe-bind-address', defaults.healthProbeBindAddress ?? ':8081'),
    concurrency: Number(text('concurrency', String(defaults.concurrency ?? 10))),
    logLevel: (text('log-level', defaults.logLevel ?? 'info') ?? 'info') as LogLevel,
  };
}

const DURATION_UNITS_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Parses a Go duration (`1m30s`, `500ms`, `15s`, `1.5h`) into milliseconds; undefined when malformed. */
export function parseGoDuration(value: string): number | undefined {
  const parts = [...value.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((part) => part[0]).join('') !== value) return undefined;
  return parts.reduce((total, part) => total + Number(part[1]) * (DURATION_UNITS_MS[part[2] ?? ''] ?? Number.NaN), 0);
}

/** Usage text for `--help`. */
export function managerFlagsUsage(defaults: ManagerFlagDefaults): string {
  return [
    '  --kubeconfig <path>                  kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)',
    '  --namespace <ns>                     watch only this namespace (default: all)',
    '  --watch-filter <value>               only objects labelled cluster.x-k8s.io/watch-filter=<value>',
    '  --leader-elect[=true|false]          enable leader election (default false)',
    '  --leader-election-namespace <ns>     namespace of the Lease (default: the pod namespace)',
    `  --leader-election-id <name>          name of the Lease (default ${defaults.leaderElectionId})`,
    '  --leader-elect-lease-duration <d>    how long followers wait before taking an unrenewed Lease (default 15s)',
    '  --leader-elect-renew-deadline <d>    how long the leader retries renewing before it stops leading (default 10s)',
    '  --leader-elect-retry-period <d>      time between acquire/renew attempts (default 2s)',
    `  --metrics-bind-address <addr>        /metrics address, 0 disables (default ${defaults.metricsBindAddress ?? ':8080'})`,
    `  --health-probe-bind-address <addr>   /healthz and /readyz address (default ${defaults.healthProbeBindAddress ?? ':8081'})`,
    `  --concurrency <n>                    concurrent reconciles per controller (default ${defaults.concurrency ?? 10})`,
    `  --log-level <level>                  ${LOG_LEVELS.join('|')} (default ${defaults.logLevel ?? 'info'})`,
  ].join('\n');
}

/** `parseArgs` has no `--flag=false` for booleans (Go's flag package does): take those out first. */
function extractBooleanAssignments(argv: readonly string[]): { args: string[]; booleans: Record<string, boolean> } {
  const args: string[] = [];
  const booleans: Record<string, boolean> = {};
  for (const arg of argv) {
    const match = /^--([a-z-]+)=(.*)$/.exec(arg);
    const flag = match?.[1];
    if (match && flag && (BOOLEAN_FLAGS as readonly string[]).includes(flag)) {
      const value = match[2] ?? '';
      if (value !== 'true' && value !== 'false') throw new FlagError(flag, value, 'must be true or false');
      booleans[flag] = value === 'true';
    } else {
      args.push(arg);
    }
  }
  return { args, booleans };
}

function translateParseError(error: unknown): Error {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown }).code;
  const flag = /'(?:--)?([^' ]+)/.exec(message)?.[1]?.replace(/^-+/, '') ?? 'unknown';
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return new FlagError(flag, undefined, `unknown flag (${message})`);
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE')
    return new FlagError(flag, undefined, `needs a value (${message})`);
  if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
    return new FlagError('', undefined, `unexpected argument (${message})`);
  }
  return new Error(`cannot parse flags: ${message}`, { cause: error });
}
