import { appendFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { installCapiCRDs } from './capi.js';
import { type CapiManagerBinary, ensureCapiManager } from './capi-manager-binary.js';
import { type CapiWebhookKeeper, startCapiWebhookKeeper } from './capi-webhook-keeper.js';
import {
  CAPI_WEBHOOK_SERVICE_DNS_NAME,
  readCapiConversions,
  registerCapiWebhooks,
  unregisterCapiWebhooks,
} from './capi-webhooks.js';
import { generateServingCertificates } from './certs.js';
import type { ControlPlane } from './control-plane.js';
import { errorMessage, formatDuration } from './format.js';
import { httpGet } from './http.js';
import { kubeRequest } from './kube-request.js';
import { freePorts } from './ports.js';
import { type ManagedProcess, ProcessRegistry } from './processes.js';
import { ControlPlaneStartError, startTimeoutMs, waitUntil } from './readiness.js';
import { clusterApiVersion } from './versions.js';

/** Feature gates `startCapiManager` passes unless overridden: MachinePool on (the default since v1.12), ClusterTopology off. */
export const CAPI_MANAGER_DEFAULT_FEATURE_GATES: Readonly<Record<string, boolean>> = {
  MachinePool: true,
  ClusterTopology: false,
};

export interface CapiManagerOptions {
  /**
   * A key of `CLUSTER_API_RELEASES`; default `clusterApiVersion()` (`TALLY_CAPI_VERSION`, else the default). The
   * binary, the CRDs, the webhook configurations and the conversions all come from this release.
   */
  version?: string;
  /** Step-by-step progress lines (building, starting, ready). */
  onProgress?: (message: string) => void;
  /** Merged over `CAPI_MANAGER_DEFAULT_FEATURE_GATES`, e.g. `{ MachinePool: false }`. */
  featureGates?: Readonly<Record<string, boolean>>;
  /** The manager's `-v` (klog verbosity); default 2, upstream's default. 4 or 5 shows every reconcile. */
  verbosity?: number;
  /** More flags, e.g. `--sync-period=1m`; later flags win. */
  extraArgs?: readonly string[];
  /**
   * Install (server-side apply, a no-op when unchanged) all of Cluster API's CRDs first, default true: the manager
   * watches most of them, including MachinePool, and exits when one is missing.
   */
  installCRDs?: boolean;
}

export interface CapiManager {
  readonly pid: number;
  /** Temporary directory of this run (serving certificates, logs); removed by stop. */
  readonly stateDir: string;
  /** The manager's log (kept after stop when `TALLY_TESTENV_KEEP=1`, or when starting failed). */
  readonly logPath: string;
  readonly webhookPort: number;
  /** `http://127.0.0.1:<port>`: `/readyz` and `/healthz`. */
  readonly healthAddress: string;
  /** The Cluster API version of the binary (and of the CRDs and webhooks it registered), e.g. `v1.14.2`. */
  readonly version: string;
  readonly binary: CapiManagerBinary;
  /** The CRDs switched to webhook conversion (served by this manager's `/convert`). */
  readonly conversionCRDs: readonly string[];
  /** Milliseconds from spawning the process to webhooks and conversion answering through the API server. */
  readonly startupDurationMs: number;
  /** The last lines of the log, for error messages. */
  logTail(lines?: number): string;
  /** Whether the process is still running. */
  running(): boolean;
  /**
   * Stops the webhook keeper, removes the webhook configurations and conversion settings (so the API server stops
   * calling it), then kills the manager and removes its temporary directory. Idempotent.
   */
  stop(): Promise<void>;
}

const START_ATTEMPTS = 3;
/** A pod's identity makes the ClusterCache think it runs inside the workload cluster; never pass one. */
const POD_ENV = ['POD_NAMESPACE', 'POD_NAME', 'POD_UID'] as const;

function keepState(): boolean {
  return process.env.TALLY_TESTENV_KEEP === '1' || process.env.TALLY_TESTENV_KEEP === 'true';
}

function featureGateFlag(gates: Readonly<Record<string, boolean>>): string {
  return `--feature-gates=${Object.entries(gates)
    .map(([gate, enabled]) => `${gate}=${enabled}`)
    .join(',')}`;
}

function managerEnvironment(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of POD_ENV) delete env[name];
  // --kubeconfig is passed; a KUBECONFIG from the caller's shell must not matter.
  delete env.KUBECONFIG;
  return env;
}

