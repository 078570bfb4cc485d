import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiException, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import {
  deleteWebhookConfiguration,
  errorMessage,
  freePort,
  generateServingCertificates,
  registerLoopbackWebhooks,
  startWatchedProcess,
  type WatchedProcess,
} from '@tally-ipam/testenv';
import { stringify } from 'yaml';
import { z } from 'zod';
import { type CapvBinary, ensureCapv } from './capv-binary.js';
import { type CapvManifests, installCapvCRDs } from './capv-manifests.js';
import type { VcsimCredentials } from './vcsim.js';
import { capvVersionFor } from './versions.js';
import { waitWhileRunning } from './wait.js';

/** Where CAPV runs against: a local control plane (testenv's `ControlPlane` or a vitest `testEnv()`). */
export interface CapvTarget {
  readonly kubeconfigPath: string;
  /** An external cluster's API server cannot call a webhook on this machine's loopback. */
  readonly external: boolean;
}

export interface StartCapvOptions {
  /** A key of `CAPV_RELEASES`; default `capvVersionFor()`, the release paired with the run's Cluster API release. */
  readonly version?: string;
  /** The credentials CAPV's manager gets (its credentials file): those of the simulators it will talk to. */
  readonly credentials: VcsimCredentials;
  /** klog verbosity (`--v`); default 4, which logs every reconcile step. */
  readonly verbosity?: number;
  readonly onProgress?: (message: string) => void;
  /** Deadline for each start step; only against a hang (default 180 s). */
  readonly timeoutMs?: number;
}

export interface Capv {
  readonly version: string;
  readonly binary: CapvBinary;
  readonly manifests: CapvManifests;
  readonly pid: number;
  readonly logPath: string;
  readonly webhookPort: number;
  /** The registered webhook configuration names (`capv-…`). */
  readonly webhookConfigurations: readonly string[];
  /** Milliseconds from spawning the manager to its webhooks answering through the API server. */
  readonly startupDurationMs: number;
  running(): boolean;
  logTail(lines?: number): string;
  /** Unregisters the webhooks (failurePolicy Fail would refuse every write of CAPV's kinds), then kills it. */
  stop(): Promise<void>;
}

const FIELD_MANAGER = 'tally-vsphere';
const START_ATTEMPTS = 3;
/** A pod's identity, a caller's KUBECONFIG (--kubeconfig is passed) and PROFILER_ADDR (CAPV's pprof listener). */
const DROPPED_ENV = ['POD_NAMESPACE', 'POD_NAME', 'POD_UID', 'KUBECONFIG', 'PROFILER_ADDR'] as const;

const DryRunMachine = z.looseObject({ spec: z.looseObject({ datacenter: z.string().optional() }) });

/**
 * Both webhook configurations answer: CAPV's mutating webhook defaults `spec.datacenter` of a dry-run VSphereMachine
 * to `*`, and its validating webhook refuses a device address that is not in CIDR form, with its own message. The
 * probe is a v1beta1 object, so where the release stores v1beta2 its conversion webhook answers too.
 */
export async function capvWebhooksAnswer(kc: KubeConfig): Promise<boolean> {
  const api = kc.makeApiClient(CustomObjectsApi);
  const machine = (ipAddrs: string[]): object => ({
    apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
    kind: 'VSphereMachine',
    metadata: { name: 'tally-capv-webhook-probe' },
    spec: { template: 'probe', network: { devices: [{ networkName: 'probe', ipAddrs }] } },
  });
  const coordinates = { group: 'infrastructure.cluster.x-k8s.io', version: 'v1beta1', plural: 'vspheremachines' };
  const created = DryRunMachine.parse(
    await api.createNamespacedCustomObject({ ...coordinates, namespace: 'default', body: machine([]), dryRun: 'All' }),
  );
  if (created.spec.datacenter !== '*') return false;
  try {
    await api.createNamespacedCustomObject({
      ...coordinates,
      namespace: 'default',
      body: machine(['10.0.0.1']),
      dryRun: 'All',
    });
  } catch (error) {
    if (error instanceof ApiException && String(error.body).includes('ip addresses should be in the CIDR format')) {
      return true;
    }
    throw error;
  }
  return false;
}

function environment(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  // A pod's identity would make CAPV's ClusterCache think it runs in the workload cluster.
  for (const name of DROPPED_ENV) delete env[name];
  return env;
}

