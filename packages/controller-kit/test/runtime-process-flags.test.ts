import { testEnv } from '@tally-ipam/testenv/vitest';
import { describe, expect, it } from 'vitest';
import { runControllerApp } from '../src/app/controller-app.js';
import { controllerFlagsUsage, parseControllerFlags } from '../src/app/controller-flags.js';
import { readPackageVersion } from '../src/app/package-version.js';
import { setRequestRateLimit } from '../src/client/request-rate-limit.js';
import { KubeTransport } from '../src/client/transport.js';
import { createLogger, textLine } from '../src/manager/logger.js';
import { ManualClock } from './fixtures/core-manual-clock.js';

const APP = {
  name: 'flags-test',
  command: 'flags-test-controller',
  description: 'Checks the process flags.',
  leaderElectionId: 'flags-test-leader-election',
  webhookPurpose: 'admission',
  version: '1.2.3',
};

describe('--kube-api-qps / --kube-api-burst', () => {
  it('holds every request past the burst until the bucket refills, against the real API server', async () => {
    // testEnv() gives a fresh KubeConfig object each call; the limit belongs to that object alone.
    const { kubeConfig } = testEnv();
    const clock = new ManualClock();
    const throttle = setRequestRateLimit(kubeConfig, { qps: 1, burst: 3 }, clock);
    const transport = new KubeTransport(kubeConfig);
    let answered = 0;
    const requests = Array.from({ length: 6 }, () =>
      transport.request({ method: 'GET', path: '/version' }).then(() => {
        answered += 1;
      }),
    );
    try {
      // The burst goes out at once; the other three wait for tokens the manual clock has not refilled yet.
      await expect.poll(() => answered, { timeout: 30_000 }).toBe(3);
      expect(throttle.throttled).toBe(3);
      clock.advance(1_000);
      await expect.poll(() => answered, { timeout: 30_000 }).toBe(4);
      clock.advance(2_000);
      await Promise.all(requests);
      expect(answered).toBe(6);
    } finally {
      transport.close();
    }
  });
});

describe('--logging-format=text', () => {
  it('renders pino JSON as one readable line: time, level, message, then key=value', () => {
    const lines: string[] = [];
    const logger = createLogger({ name: 'text', format: 'text', destination: { write: (line) => lines.push(line) } });
    logger.warn({ controller: 'claims', namespace: 'team a', retries: 3 }, 'Reconcile target gone');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^\d{4}-\d\d-\d\dT[\d:.]+Z WARN {2}Reconcile target gone controller=claims namespace="team a" retries=3\n$/,
    );
    expect(textLine('not json')).toBe('not json');
  });
});

describe('--version and --help', () => {
  it('prints the version and exits 0', async () => {
    let out = '';
    const code = await runControllerApp({
      app: APP,
      setup: () => undefined,
      argv: ['--version'],
      stdout: (text) => {
        out += text;
      },
    });
    expect(code).toBe(0);
    expect(out).toBe('flags-test-controller 1.2.3\n');
  });

  it("reads an app's version from its package.json, and says so when there is none", () => {
    expect(readPackageVersion(new URL('../package.json', import.meta.url))).toMatch(/^\d+\.\d+\.\d+/);
    expect(readPackageVersion(new URL('./no-such-package.json', import.meta.url))).toBe(
      'unknown (no package.json next to the executable)',
    );
  });

  it('lists ~/.kube/config as a default of --kubeconfig only for an app that reads it', () => {
    const kubeconfigLine = (usage: string): string =>
      usage.split('\n').find((line) => line.trimStart().startsWith('--kubeconfig')) ?? '';
    expect(kubeconfigLine(controllerFlagsUsage(APP))).toContain('(default: $KUBECONFIG, in-cluster, ~/.kube/config)');
    expect(kubeconfigLine(controllerFlagsUsage({ ...APP, explicitClusterOnly: true }))).toContain(
      '(default: $KUBECONFIG, in-cluster; ~/.kube/config only if named here)',
    );
  });

  it('says so in --help when the app runs something else without an explicit cluster', async () => {
    let out = '';
    const code = await runControllerApp({
      app: APP,
      setup: () => undefined,
      argv: ['--help'],
      stdout: (text) => {
        out += text;
      },
      withoutExplicitCluster: async () => 0,
    });
    expect(code).toBe(0);
    expect(out).toContain('~/.kube/config only if named here');
    expect(out).not.toContain('in-cluster, ~/.kube/config');
  });

  it('lists every Cluster API flag in the usage', () => {
    const usage = controllerFlagsUsage(APP);
    for (const flag of [
      '--diagnostics-address',
      '--insecure-diagnostics',
      '--metrics-bind-address',
      '--tls-min-version',
      '--tls-cipher-suites',
      '-v, --v',
      '--logging-format',
      '--sync-period',
      '--kube-api-qps',
      '--kube-api-burst',
      '--cache-sync-timeout',
      '--api-server-unreachable-timeout',
      '--version',
      '--health-probe-bind-address',
      '--webhook-port',
      '--webhook-shutdown-delay',
    ]) {
      expect(usage).toContain(flag);
    }
  });
});

describe('--webhook-shutdown-delay', () => {
  it('is 0 unless given, and takes 0 or a Go duration in both flag forms', () => {
    expect(parseControllerFlags([], APP).webhook.shutdownDelayMs).toBe(0);
    expect(parseControllerFlags(['--webhook-shutdown-delay=5s'], APP).webhook.shutdownDelayMs).toBe(5_000);
    expect(parseControllerFlags(['--webhook-shutdown-delay', '1500ms'], APP).webhook.shutdownDelayMs).toBe(1_500);
    expect(parseControllerFlags(['--webhook-shutdown-delay=0'], APP).webhook.shutdownDelayMs).toBe(0);
    expect(parseControllerFlags(['--webhook-shutdown-delay=20s'], APP).webhook.shutdownDelayMs).toBe(20_000);
  });

  it.each([
    ['5', 'invalid value "5" for flag --webhook-shutdown-delay: must be a duration such as 5s or 500ms, or 0'],
    ['-1s', 'invalid value "-1s" for flag --webhook-shutdown-delay: must be a duration such as 5s or 500ms, or 0'],
    ['0.5ms', 'invalid value "0.5ms" for flag --webhook-shutdown-delay: must be a duration such as 5s or 500ms, or 0'],
    [
      '21s',
      'invalid value "21s" for flag --webhook-shutdown-delay: must be at most 20s: with the 10s drain of in-flight ' +
        'requests a stop must fit the graceful shutdown timeout (30s) and a terminationGracePeriodSeconds of 30',
    ],
  ])('refuses %j naming the flag and the value', (value, message) => {
    expect(() => parseControllerFlags([`--webhook-shutdown-delay=${value}`], APP)).toThrow(message);
  });
});