/**
 * The API server calls the manager for this: a v1beta1 IPAddressClaim, dry-run, is converted to v1beta2 (the storage
 * version) by `/convert` and then defaulted and validated by the admission webhooks. Success proves the wiring.
 */
async function webhooksAnswer(kc: KubeConfig): Promise<boolean> {
  const response = await kubeRequest(kc, {
    method: 'POST',
    path: '/apis/ipam.cluster.x-k8s.io/v1beta1/namespaces/default/ipaddressclaims?dryRun=All',
    body: JSON.stringify({
      apiVersion: 'ipam.cluster.x-k8s.io/v1beta1',
      kind: 'IPAddressClaim',
      metadata: { name: 'tally-testenv-webhook-probe' },
      spec: { poolRef: { apiGroup: 'ipam.tally.dev', kind: 'Probe', name: 'probe' } },
    }),
    contentType: 'application/json',
    timeoutMs: 10_000,
  });
  if (response.status === 201 || response.status === 200) return true;
  throw new Error(`dry-run create of a v1beta1 IPAddressClaim returned HTTP ${response.status}: ${response.body}`);
}

async function spawnManager(
  registry: ProcessRegistry,
  binary: CapiManagerBinary,
  plane: ControlPlane,
  certDir: string,
  options: CapiManagerOptions,
): Promise<{ process: ManagedProcess; webhookPort: number; healthPort: number }> {
  for (let attempt = 1; ; attempt++) {
    const [webhookPort, healthPort] = await freePorts(2);
    if (webhookPort === undefined || healthPort === undefined) throw new Error('no free ports');
    const args = [
      `--kubeconfig=${plane.kubeconfigPath}`,
      `--webhook-port=${webhookPort}`,
      `--webhook-cert-dir=${certDir}`,
      `--health-addr=127.0.0.1:${healthPort}`,
      // No metrics, pprof or log-level endpoint (the default is an authenticated https server on :8443).
      '--diagnostics-address=0',
      '--leader-elect=false',
      featureGateFlag({ ...CAPI_MANAGER_DEFAULT_FEATURE_GATES, ...options.featureGates }),
      `--v=${options.verbosity ?? 2}`,
      ...(options.extraArgs ?? []),
    ];
    const manager = registry.spawn(
      'cluster-api-manager',
      binary.path,
      args,
      'cluster-api-manager',
      managerEnvironment(),
    );
    try {
      await waitUntil(
        'the Cluster API manager /readyz (its webhook server)',
        async () => (await httpGet(`http://127.0.0.1:${healthPort}/readyz`)).status === 200,
        [manager],
      );
      return { process: manager, webhookPort, healthPort };
    } catch (error) {
      await manager.kill();
      if (error instanceof ControlPlaneStartError && error.portConflict && attempt < START_ATTEMPTS) continue;
      throw error;
    }
  }
}

/**
 * Runs the real Cluster API core manager (built by `ensureCapiManager`) against a local test control plane:
 * generates webhook serving certificates for 127.0.0.1, installs Cluster API's CRDs, starts the manager on free
 * loopback ports and waits for `/readyz`, registers its admission webhooks and switches Cluster API's CRDs to its
 * conversion webhook, and waits until the API server reaches both. Until `stop()`, a keeper
 * (`startCapiWebhookKeeper`) writes that wiring back whenever something — `clusterctl init` applying Cluster API's
 * real components — writes over it. Its log goes to a file; the watchdog kills it if this process dies. Start the control plane with `controllerManager: true`: Cluster API relies on the garbage
 * collector for MachineSets, Machines and owned Secrets.
 */
