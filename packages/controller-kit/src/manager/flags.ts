import { type ParseArgsConfig, parseArgs } from 'node:util';
import { z } from 'zod';
import { parseBindAddress } from './bind-address.js';
import { FlagError } from './flag-error.js';
import { DEFAULT_LEADER_ELECTION_TIMINGS, validateLeaderElectionTimings } from './leader-election.js';
import { parseTLSOptions, type TLSOptions } from './tls-options.js';

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const LOGGING_FORMATS = ['json', 'text'] as const;
export type LoggingFormat = (typeof LOGGING_FORMATS)[number];

/** Cluster API's defaults for the flags it shares with every provider's main. */
export const MANAGER_FLAG_DEFAULTS = {
  diagnosticsAddress: ':8443',
  /** With `--insecure-diagnostics` and no address: plain HTTP only on loopback. */
  insecureDiagnosticsAddress: '127.0.0.1:8443',
  healthProbeBindAddress: ':8081',
  /** CAPI's `--sync-period` default (controller-runtime's own is 10 h). */
  syncPeriodMs: 10 * 60_000,
  /** CAPI's `--kube-api-qps` / `--kube-api-burst`. */
  kubeAPIQPS: 20,
  kubeAPIBurst: 30,
  /** controller-runtime's `CacheSyncTimeout`. */
  cacheSyncTimeoutMs: 2 * 60_000,
  /** How long the API server may stay unreachable before the process exits to be restarted. */
  apiServerUnreachableTimeoutMs: 2 * 60_000,
} as const;

/** klog's `-v` onto pino's levels: 0 is info; 1–4 add debug (CAPI logs reconcile details at 4); 5+ trace. */
export function logLevelForVerbosity(verbosity: number): LogLevel {
  if (verbosity <= 0) return 'info';
  return verbosity < 5 ? 'debug' : 'trace';
}

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
  /** `--diagnostics-address`: `/metrics` over HTTPS with TokenReview/SubjectAccessReview; `0` disables. */
  readonly diagnosticsAddress: string;
  /** `--insecure-diagnostics`: plain HTTP without authentication (loopback unless an address is given). */
  readonly insecureDiagnostics: boolean;
  /** Where the diagnostics serving certificate is (`tls.crt`/`tls.key`); undefined: self-signed at start. */
  readonly diagnosticsCertDir: string | undefined;
  /**
   * The deprecated `--metrics-bind-address`, when given: the old plain-HTTP metrics server at that address (it
   * implies `--insecure-diagnostics`). Undefined when not given.
   */
  readonly metricsBindAddress: string | undefined;
  readonly healthProbeBindAddress: string;
  /** Concurrent reconciles per controller. */
  readonly concurrency: number;
  /** `--log-level` when given, else from `-v`. */
  readonly logLevel: LogLevel;
  /** `-v` / `--v` (klog verbosity). */
  readonly verbosity: number;
  readonly loggingFormat: LoggingFormat;
  /** `--tls-min-version` / `--tls-cipher-suites` for the webhook and diagnostics servers. */
  readonly tls: TLSOptions;
  /** `--sync-period`: how often informers re-announce every cached object (resync). */
  readonly syncPeriodMs: number;
  /** `--kube-api-qps` / `--kube-api-burst`: the client-side token bucket for every API request. */
  readonly kubeAPIQPS: number;
  readonly kubeAPIBurst: number;
  /** `--cache-sync-timeout`: the caches must sync within this or the process exits. */
  readonly cacheSyncTimeoutMs: number;
  /** `--api-server-unreachable-timeout`: the process exits when the API server stays unreachable this long. */
  readonly apiServerUnreachableTimeoutMs: number;
  /** `--version`: print the version and exit. */
  readonly version: boolean;
  /** Warnings for deprecated flags that were used, to log once the logger exists. */
  readonly deprecations: readonly string[];
}

export interface ManagerFlagDefaults {
  /** The Lease name, e.g. `tally-ipam-controller-leader-election`. Required: it is the controller's identity. */
  readonly leaderElectionId: string;
  readonly diagnosticsAddress?: string;
  readonly healthProbeBindAddress?: string;
  readonly concurrency?: number;
  readonly logLevel?: LogLevel;
  readonly kubeAPIQPS?: number;
  readonly kubeAPIBurst?: number;
  /**
   * Whether `~/.kube/config` is the last default of `--kubeconfig`, as in controller-runtime (default true). False for
   * an app that acts only on a cluster named on purpose and does something else without one (see
   * `ControllerAppIdentity.explicitClusterOnly`): its usage text then does not offer a default it ignores.
   */
  readonly homeKubeconfig?: boolean;
}

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

