import { createServingCertDir } from '@tally-ipam/testenv';
import { testEnv } from '@tally-ipam/testenv/vitest';
import { describe, expect, it } from 'vitest';
import {
  buildControllerManager,
  type ControllerAppContext,
  EXIT_BAD_FLAGS,
  EXIT_FAILED,
  EXIT_OK,
  runControllerApp,
} from '../src/app/controller-app.js';
import { type ControllerAppIdentity, parseControllerFlags } from '../src/app/controller-flags.js';
import { kubeConfigNamedExplicitly } from '../src/manager/kubeconfig.js';
import { WebhookServer } from '../src/webhook/server.js';
import { capturingLogger, waitFor } from './fixtures/runtime-support.js';

const APP: ControllerAppIdentity = {
  name: 'app-test',
  command: 'app-test-controller',
  description: 'Runs nothing in particular.',
  leaderElectionId: 'app-test-leader-election',
  webhookPurpose: 'widget admission',
};

/** Output written by `runControllerApp`, kept for assertions. */
function captured(): { text: () => string; write: (text: string) => void } {
  let text = '';
  return {
    text: () => text,
    write: (chunk) => {
      text += chunk;
    },
  };
}

/** A setup that records its context and adds a runnable that reports when the manager started it. */
function recordingSetup(): {
  setup: (context: ControllerAppContext) => void;
  context: () => ControllerAppContext | undefined;
  started: () => boolean;
} {
  let seen: ControllerAppContext | undefined;
  let started = false;
  return {
    setup: (context) => {
      seen = context;
      context.manager.add({
        needLeaderElection: true,
        start: async (signal) => {
          started = true;
          if (!signal.aborted)
            await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        },
      });
    },
    context: () => seen,
    started: () => started,
  };
}

describe('runControllerApp', () => {
  it('exits 2 on a bad flag with the flag, the value and the usage on stderr, without running setup', async () => {
    const stderr = captured();
    const setup = recordingSetup();
    const code = await runControllerApp({
      app: APP,
      setup: setup.setup,
      argv: ['--concurrency=lots'],
      stderr: stderr.write,
    });
    expect(code).toBe(EXIT_BAD_FLAGS);
    expect(stderr.text()).toContain('invalid value "lots" for flag --concurrency');
    expect(stderr.text()).toContain('usage: app-test-controller [flags]');
    expect(stderr.text()).toContain('widget admission webhook port');
    expect(setup.context()).toBeUndefined();
  });

  it('prints the usage and exits 0 on --help', async () => {
    const stdout = captured();
    const code = await runControllerApp({ app: APP, setup: () => undefined, argv: ['--help'], stdout: stdout.write });
    expect(code).toBe(EXIT_OK);
    expect(stdout.text()).toMatch(/^usage: app-test-controller \[flags\]\n\nRuns nothing in particular\.\n\n/);
    expect(stdout.text()).toContain('app-test-leader-election');
  });

  it('exits 1 and logs "manager failed" when the kubeconfig cannot be loaded', async () => {
    const { logger, lines } = capturingLogger('info');
    const code = await runControllerApp({
      app: APP,
      setup: () => undefined,
      argv: ['--kubeconfig', '/nonexistent/app-test-kubeconfig'],
      logger: () => logger,
      signal: new AbortController().signal,
    });
    expect(code).toBe(EXIT_FAILED);
    const failure = lines().find((line) => line.msg === 'manager failed');
    expect(JSON.stringify(failure?.err)).toContain('/nonexistent/app-test-kubeconfig');
  });

  it('runs the manager with the app setup against the cluster and exits 0 when stopped', async () => {
    const env = testEnv();
    const { logger, lines } = capturingLogger('info');
    const setup = recordingSetup();
    const stop = new AbortController();
    const exit = runControllerApp({
      app: APP,
      setup: setup.setup,
      argv: [
        '--kubeconfig',
        env.kubeconfigPath,
        '--namespace=app-test',
        '--webhook-port=0',
        '--metrics-bind-address=0',
        '--health-probe-bind-address=0',
      ],
      logger: () => logger,
      signal: stop.signal,
    });
    await waitFor('the manager to start the app runnable', () => (setup.started() ? true : undefined));
    expect(setup.context()?.flags.manager.namespace).toBe('app-test');
    expect(setup.context()?.flags.given).toEqual(
      new Set(['kubeconfig', 'namespace', 'webhook-port', 'metrics-bind-address', 'health-probe-bind-address']),
    );
    expect(setup.context()?.webhooks).toBeUndefined();
    expect(setup.context()?.manager.client).toBeDefined();
    stop.abort();
    expect(await exit).toBe(EXIT_OK);
    expect(lines().map((line) => line.msg)).toContain('stopped');
  });

  it('stops on a stop request as on the first signal, and logs why it stopped without one', async () => {
    const env = testEnv();
    const { logger, lines } = capturingLogger('info');
    const setup = recordingSetup();
    const request = new AbortController();
    const exit = runControllerApp({
      app: APP,
      setup: setup.setup,
      argv: [
        '--kubeconfig',
        env.kubeconfigPath,
        '--namespace=app-test',
        '--webhook-port=0',
        '--metrics-bind-address=0',
        '--health-probe-bind-address=0',
      ],
      logger: () => logger,
      // Never aborted, so no process signal handler is installed in the test worker.
      signal: new AbortController().signal,
      stopRequest: request.signal,
    });
    await waitFor('the manager to start the app runnable', () => (setup.started() ? true : undefined));
    request.abort(new Error('the parent process received SIGTERM'));
    expect(await exit).toBe(EXIT_OK);
    const logged = lines();
    expect(logged.find((line) => line.msg === 'stop requested, shutting down gracefully')).toMatchObject({
      reason: 'the parent process received SIGTERM',
    });
    expect(logged.map((line) => line.msg)).toContain('stopped');
  });
});

