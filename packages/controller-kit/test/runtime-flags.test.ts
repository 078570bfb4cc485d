import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testEnv } from '@tally-ipam/testenv/vitest';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseBindAddress } from '../src/manager/bind-address.js';
import { FlagError } from '../src/manager/flag-error.js';
import { type ManagerFlags, parseGoDuration, parseManagerFlags } from '../src/manager/flags.js';
import { loadKubeConfig, readInClusterNamespace, resolveKubeConfigSource } from '../src/manager/kubeconfig.js';

const defaults = { leaderElectionId: 'tally-test-leader' };

function flagErrorOf(argv: string[]): FlagError {
  try {
    parseManagerFlags(argv, defaults);
  } catch (error) {
    if (error instanceof FlagError) return error;
    throw error;
  }
  throw new Error(`expected ${argv.join(' ')} to be rejected`);
}

describe('parseManagerFlags', () => {
  it('gives controller-runtime defaults when no flag is passed', () => {
    expect(parseManagerFlags([], defaults)).toEqual<ManagerFlags>({
      kubeconfig: undefined,
      namespace: undefined,
      watchFilter: '',
      leaderElect: false,
      leaderElectionNamespace: undefined,
      leaderElectionId: 'tally-test-leader',
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      diagnosticsAddress: ':8443',
      insecureDiagnostics: false,
      diagnosticsCertDir: undefined,
      metricsBindAddress: undefined,
      healthProbeBindAddress: ':8081',
      concurrency: 10,
      logLevel: 'info',
      verbosity: 0,
      loggingFormat: 'json',
      tls: { minVersion: 'TLSv1.2', ciphers: undefined },
      syncPeriodMs: 600_000,
      kubeAPIQPS: 20,
      kubeAPIBurst: 30,
      cacheSyncTimeoutMs: 120_000,
      apiServerUnreachableTimeoutMs: 120_000,
      version: false,
      deprecations: [],
    });
  });

  it('reads every flag in both --flag value and --flag=value forms', () => {
    const flags = parseManagerFlags(
      [
        '--kubeconfig',
        '/tmp/kc',
        '--namespace=team-a',
        '--watch-filter',
        'blue',
        '--leader-elect',
        '--leader-election-namespace=kube-system',
        '--leader-election-id',
        'ipam.tally.dev',
        '--leader-elect-lease-duration=1m30s',
        '--leader-elect-renew-deadline',
        '20s',
        '--leader-elect-retry-period=1.5s',
        '--metrics-bind-address=127.0.0.1:9090',
        '--health-probe-bind-address',
        '[::1]:0',
        '--concurrency=4',
        '--log-level',
        'debug',
      ],
      defaults,
    );
    expect(flags).toEqual<ManagerFlags>({
      kubeconfig: '/tmp/kc',
      namespace: 'team-a',
      watchFilter: 'blue',
      leaderElect: true,
      leaderElectionNamespace: 'kube-system',
      leaderElectionId: 'ipam.tally.dev',
      leaseDurationMs: 90_000,
      renewDeadlineMs: 20_000,
      retryPeriodMs: 1_500,
      diagnosticsAddress: '127.0.0.1:9090',
      insecureDiagnostics: true,
      diagnosticsCertDir: undefined,
      metricsBindAddress: '127.0.0.1:9090',
      healthProbeBindAddress: '[::1]:0',
      concurrency: 4,
      logLevel: 'debug',
      verbosity: 0,
      loggingFormat: 'json',
      tls: { minVersion: 'TLSv1.2', ciphers: undefined },
      syncPeriodMs: 600_000,
      kubeAPIQPS: 20,
      kubeAPIBurst: 30,
      cacheSyncTimeoutMs: 120_000,
      apiServerUnreachableTimeoutMs: 120_000,
      version: false,
      deprecations: [expect.stringContaining('--metrics-bind-address is deprecated') as unknown as string],
    });
  });

  it("reads Cluster API's diagnostics, TLS, logging, client and timeout flags", () => {
    const flags = parseManagerFlags(
      [
        '--diagnostics-address=:9443',
        '--diagnostics-cert-dir',
        '/certs',
        '--tls-min-version=VersionTLS13',
        '--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384',
        '-v',
        '4',
        '--logging-format=text',
        '--sync-period=15m',
        '--kube-api-qps=50.5',
        '--kube-api-burst',
        '100',
        '--cache-sync-timeout=30s',
        '--api-server-unreachable-timeout=1m30s',
        '--version',
      ],
      defaults,
    );
    expect(flags).toMatchObject({
      diagnosticsAddress: ':9443',
      insecureDiagnostics: false,
      diagnosticsCertDir: '/certs',
      tls: { minVersion: 'TLSv1.3', ciphers: 'TLS_AES_256_GCM_SHA384:ECDHE-RSA-AES128-GCM-SHA256' },
      verbosity: 4,
      logLevel: 'debug',
      loggingFormat: 'text',
      syncPeriodMs: 900_000,
      kubeAPIQPS: 50.5,
      kubeAPIBurst: 100,
      cacheSyncTimeoutMs: 30_000,
      apiServerUnreachableTimeoutMs: 90_000,
      version: true,
      deprecations: [],
    });
  });

  it('keeps the TLS 1.3 suites when a cipher list names only TLS 1.2 suites, as Go does', () => {
    const { tls } = parseManagerFlags(['--tls-cipher-suites=TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384'], defaults);
    expect(tls.ciphers?.split(':')).toEqual([
      'TLS_AES_256_GCM_SHA384',
      'TLS_CHACHA20_POLY1305_SHA256',
      'TLS_AES_128_GCM_SHA256',
      'ECDHE-ECDSA-AES256-GCM-SHA384',
    ]);
  });

  it.each([
    [['-v=5'], 'trace', 5],
    [['--v', '0'], 'info', 0],
    [['-v2'], 'debug', 2],
    [['--v=1', '--log-level=warn'], 'warn', 1],
  ])('maps klog verbosity %j onto the log level', (argv, level, verbosity) => {
    expect(parseManagerFlags(argv, defaults)).toMatchObject({ logLevel: level, verbosity });
  });

  it('serves insecure diagnostics on loopback unless an address is given', () => {
    expect(parseManagerFlags(['--insecure-diagnostics'], defaults)).toMatchObject({
      insecureDiagnostics: true,
      diagnosticsAddress: '127.0.0.1:8443',
    });
    expect(parseManagerFlags(['--insecure-diagnostics', '--diagnostics-address=:8080'], defaults)).toMatchObject({
      insecureDiagnostics: true,
      diagnosticsAddress: ':8080',
    });
  });

  it('accepts Go-style --leader-elect=true|false and rejects other values', () => {
    expect(parseManagerFlags(['--leader-elect=true'], defaults).leaderElect).toBe(true);
    expect(parseManagerFlags(['--leader-elect=false'], defaults).leaderElect).toBe(false);
    const error = flagErrorOf(['--leader-elect=yes']);
    expect(error.flag).toBe('leader-elect');
    expect(error.message).toBe('invalid value "yes" for flag --leader-elect: must be true or false');
  });

  it('lets --metrics-bind-address=0 disable metrics and an empty namespace mean all namespaces', () => {
    const flags = parseManagerFlags(['--metrics-bind-address=0', '--namespace='], defaults);
    expect(flags.metricsBindAddress).toBe('0');
    expect(flags.diagnosticsAddress).toBe('0');
    expect(flags.namespace).toBeUndefined();
  });

  it.each([
    [['--concurrency', '0'], 'concurrency', '0', 'must be a positive integer'],
    [['--concurrency=ten'], 'concurrency', 'ten', 'must be a positive integer'],
    [['--log-level=verbose'], 'log-level', 'verbose', 'must be one of trace, debug, info, warn, error, fatal, silent'],
    [['--namespace=Team_A'], 'namespace', 'Team_A', 'must be a namespace name'],
    [['--leader-election-id=Bad_Id'], 'leader-election-id', 'Bad_Id', 'must be a Lease name'],
    [['--watch-filter=-x'], 'watch-filter', '-x', 'must be a label value'],
    [['--metrics-bind-address=8080'], 'metrics-bind-address', '8080', 'expected [host]:port'],
    [['--health-probe-bind-address=:70000'], 'health-probe-bind-address', ':70000', 'expected [host]:port'],
    [['--diagnostics-address=8443'], 'diagnostics-address', '8443', 'expected [host]:port'],
    [
      ['--tls-min-version=VersionTLS10'],
      'tls-min-version',
      'VersionTLS10',
      'must be one of VersionTLS12, VersionTLS13',
    ],
    [
      ['--tls-cipher-suites=TLS_RSA_WITH_RC4_128_SHA'],
      'tls-cipher-suites',
      'TLS_RSA_WITH_RC4_128_SHA',
      'unknown or unsupported cipher suite "TLS_RSA_WITH_RC4_128_SHA"',
    ],
    [['-v=-1'], 'v', '-1', 'must be a verbosity level 0-99'],
    [['--logging-format=yaml'], 'logging-format', 'yaml', 'must be one of json, text'],
    [['--kube-api-qps=0'], 'kube-api-qps', '0', 'must be a positive number'],
    [['--kube-api-burst=1.5'], 'kube-api-burst', '1.5', 'must be a positive integer'],
    [['--sync-period=never'], 'sync-period', 'never', 'must be a positive duration'],
    [['--cache-sync-timeout=0s'], 'cache-sync-timeout', '0s', 'must be a positive duration'],
    [['--insecure-diagnostics=maybe'], 'insecure-diagnostics', 'maybe', 'must be true or false'],
  ])('rejects %j naming the flag and the value', (argv, flag, value, reason) => {
    const error = flagErrorOf(argv);
    expect(error.flag).toBe(flag);
    expect(error.value).toBe(value);
    expect(error.message).toContain(`invalid value ${JSON.stringify(value)} for flag --${flag}: ${reason}`);
  });

  it('rejects malformed durations and timings that would let two leaders overlap', () => {
    const malformed = flagErrorOf(['--leader-elect-retry-period=2 seconds']);
    expect(malformed.flag).toBe('leader-elect-retry-period');
    expect(malformed.message).toBe(
      'invalid value "2 seconds" for flag --leader-elect-retry-period: must be a positive duration such as 15s, 500ms or 1m',
    );
    const overlap = flagErrorOf(['--leader-elect-lease-duration=5s', '--leader-elect-renew-deadline=10s']);
    expect(overlap.message).toContain('lease duration (5000 ms) must be greater than renew deadline (10000 ms)');
  });

  it('rejects unknown flags, missing values and positional arguments', () => {
    const unknown = flagErrorOf(['--frobnicate']);
    expect(unknown.flag).toBe('frobnicate');
    expect(unknown.message).toMatch(/^flag --frobnicate: unknown flag/);
    const missing = flagErrorOf(['--namespace']);
    expect(missing.flag).toBe('namespace');
    expect(missing.message).toMatch(/^flag --namespace: needs a value/);
    expect(flagErrorOf(['stray']).message).toMatch(/unexpected argument/);
  });

  it('rejects a default Lease name that is not a valid name', () => {
    expect(() => parseManagerFlags([], { leaderElectionId: 'Not Valid' })).toThrow(FlagError);
  });
});

