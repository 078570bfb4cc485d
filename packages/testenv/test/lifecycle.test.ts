import { existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { startControlPlane } from '../src/control-plane.js';
import { runFixture } from './child-process.js';
import { eventually, isAlive, processesMentioning } from './helpers.js';

interface HolderOutput {
  stateDir: string;
  pids: Record<string, number>;
}

/** Nothing of a control plane run is left: no process mentions its state directory, and the directory is gone. */
async function expectNothingLeft(stateDir: string, pids: readonly number[]): Promise<void> {
  // Bounded only by eventually's default (90 s): SIGKILLed processes in disk I/O die when it ends, which a loaded
  // machine can delay for many seconds.
  await eventually(`the processes of ${stateDir} to be gone`, () => processesMentioning(stateDir).length === 0);
  await eventually(`${stateDir} to be removed`, () => !existsSync(stateDir));
  expect(pids.filter(isAlive)).toEqual([]);
}

describe('a control plane started in the test process', () => {
  it('starts everything on request and stop() leaves no process or file behind', async () => {
    const plane = await startControlPlane({ controllerManager: true, ignoreTestKubeconfig: true });
    const stateDir = plane.stateDir ?? '';
    try {
      expect(plane.external).toBe(false);
      expect(Object.keys(plane.processIds()).sort()).toEqual(['etcd', 'kube-apiserver', 'kube-controller-manager']);
      expect(processesMentioning(stateDir).length).toBeGreaterThanOrEqual(3);
      const namespaces = await plane.kubeConfig().makeApiClient(CoreV1Api).listNamespace();
      expect(namespaces.items.length).toBeGreaterThan(0);
    } finally {
      const pids = Object.values(plane.processIds());
      await plane.stop();
      await expectNothingLeft(stateDir, pids);
    }
    // A second stop is a no-op.
    await plane.stop();
  });

  it('restarts kube-apiserver on the same port and keeps the data in etcd', async () => {
    const plane = await startControlPlane({ ignoreTestKubeconfig: true });
    try {
      const core = plane.kubeConfig().makeApiClient(CoreV1Api);
      await core.createNamespacedConfigMap({
        namespace: 'default',
        body: { metadata: { name: 'survivor' }, data: { a: '1' } },
      });
      const before = plane.processIds();
      await plane.restartAPIServer();
      const after = plane.processIds();
      expect(after['kube-apiserver']).not.toBe(before['kube-apiserver']);
      expect(isAlive(before['kube-apiserver'] ?? 0)).toBe(false);
      expect(after.etcd).toBe(before.etcd);
      const read = await plane
        .kubeConfig()
        .makeApiClient(CoreV1Api)
        .readNamespacedConfigMap({ namespace: 'default', name: 'survivor' });
      expect(read.data).toEqual({ a: '1' });
    } finally {
      await plane.stop();
    }
  });

  it('starts kube-controller-manager later, once', async () => {
    const plane = await startControlPlane({ ignoreTestKubeconfig: true });
    try {
      expect(plane.processIds()['kube-controller-manager']).toBeUndefined();
      await plane.startControllerManager();
      const first = plane.processIds()['kube-controller-manager'];
      expect(first).toBeGreaterThan(0);
      await plane.startControllerManager();
      expect(plane.processIds()['kube-controller-manager']).toBe(first);
    } finally {
      await plane.stop();
    }
  });

  it('runs a second kube-apiserver on the same etcd', async () => {
    const plane = await startControlPlane({ ignoreTestKubeconfig: true });
    try {
      const second = await plane.startAdditionalAPIServer();
      expect(second.server).not.toBe(plane.server);
      await plane
        .kubeConfig()
        .makeApiClient(CoreV1Api)
        .createNamespacedConfigMap({
          namespace: 'default',
          body: { metadata: { name: 'shared' } },
        });
      const seen = await second
        .kubeConfig()
        .makeApiClient(CoreV1Api)
        .readNamespacedConfigMap({ namespace: 'default', name: 'shared' });
      expect(seen.metadata?.name).toBe('shared');
      await second.stop();
      expect(isAlive(second.pid)).toBe(false);
      const stillServing = await plane
        .kubeConfig()
        .makeApiClient(CoreV1Api)
        .readNamespacedConfigMap({ namespace: 'default', name: 'shared' });
      expect(stillServing.metadata?.name).toBe('shared');
    } finally {
      await plane.stop();
    }
  });

  it('says which process died and where its log is when a start fails, and cleans up', async () => {
    let failure: unknown;
    try {
      const plane = await startControlPlane({ ignoreTestKubeconfig: true, apiServerFlags: ['--no-such-flag=1'] });
      await plane.stop();
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(Error);
    const message = (failure as Error).message;
    expect(message).toMatch(/kube-apiserver exited with code \d+ while waiting for kube-apiserver \/readyz/);
    const logPath = /its log is (\S+kube-apiserver\.log)/.exec(message)?.[1] ?? '';
    expect(readFileSync(logPath, 'utf8')).toContain('unknown flag: --no-such-flag');
    const stateDir = dirname(dirname(logPath));
    // The processes are gone and only the logs are kept.
    expect(processesMentioning(stateDir)).toEqual([]);
    expect(existsSync(`${stateDir}/etcd`)).toBe(false);
    expect(existsSync(`${stateDir}/logs/etcd.log`)).toBe(true);
    rmSync(stateDir, { recursive: true, force: true });
  });
});

describe('a control plane whose Node process goes away', () => {
  const endings = [
    { name: 'SIGKILL (the watchdog cleans up)', args: ['wait'], signal: 'SIGKILL' as const },
    { name: 'SIGTERM (the watchdog cleans up)', args: ['wait'], signal: 'SIGTERM' as const },
    { name: 'SIGINT (the watchdog cleans up)', args: ['wait'], signal: 'SIGINT' as const },
    { name: 'an uncaught error (a failed run)', args: ['throw'], signal: undefined },
    { name: 'process.exit without stop()', args: ['exit'], signal: undefined },
  ];

  for (const ending of endings) {
    it(`leaves no process behind after ${ending.name}`, async () => {
      const env = { ...process.env };
      const holder = await runFixture<HolderOutput>('hold-control-plane.ts', ending.args, env);
      const { stateDir, pids } = holder.output;
      expect(Object.keys(pids).sort()).toEqual(['etcd', 'kube-apiserver', 'kube-controller-manager']);
      if (ending.signal) holder.child.kill(ending.signal);
      const exit = await holder.exited;
      if (ending.signal) expect(exit.signal ?? exit.code).toBeTruthy();
      else expect(exit.code).not.toBe(0);
      await expectNothingLeft(stateDir, Object.values(pids));
    });
  }
});
