import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { type ControlPlane, createTestNamespace, startControlPlane, type TestNamespace } from '@tally-ipam/testenv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeTransport } from '../src/client/transport.js';
import { installCRDsReliably, waitFor } from './fixtures/runtime-support.js';

/**
 * The process must not outlive its API server forever: informers and leader election retry without end, so without
 * a bound a controller cut off from its API server stays "healthy" and the kubelet never restarts it. A child process
 * of the kit's `runControllerApp` against a real kube-apiserver that is then stopped (a second API server of an own
 * control plane, so the shared one stays up), and one whose identity may not list what it watches (caches never sync).
 */
const CHILD = fileURLToPath(new URL('./fixtures/runtime-manager-child.ts', import.meta.url));
const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));
/** Hang guard of one child's life (tsx start on a loaded machine included); never a statement about speed. */
const CHILD_GUARD_MS = 240_000;

let plane: ControlPlane;
let namespace: TestNamespace;
const children: ChildProcess[] = [];
/** Directories this file wrote (a kubeconfig holding a ServiceAccount token): removed when it ends. */
const tempDirs: string[] = [];

beforeAll(async () => {
  plane = await startControlPlane({ ignoreTestKubeconfig: true });
  await installCRDsReliably(plane.kubeConfig());
  namespace = await createTestNamespace(plane.kubeConfig(), 'api-server-loss');
}, 240_000);

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await plane?.stop();
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

interface Child {
  readonly exited: Promise<{ code: number | null; stderr: string; stdout: string }>;
  readonly stdout: () => string;
}

function spawnChild(args: readonly string[]): Child {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, ...args], {
    cwd: PACKAGE_DIR,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const exited = new Promise<{ code: number | null; stderr: string; stdout: string }>((resolve) => {
    child.on('exit', (code) => resolve({ code, stderr, stdout }));
  });
  return { exited, stdout: () => stdout };
}

function probePort(child: Child): number | undefined {
  const line = child
    .stdout()
    .split('\n')
    .find((text) => text.includes('"msg":"serving health probes"'));
  const address = line ? (JSON.parse(line) as { address?: string }).address : undefined;
  return address ? Number(address.split(':').pop()) : undefined;
}

function commonArgs(kubeconfigPath: string): string[] {
  return [
    `--kubeconfig=${kubeconfigPath}`,
    `--namespace=${namespace.name}`,
    '--insecure-diagnostics',
    '--diagnostics-address=0',
    '--health-probe-bind-address=127.0.0.1:0',
  ];
}

/** A kubeconfig for `server` that authenticates with a bearer token (a ServiceAccount's). */
function tokenKubeconfig(server: string, caPem: string, token: string): string {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'test', server, caData: Buffer.from(caPem).toString('base64') }],
    users: [{ name: 'sa', token }],
    contexts: [{ name: 'test', cluster: 'test', user: 'sa' }],
    currentContext: 'test',
  });
  const dir = mkdtempSync(join(tmpdir(), 'tally-kit-sa-'));
  tempDirs.push(dir);
  const path = join(dir, 'kubeconfig');
  writeFileSync(path, kubeConfig.exportConfig(), { mode: 0o600 });
  return path;
}

describe('a controller process and an unreachable API server', () => {
  it(
    'turns unready, then exits 1 naming the server and the bound when its API server stays stopped',
    async () => {
      const second = await plane.startAdditionalAPIServer();
      const child = spawnChild([...commonArgs(second.kubeconfigPath), '--api-server-unreachable-timeout=20s']);
      const port = await waitFor('the probe server', () => probePort(child), { timeoutMs: 120_000 });
      await waitFor('ready', async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200, {
        timeoutMs: 120_000,
      });
      await second.stop();
      // From the first failed probe the process leaves the Service's endpoints...
      const unready = await waitFor(
        'readyz to report the API server',
        async () => {
          const response = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
          const body = (await response?.text()) ?? '';
          return response?.status === 500 && body.includes('[-]api-server failed') ? body : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 200 },
      );
      expect(unready).toContain(`the API server ${second.server}`);
      // ...and past the bound it exits non-zero, so the kubelet restarts it.
      const exit = await child.exited;
      expect(exit.code).toBe(1);
      expect(exit.stderr).toMatch(
        /has been unreachable for \d+(\.\d+)?s, longer than --api-server-unreachable-timeout=20s/,
      );
      expect(exit.stdout).toContain('"msg":"manager failed"');
    },
    CHILD_GUARD_MS,
  );

  it(
    'exits 1 at start when the API server is not there at all',
    async () => {
      const gone = await plane.startAdditionalAPIServer();
      await gone.stop();
      const child = spawnChild([...commonArgs(gone.kubeconfigPath), '--api-server-unreachable-timeout=3s']);
      const exit = await child.exited;
      expect(exit.code).toBe(1);
      expect(exit.stderr).toContain(`the API server ${gone.server}`);
      expect(exit.stderr).toContain('longer than --api-server-unreachable-timeout=3s');
    },
    CHILD_GUARD_MS,
  );

  it(
    'exits 1 when the caches never sync (an identity that may not list what it watches)',
    async () => {
      const admin = new KubeTransport(plane.kubeConfig());
      try {
        await admin.request({
          method: 'POST',
          path: `/api/v1/namespaces/${namespace.name}/serviceaccounts`,
          body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'powerless' } },
        });
        const answer = (await admin.request({
          method: 'POST',
          path: `/api/v1/namespaces/${namespace.name}/serviceaccounts/powerless/token`,
          body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
        })) as { status?: { token?: string } };
        const caPem = Buffer.from(plane.kubeConfig().getCurrentCluster()?.caData ?? '', 'base64').toString('utf8');
        const kubeconfig = tokenKubeconfig(plane.server, caPem, answer.status?.token ?? '');
        const child = spawnChild([...commonArgs(kubeconfig), '--cache-sync-timeout=5s']);
        const exit = await child.exited;
        expect(exit.code).toBe(1);
        expect(exit.stderr).toContain('the caches did not sync within --cache-sync-timeout=5s');
      } finally {
        admin.close();
      }
    },
    CHILD_GUARD_MS,
  );
});