async function spawnManager(
  target: CapvTarget,
  binary: CapvBinary,
  options: StartCapvOptions,
  certs: { certPem: string; keyPem: string },
): Promise<{ process: WatchedProcess; webhookPort: number }> {
  const timeoutMs = options.timeoutMs ?? 180_000;
  for (let attempt = 1; ; attempt++) {
    const [webhookPort, healthPort] = [await freePort(), await freePort()];
    const started = startWatchedProcess({
      name: 'capv-manager',
      command: binary.path,
      // The files CAPV reads live in its state directory, so they go with it.
      args: (stateDir) => {
        const certDir = join(stateDir, 'serving-certs');
        mkdirSync(certDir, { recursive: true });
        writeFileSync(join(certDir, 'tls.crt'), certs.certPem, { mode: 0o600 });
        writeFileSync(join(certDir, 'tls.key'), certs.keyPem, { mode: 0o600 });
        const credentials = join(stateDir, 'credentials.yaml');
        const { username, password } = options.credentials;
        writeFileSync(credentials, stringify({ username, password }), { mode: 0o600 });
        const kubeconfig = join(stateDir, 'kubeconfig');
        copyFileSync(target.kubeconfigPath, kubeconfig);
        return [
          `--kubeconfig=${kubeconfig}`,
          `--credentials-file=${credentials}`,
          `--webhook-port=${webhookPort}`,
          `--webhook-cert-dir=${certDir}`,
          `--health-addr=127.0.0.1:${healthPort}`,
          // No metrics or pprof listener (the metrics default is an authenticated https server on :8443).
          '--diagnostics-address=0',
          '--leader-elect=false',
          `--v=${options.verbosity ?? 4}`,
        ];
      },
      env: environment(),
    });
    try {
      await waitWhileRunning(
        "CAPV's /readyz (its webhook server)",
        started,
        "CAPV's manager",
        async () => {
          const response = await fetch(`http://127.0.0.1:${healthPort}/readyz`).catch(() => undefined);
          return response?.status === 200;
        },
        { timeoutMs, intervalMs: 250, hint: started.logPath },
      );
      return { process: started, webhookPort };
    } catch (error) {
      const conflict = /address already in use/.test(started.logTail(50));
      await started.stop();
      if (conflict && attempt < START_ATTEMPTS) continue;
      throw error;
    }
  }
}

/**
 * Runs CAPV's manager (built by `ensureCapv`) against a local control plane that runs Cluster API (testenv's
 * `startCapiManager`): installs the release's CRDs from its own config, gives its webhook server a throwaway
 * certificate for 127.0.0.1 and the simulator's credentials, starts it on free ports, registers its two webhook
 * configurations pointed at 127.0.0.1 (testenv's loopback registration, as for Cluster API's), and resolves once a
 * dry-run request went through both. Its log goes to a file; the watchdog kills it if this process dies.
 */
export async function startCapv(target: CapvTarget, options: StartCapvOptions): Promise<Capv> {
  if (target.external) {
    throw new Error(
      'startCapv runs CAPV on this machine, where the API server of an external cluster cannot call its webhooks',
    );
  }
  const version = options.version ?? capvVersionFor();
  const progress = options.onProgress ?? ((): void => {});
  const kc = new KubeConfig();
  kc.loadFromFile(target.kubeconfigPath);
  const [binary, manifests, certs] = await Promise.all([
    ensureCapv({ version, onProgress: progress }),
    installCapvCRDs(kc, version),
    generateServingCertificates('capv-webhook'),
  ]);
  const spawnStarted = Date.now();
  const { process: manager, webhookPort } = await spawnManager(target, binary, options, certs.serving);
  progress(`starting CAPV ${version} (log: ${manager.logPath})`);
  const endpoint = { port: webhookPort, caPem: certs.ca.certPem };
  const registered: string[] = [];
  let converting = false;
  const unregister = async (): Promise<void> => {
    for (const { configuration, name } of manifests.webhooks) {
      if (registered.includes(name)) await deleteWebhookConfiguration(kc, configuration.kind, name);
    }
    // Back to the bases' `None`: a conversion webhook that is gone would fail every request at another version.
    if (converting) await installCapvCRDs(kc, version);
  };
  try {
    if (manifests.conversions.length > 0) {
      converting = true;
      await installCapvCRDs(kc, version, { conversion: endpoint });
      progress(`CAPV ${version}: ${manifests.conversions.length} CRDs convert through its /convert on 127.0.0.1`);
    }
    for (const { configuration, name } of manifests.webhooks) {
      await registerLoopbackWebhooks(kc, configuration, endpoint, {
        fieldManager: FIELD_MANAGER,
        name,
      });
      registered.push(name);
    }
    await waitWhileRunning(
      "the API server to reach CAPV's webhooks",
      manager,
      "CAPV's manager",
      () => capvWebhooksAnswer(kc),
      {
        timeoutMs: options.timeoutMs ?? 180_000,
        intervalMs: 250,
        hint: manager.logPath,
      },
    );
  } catch (error) {
    await unregister().catch(() => {});
    await manager.stop();
    throw new Error(`starting CAPV ${version} failed: ${errorMessage(error)}`, { cause: error });
  }
  const startupDurationMs = Date.now() - spawnStarted;
  progress(`CAPV ${version} ready in ${(startupDurationMs / 1000).toFixed(1)} s: webhooks on 127.0.0.1:${webhookPort}`);
  let stopped = false;
  return {
    version,
    binary,
    manifests,
    pid: manager.pid,
    logPath: manager.logPath,
    webhookPort,
    webhookConfigurations: registered,
    startupDurationMs,
    running: () => manager.exit() === undefined,
    logTail: (lines) => manager.logTail(lines),
    stop: async () => {
      if (stopped) return;
      stopped = true;
      try {
        await unregister();
      } finally {
        await manager.stop();
      }
    },
  };
}