describe('parseGoDuration', () => {
  it('reads Go durations and rejects anything else', () => {
    expect(parseGoDuration('15s')).toBe(15_000);
    expect(parseGoDuration('500ms')).toBe(500);
    expect(parseGoDuration('1m30s')).toBe(90_000);
    expect(parseGoDuration('1.5h')).toBe(5_400_000);
    for (const bad of ['', '15', 's', '1x', ' 1s', '1s ', '-1s']) expect(parseGoDuration(bad)).toBeUndefined();
  });

  it('sums the parts of every well-formed combination', () => {
    fc.assert(
      fc.property(
        fc.nat({ max: 48 }),
        fc.nat({ max: 59 }),
        fc.nat({ max: 59 }),
        fc.nat({ max: 999 }),
        (h, m, s, ms) => {
          expect(parseGoDuration(`${h}h${m}m${s}s${ms}ms`)).toBe(((h * 60 + m) * 60 + s) * 1000 + ms);
        },
      ),
    );
  });
});

describe('parseBindAddress', () => {
  it('parses host:port forms and treats 0 as disabled', () => {
    expect(parseBindAddress('0')).toBeUndefined();
    expect(parseBindAddress(':8080')).toEqual({ host: undefined, port: 8080 });
    expect(parseBindAddress('127.0.0.1:0')).toEqual({ host: '127.0.0.1', port: 0 });
    expect(parseBindAddress('[::1]:9443')).toEqual({ host: '::1', port: 9443 });
    expect(parseBindAddress('localhost:81')).toEqual({ host: 'localhost', port: 81 });
  });

  it('round-trips every port and rejects ports above 65535', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 65_535 }), (port) => {
        expect(parseBindAddress(`127.0.0.1:${port}`)).toEqual({ host: '127.0.0.1', port });
      }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 65_536, max: 99_999 }), (port) => {
        expect(() => parseBindAddress(`:${port}`)).toThrow(`invalid bind address ":${port}"`);
      }),
    );
  });
});