const BOOLEAN_FLAGS = ['leader-elect', 'insecure-diagnostics', 'version'] as const;

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
  'diagnostics-address': { type: 'string' },
  'insecure-diagnostics': { type: 'boolean' },
  'diagnostics-cert-dir': { type: 'string' },
  concurrency: { type: 'string' },
  'log-level': { type: 'string' },
  v: { type: 'string' },
  'logging-format': { type: 'string' },
  'tls-min-version': { type: 'string' },
  'tls-cipher-suites': { type: 'string' },
  'sync-period': { type: 'string' },
  'kube-api-qps': { type: 'string' },
  'kube-api-burst': { type: 'string' },
  'cache-sync-timeout': { type: 'string' },
  'api-server-unreachable-timeout': { type: 'string' },
  version: { type: 'boolean' },
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
  'diagnostics-cert-dir': z.string().min(1, 'must not be empty'),
  v: z.string().regex(/^(0|[1-9]\d?)$/, 'must be a verbosity level 0-99'),
  'logging-format': z.string().refine((value) => (LOGGING_FORMATS as readonly string[]).includes(value), {
    message: `must be one of ${LOGGING_FORMATS.join(', ')}`,
  }),
  'kube-api-qps': z
    .string()
    .regex(/^\d{1,6}(\.\d{1,6})?$/, 'must be a positive number')
    .refine((value) => Number(value) > 0, { message: 'must be a positive number' }),
  'kube-api-burst': z.string().regex(/^[1-9]\d{0,5}$/, 'must be a positive integer'),
};

/**
 * Parses kube-style manager flags (`--flag value` or `--flag=value`; booleans as `--flag`, `--flag=true|false`).
 * Throws `FlagError` naming the flag and value for unknown flags, missing values and invalid values.
 */
export function parseManagerFlags(argv: readonly string[], defaults: ManagerFlagDefaults): ManagerFlags {
  const { args, booleans } = extractBooleanAssignments(normalizeVerbosity(argv));
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
  const insecureDiagnostics = values['insecure-diagnostics'] === true;
  const deprecations: string[] = [];
  const metricsBindAddress =
    values['metrics-bind-address'] === undefined ? undefined : bindAddress('metrics-bind-address', '0');
  const diagnosticsGiven = values['diagnostics-address'] !== undefined;
  if (metricsBindAddress !== undefined) {
    if (diagnosticsGiven) {
      throw new FlagError(
        'metrics-bind-address',
        metricsBindAddress,
        'is deprecated and cannot be combined with --diagnostics-address',
      );
    }
    deprecations.push(
      `--metrics-bind-address is deprecated: use --diagnostics-address (HTTPS with authentication) or --insecure-diagnostics; serving plain HTTP metrics on ${metricsBindAddress}`,
    );
  }
  const diagnosticsAddress = bindAddress(
    'diagnostics-address',
    metricsBindAddress ??
      (insecureDiagnostics
        ? MANAGER_FLAG_DEFAULTS.insecureDiagnosticsAddress
        : (defaults.diagnosticsAddress ?? MANAGER_FLAG_DEFAULTS.diagnosticsAddress)),
  );
  const verbosity = Number(text('v', '0'));
  const positive = (flag: FlagName, fallback: number): number => Number(text(flag, String(fallback)));
  return {
    ...timings,
    kubeconfig: text('kubeconfig', undefined),
    namespace: namespace === '' ? undefined : namespace,
    watchFilter: text('watch-filter', '') ?? '',
    leaderElect: values['leader-elect'] === true,
    leaderElectionNamespace: text('leader-election-namespace', undefined),
    leaderElectionId,
    diagnosticsAddress,
    insecureDiagnostics: insecureDiagnostics || metricsBindAddress !== undefined,
    diagnosticsCertDir: text('diagnostics-cert-dir', undefined),
    metricsBindAddress,
    healthProbeBindAddress: bindAddress('health-probe-bind-address', defaults.healthProbeBindAddress ?? ':8081'),
    concurrency: Number(text('concurrency', String(defaults.concurrency ?? 10))),
    logLevel: (text('log-level', undefined) ??
      (values.v === undefined ? (defaults.logLevel ?? 'info') : logLevelForVerbosity(verbosity))) as LogLevel,
    verbosity,
    loggingFormat: (text('logging-format', 'json') ?? 'json') as LoggingFormat,
    tls: parseTLSOptions(text('tls-min-version', undefined), text('tls-cipher-suites', undefined)),
    syncPeriodMs: duration('sync-period', MANAGER_FLAG_DEFAULTS.syncPeriodMs),
    kubeAPIQPS: positive('kube-api-qps', defaults.kubeAPIQPS ?? MANAGER_FLAG_DEFAULTS.kubeAPIQPS),
    kubeAPIBurst: positive('kube-api-burst', defaults.kubeAPIBurst ?? MANAGER_FLAG_DEFAULTS.kubeAPIBurst),
    cacheSyncTimeoutMs: duration('cache-sync-timeout', MANAGER_FLAG_DEFAULTS.cacheSyncTimeoutMs),
    apiServerUnreachableTimeoutMs: duration(
      'api-server-unreachable-timeout',
      MANAGER_FLAG_DEFAULTS.apiServerUnreachableTimeoutMs,
    ),
    version: values.version === true,
    deprecations,
  };
}