export async function startCapiManager(plane: ControlPlane, options: CapiManagerOptions = {}): Promise<CapiManager> {
  if (plane.external) {
    throw new Error(
      `startCapiManager runs the manager on this machine, where the API server of an external cluster ` +
        `(${plane.server}, TALLY_TEST_KUBECONFIG) cannot call its webhooks; install Cluster API into that cluster ` +
        '(`clusterctl init`) and do not start a manager.',
    );
  }
  const progress = options.onProgress ?? ((): void => {});
  const version = clusterApiVersion(options.version);
  const kc = plane.kubeConfig();
  const [binary, certs] = await Promise.all([
    ensureCapiManager({ version, onProgress: progress }),
    // The admission webhooks are called at 127.0.0.1; conversions through the Service, verified against its DNS name.
    generateServingCertificates('cluster-api-webhook', {
      dnsNames: ['localhost', CAPI_WEBHOOK_SERVICE_DNS_NAME],
      ipAddresses: ['127.0.0.1'],
    }),
    options.installCRDs === false ? Promise.resolve() : installCapiCRDs(kc, { version }),
  ]);
  const stateDir = mkdtempSync(join(tmpdir(), 'tally-capi-manager-'));
  const logDir = join(stateDir, 'logs');
  const certDir = join(stateDir, 'serving-certs');
  mkdirSync(logDir, { recursive: true });
  mkdirSync(certDir, { recursive: true });
  writeFileSync(join(certDir, 'tls.crt'), certs.serving.certPem, { mode: 0o600 });
  writeFileSync(join(certDir, 'tls.key'), certs.serving.keyPem, { mode: 0o600 });
  // The cert directory is on the command line, so the watchdog recognises the process as this run's.
  const registry = new ProcessRegistry(stateDir, logDir);
  const started = Date.now();
  let manager: ManagedProcess | undefined;
  let registering = false;
  let keeper: CapiWebhookKeeper | undefined;
  try {
    progress(`starting the Cluster API manager ${binary.version} (log: ${join(logDir, 'cluster-api-manager.log')})`);
    const spawned = await spawnManager(registry, binary, plane, certDir, options);
    manager = spawned.process;
    const running = manager;
    const endpoint = { port: spawned.webhookPort, caPem: certs.ca.certPem };
    registering = true;
    const registered = await registerCapiWebhooks(kc, endpoint, version);
    // Repairs go to the progress callback and into the manager's log, next to the webhook calls they concern.
    const keeperLog = (message: string): void => {
      progress(message);
      try {
        appendFileSync(running.logPath, `[tally-testenv] ${new Date().toISOString()} ${message}\n`);
      } catch {
        // The log is gone only after stop(); the progress line is enough then.
      }
    };
    keeper = startCapiWebhookKeeper(kc, { ...registered, endpoint, log: keeperLog });
    await waitUntil(
      'the API server to reach the Cluster API webhooks',
      () => webhooksAnswer(kc),
      [running],
      startTimeoutMs(),
    );
    const startupDurationMs = Date.now() - started;
    progress(
      `Cluster API manager ready in ${formatDuration(startupDurationMs)}: webhooks on 127.0.0.1:${spawned.webhookPort}, ` +
        `${registered.conversions.length} CRDs converted by it`,
    );
    let stopped = false;
    const kept = keeper;
    const conversionCRDs = registered.conversions.map((c) => c.crdName);
    return {
      pid: running.pid,
      stateDir,
      logPath: running.logPath,
      webhookPort: spawned.webhookPort,
      healthAddress: `http://127.0.0.1:${spawned.healthPort}`,
      version: binary.version,
      binary,
      conversionCRDs,
      startupDurationMs,
      logTail: (lines) => running.logTail(lines),
      running: () => running.exit === undefined,
      stop: async () => {
        if (stopped) return;
        stopped = true;
        let unregisterError: unknown;
        try {
          // First, so that the keeper does not put back what is unregistered next.
          await kept.stop();
          await unregisterCapiWebhooks(kc, conversionCRDs);
        } catch (error) {
          unregisterError = error;
        }
        await registry.destroy({ keepAll: keepState() });
        // An API server that is already gone has nothing left to call the manager; anything else is worth knowing.
        if (unregisterError !== undefined && !/ECONNREFUSED/.test(errorMessage(unregisterError))) {
          throw new Error(
            `the Cluster API manager was stopped, but its webhooks could not be unregistered (Cluster API writes to ` +
              `${plane.server} will fail until they are): ${errorMessage(unregisterError)}`,
            { cause: unregisterError },
          );
        }
      },
    };
  } catch (error) {
    await keeper?.stop();
    if (registering) {
      // Best effort: the error below is what matters; leftovers would make every later Cluster API write fail.
      await readCapiConversions(version)
        .then((all) =>
          unregisterCapiWebhooks(
            kc,
            all.map((c) => c.crdName),
          ),
        )
        .catch(() => {});
    }
    const logPath = manager?.logPath ?? join(logDir, 'cluster-api-manager.log');
    const tail = manager ? `\nLast lines:\n${manager.logTail(20)}` : '';
    await registry.destroy({ keepLogs: true });
    throw new Error(
      `starting the Cluster API manager failed: ${errorMessage(error)}\n(its log is kept at ${logPath}; ` +
        `rerun with TALLY_TESTENV_KEEP=1 to keep its certificates too)${tail}`,
      { cause: error },
    );
  }
}