describe('resolveKubeConfigSource', () => {
  const serviceAccountDir = '/sa';
  const inClusterEnv = { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' };
  const everything = (path: string): boolean => path === '/sa/token' || path === '/home/me/.kube/config';

  it('prefers the flag, then KUBECONFIG, then in-cluster, then ~/.kube/config', () => {
    const base = { homeDir: '/home/me', serviceAccountDir, exists: everything };
    expect(resolveKubeConfigSource('/flag', { ...base, env: { KUBECONFIG: '/env', ...inClusterEnv } })).toEqual({
      kind: 'file',
      path: '/flag',
      from: 'flag',
    });
    expect(resolveKubeConfigSource(undefined, { ...base, env: { KUBECONFIG: '/a:/b', ...inClusterEnv } })).toEqual({
      kind: 'env',
      paths: '/a:/b',
    });
    expect(resolveKubeConfigSource(undefined, { ...base, env: inClusterEnv })).toEqual({ kind: 'in-cluster' });
    expect(resolveKubeConfigSource(undefined, { ...base, env: {} })).toEqual({
      kind: 'file',
      path: '/home/me/.kube/config',
      from: 'home',
    });
  });

  it('does not pick in-cluster without the service account token', () => {
    const source = resolveKubeConfigSource(undefined, {
      env: inClusterEnv,
      homeDir: '/home/me',
      serviceAccountDir,
      exists: (path) => path === '/home/me/.kube/config',
    });
    expect(source).toEqual({ kind: 'file', path: '/home/me/.kube/config', from: 'home' });
  });

  it('says what was tried when nothing is available', () => {
    expect(() =>
      resolveKubeConfigSource(undefined, { env: {}, homeDir: '/nowhere', serviceAccountDir, exists: () => false }),
    ).toThrow(
      'no kubeconfig found: pass --kubeconfig, set KUBECONFIG, run in a pod with a service account, or create /nowhere/.kube/config',
    );
  });
});

describe('loadKubeConfig', () => {
  it('loads the file named by the flag, or by KUBECONFIG when there is no flag', () => {
    const { kubeconfigPath, server } = testEnv();
    expect(loadKubeConfig(kubeconfigPath).getCurrentCluster()?.server).toBe(server);
    const saved = process.env.KUBECONFIG;
    process.env.KUBECONFIG = kubeconfigPath;
    try {
      expect(loadKubeConfig().getCurrentCluster()?.server).toBe(server);
    } finally {
      if (saved === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = saved;
    }
  });

  it('names the file it could not load', () => {
    expect(() => loadKubeConfig('/no/such/kubeconfig')).toThrow('cannot load kubeconfig from /no/such/kubeconfig: ');
  });
});

describe('readInClusterNamespace', () => {
  it('reads the namespace file of a service account directory, trimmed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'runtime-sa-'));
    try {
      expect(readInClusterNamespace(dir)).toBeUndefined();
      writeFileSync(join(dir, 'namespace'), 'tally-system\n');
      expect(readInClusterNamespace(dir)).toBe('tally-system');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