describe('buildControllerManager', () => {
  it('adds the webhook server after the app setup and makes it part of readiness', async () => {
    const env = testEnv();
    const certs = await createServingCertDir('app-test');
    const { logger, lines } = capturingLogger('info');
    const setup = recordingSetup();
    const stop = new AbortController();
    const flags = parseControllerFlags(['--webhook-cert-dir', certs.path, '--webhook-shutdown-delay=500ms'], APP);
    const { manager, webhooks } = buildControllerManager({
      kubeConfig: env.kubeConfig,
      name: APP.name,
      flags,
      logger,
      setup: setup.setup,
      webhookHost: '127.0.0.1',
      webhookPort: 0,
      metricsBindAddress: '0',
      healthProbeBindAddress: '127.0.0.1:0',
    });
    expect(webhooks).toBeInstanceOf(WebhookServer);
    expect(webhooks?.shutdownDelayMs).toBe(500);
    expect(setup.context()?.webhooks).toBe(webhooks);
    const running = manager.start(stop.signal);
    try {
      const probes = await waitFor('the health probe address', () => {
        const line = lines().find((entry) => entry.msg === 'serving health probes');
        return typeof line?.address === 'string' ? line.address : undefined;
      });
      const report = await waitFor('readiness with the webhook check', async () => {
        const response = await fetch(`http://${probes}/readyz?verbose`);
        return response.status === 200 ? response.text() : undefined;
      });
      expect(report).toContain('[+]webhook ok');
      expect(webhooks?.address()?.port).toBeGreaterThan(0);
    } finally {
      stop.abort();
      await running;
      await certs.remove();
    }
  });

  it('leaves the webhook server out with --webhook-port=0', () => {
    const setup = recordingSetup();
    const { webhooks } = buildControllerManager({
      kubeConfig: testEnv().kubeConfig,
      name: APP.name,
      flags: parseControllerFlags(['--webhook-port=0'], APP),
      logger: capturingLogger().logger,
      setup: setup.setup,
      webhookPort: 0,
    });
    expect(webhooks).toBeUndefined();
    expect(setup.context()?.webhooks).toBeUndefined();
  });
});

describe('kubeConfigNamedExplicitly', () => {
  const environment = (env: Record<string, string>, files: readonly string[]) => ({
    env,
    homeDir: '/home/me',
    serviceAccountDir: '/sa',
    exists: (path: string) => files.includes(path),
  });

  it('counts the flag, $KUBECONFIG and the service account, not ~/.kube/config alone', () => {
    expect(kubeConfigNamedExplicitly('/kc', environment({}, []))).toBe(true);
    expect(kubeConfigNamedExplicitly(undefined, environment({ KUBECONFIG: '/a:/b' }, []))).toBe(true);
    expect(
      kubeConfigNamedExplicitly(
        undefined,
        environment({ KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' }, ['/sa/token']),
      ),
    ).toBe(true);
    expect(kubeConfigNamedExplicitly(undefined, environment({}, ['/home/me/.kube/config']))).toBe(false);
    expect(kubeConfigNamedExplicitly(undefined, environment({}, []))).toBe(false);
  });
});