/** klog spells verbosity `-v=4`, `-v 4`, `-v4`, `--v=4` or `--v 4`; all become `--v=4` for the parser. */
function normalizeVerbosity(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let index = 0; index < argv.length; index += 1) {
    const arg = argv[index] ?? '';
    const match = /^--?v(?:=(.*)|(\d.*))?$/s.exec(arg);
    if (!match) {
      out.push(arg);
      continue;
    }
    let value = match[1] ?? match[2];
    if (value === undefined) {
      value = argv[index + 1];
      index += 1;
    }
    if (value === undefined) throw new FlagError('v', undefined, 'needs a value');
    out.push(`--v=${value}`);
  }
  return out;
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
    defaults.homeKubeconfig === false
      ? '  --kubeconfig <path>                  kubeconfig file (default: $KUBECONFIG, in-cluster; ~/.kube/config only if named here)'
      : '  --kubeconfig <path>                  kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)',
    '  --namespace <ns>                     watch only this namespace (default: all)',
    '  --watch-filter <value>               only objects labelled cluster.x-k8s.io/watch-filter=<value>',
    '  --leader-elect[=true|false]          enable leader election (default false)',
    '  --leader-election-namespace <ns>     namespace of the Lease (default: the pod namespace)',
    `  --leader-election-id <name>          name of the Lease (default ${defaults.leaderElectionId})`,
    '  --leader-elect-lease-duration <d>    how long followers wait before taking an unrenewed Lease (default 15s)',
    '  --leader-elect-renew-deadline <d>    how long the leader retries renewing before it stops leading (default 10s)',
    '  --leader-elect-retry-period <d>      time between acquire/renew attempts (default 2s)',
    `  --diagnostics-address <addr>         /metrics over HTTPS with TokenReview/SubjectAccessReview, 0 disables (default ${defaults.diagnosticsAddress ?? MANAGER_FLAG_DEFAULTS.diagnosticsAddress})`,
    `  --insecure-diagnostics[=true|false]  serve /metrics over plain HTTP without authentication (default address ${MANAGER_FLAG_DEFAULTS.insecureDiagnosticsAddress})`,
    '  --diagnostics-cert-dir <dir>         tls.crt/tls.key for diagnostics (default: self-signed at start)',
    '  --metrics-bind-address <addr>        DEPRECATED: plain HTTP /metrics at <addr> (= --insecure-diagnostics there)',
    `  --health-probe-bind-address <addr>   /healthz and /readyz address, plain HTTP (default ${defaults.healthProbeBindAddress ?? ':8081'})`,
    '  --tls-min-version <version>          VersionTLS12|VersionTLS13 for the webhook and diagnostics servers (default VersionTLS12)',
    '  --tls-cipher-suites <names>          comma-separated Go cipher suite names (default: the runtime defaults)',
    `  --concurrency <n>                    concurrent reconciles per controller (default ${defaults.concurrency ?? 10})`,
    `  --sync-period <d>                    resync period of the informers (default ${MANAGER_FLAG_DEFAULTS.syncPeriodMs / 60_000}m)`,
    `  --kube-api-qps <n>                   client-side rate limit of API requests per second (default ${defaults.kubeAPIQPS ?? MANAGER_FLAG_DEFAULTS.kubeAPIQPS})`,
    `  --kube-api-burst <n>                 burst of that rate limit (default ${defaults.kubeAPIBurst ?? MANAGER_FLAG_DEFAULTS.kubeAPIBurst})`,
    `  --cache-sync-timeout <d>             exit when the caches have not synced within this (default ${MANAGER_FLAG_DEFAULTS.cacheSyncTimeoutMs / 60_000}m)`,
    `  --api-server-unreachable-timeout <d> exit when the API server stays unreachable this long (default ${MANAGER_FLAG_DEFAULTS.apiServerUnreachableTimeoutMs / 60_000}m)`,
    `  --log-level <level>                  ${LOG_LEVELS.join('|')} (default ${defaults.logLevel ?? 'info'}; wins over -v)`,
    '  -v, --v <n>                          log verbosity: 0 info, 1-4 debug, 5+ trace (default 0)',
    '  --logging-format <format>            json|text (default json)',
    '  --version                            print the version and exit',
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
