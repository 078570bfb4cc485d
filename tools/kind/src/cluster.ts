import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatDuration, PROGRESS_INTERVAL_MS } from '@tally-ipam/testenv';
import { stringify } from 'yaml';
import { ensureKindBinaries } from './binaries.js';
import { run, runCommand } from './exec.js';
import { ETCD_IMAGE_TAG } from './versions.js';

export interface KindCluster {
  readonly name: string;
  /** A kubeconfig for the host, with the API server on 127.0.0.1 (removed by `delete()`). */
  readonly kubeconfigPath: string;
  readonly kubeconfigYaml: string;
  /** The Docker container of the (single) control-plane node, for `docker exec` / `nodeExec`. */
  readonly nodeContainer: string;
  /** The Docker network made for this cluster alone. */
  readonly network: string;
  readonly kindBinary: string;
  /** How long `kind create` plus the node becoming Ready took. */
  readonly createDurationMs: number;
  /** Deletes the node containers, their volumes, the network and the kubeconfig. */
  delete(): Promise<void>;
}

/** Fields merged into the generated kind `Cluster` config (v1alpha4). */
export interface KindConfigExtras {
  /** Merged into `networking`; `disableDefaultCNI` and `apiServerAddress` stay as set here. */
  readonly networking?: Readonly<Record<string, unknown>>;
  /** Appended after ours (kind applies them in order). */
  readonly kubeadmConfigPatches?: readonly string[];
  /** Replace the single control-plane node (extraPortMappings, extraMounts, labels…). Only one node is supported:
   * the bridge CNI does not route between nodes. */
  readonly nodes?: readonly Readonly<Record<string, unknown>>[];
  readonly featureGates?: Readonly<Record<string, boolean>>;
  readonly runtimeConfig?: Readonly<Record<string, string>>;
}

export interface CreateKindClusterOptions {
  /** Lowercase letters, digits and dashes; the node container is `<name>-control-plane`. */
  readonly name: string;
  /** From `prepareKind()`. */
  readonly nodeImage: string;
  readonly onProgress?: (message: string) => void;
  readonly extraConfig?: KindConfigExtras;
  /** From `prepareKind()`; found in the cache when omitted. */
  readonly kindBinary?: string;
  /** For `kind create` plus the node becoming Ready and CoreDNS rolling out; default 10 minutes. */
  readonly timeoutMs?: number;
}

/**
 * kubeadm's Corefile without `forward` (and without `loop`, which only guards forwarding): names outside the cluster
 * are not resolved, so nothing ever leaves the cluster for DNS (kubeadm's default forwards to the node's resolv.conf,
 * i.e. Docker's embedded DNS).
 */
export const OFFLINE_COREFILE = `.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus :9153
    cache 30 {
       disable success cluster.local
       disable denial cluster.local
    }
    reload
    loadbalance
}
`;

/** kind cluster names this package accepts (they become container, network and directory names). */
export const CLUSTER_NAME_PATTERN = /^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$/;
const ADMIN_KUBECONFIG = '--kubeconfig=/etc/kubernetes/admin.conf';

/** The kind config: no default CNI (kindnetd cannot be had offline), API server on loopback, etcd at testenv's pin. */
export function kindClusterConfig(extra: KindConfigExtras = {}): Record<string, unknown> {
  const config: Record<string, unknown> = {
    kind: 'Cluster',
    apiVersion: 'kind.x-k8s.io/v1alpha4',
    networking: {
      podSubnet: '10.244.0.0/16',
      ...extra.networking,
      disableDefaultCNI: true,
      apiServerAddress: '127.0.0.1',
    },
    kubeadmConfigPatches: [
      stringify({ kind: 'ClusterConfiguration', etcd: { local: { imageTag: ETCD_IMAGE_TAG } } }),
      ...(extra.kubeadmConfigPatches ?? []),
    ],
    nodes: extra.nodes ?? [{ role: 'control-plane' }],
  };
  if (extra.featureGates) config.featureGates = extra.featureGates;
  if (extra.runtimeConfig) config.runtimeConfig = extra.runtimeConfig;
  return config;
}

async function dockerNetworkExists(network: string): Promise<boolean> {
  return (await runCommand('docker', ['network', 'inspect', network], { timeoutMs: 30_000 })).exitCode === 0;
}

async function removeNetwork(network: string): Promise<void> {
  if (await dockerNetworkExists(network)) await run('docker', ['network', 'rm', network], { timeoutMs: 60_000 });
}

const clusterLabel = (name: string): string => `label=io.x-k8s.kind.cluster=${name}`;

/** The Docker volumes mounted by the cluster's node containers (kind deletes them with the containers). */
async function clusterVolumes(name: string): Promise<string[]> {
  const containers = (
    await run('docker', ['ps', '--all', '--quiet', '--filter', clusterLabel(name)], { timeoutMs: 30_000 })
  )
    .split(/\s+/)
    .filter(Boolean);
  if (containers.length === 0) return [];
  const mounts = await run(
    'docker',
    ['inspect', '--format', '{{range .Mounts}}{{if eq .Type "volume"}}{{.Name}} {{end}}{{end}}', ...containers],
    { timeoutMs: 30_000 },
  );
  return mounts.split(/\s+/).filter(Boolean);
}

/** What of a deleted cluster Docker still has: its node containers, its network, the volumes it had. */
async function leftAfterDelete(name: string, network: string, volumes: readonly string[]): Promise<string[]> {
  const left: string[] = [];
  const containers = await run('docker', ['ps', '--all', '--quiet', '--filter', clusterLabel(name)], {
    timeoutMs: 30_000,
  });
  for (const id of containers.split(/\s+/).filter(Boolean)) left.push(`container ${id}`);
  if (await dockerNetworkExists(network)) left.push(`network ${network}`);
  for (const volume of volumes) {
    if ((await runCommand('docker', ['volume', 'inspect', volume], { timeoutMs: 30_000 })).exitCode === 0) {
      left.push(`volume ${volume}`);
    }
  }
  return left;
}

/** Runs argv in the node container (as root, privileged, like kind's own exec) and returns its stdout. */
export async function nodeExec(
  cluster: Pick<KindCluster, 'nodeContainer'>,
  argv: readonly string[],
  options: { input?: string; timeoutMs?: number } = {},
): Promise<string> {
  const args = ['exec', '--privileged', ...(options.input === undefined ? [] : ['-i']), cluster.nodeContainer, ...argv];
  return run('docker', args, { input: options.input, timeoutMs: options.timeoutMs ?? 120_000 });
}

/** `kind load image-archive`: imports a `docker save` archive into every node's containerd (k8s.io namespace). */
export async function loadImageArchive(
  cluster: Pick<KindCluster, 'name' | 'kindBinary'>,
  archivePath: string,
): Promise<void> {
  await run(cluster.kindBinary, ['load', 'image-archive', archivePath, '--name', cluster.name], {
    timeoutMs: 10 * 60_000,
  });
}

/**
 * Creates a one-node kind cluster from the offline node image on a Docker network of its own, replaces CoreDNS's
 * Corefile with one that never forwards, installs the bridge CNI config, and waits until the node is Ready and
 * CoreDNS has rolled out.
 */
export async function createKindCluster(options: CreateKindClusterOptions): Promise<KindCluster> {
  const { name, nodeImage } = options;
  const progress = options.onProgress ?? ((): void => {});
  if (!CLUSTER_NAME_PATTERN.test(name)) {
    throw new Error(`createKindCluster: name "${name.slice(0, 50)}" must be 1-40 lowercase letters, digits or dashes`);
  }
  const kindBinary = options.kindBinary ?? (await ensureKindBinaries(progress)).paths.kind;
  const timeoutMs = options.timeoutMs ?? 10 * 60_000;
  const network = `tally-kind-${name}`;
  const nodeContainer = `${name}-control-plane`;
  const dir = await mkdtemp(join(tmpdir(), `tally-kind-${name}-`));
  const kubeconfigPath = join(dir, 'kubeconfig');
  const configPath = join(dir, 'kind-config.yaml');
  await writeFile(configPath, stringify(kindClusterConfig(options.extraConfig)));
  const env = { ...process.env, KIND_EXPERIMENTAL_DOCKER_NETWORK: network };

  // A delete that leaves a node container, volume or network behind throws, naming them: the next cluster of that name
  // would otherwise inherit them, and the machine fills up over runs.
  const deleteCluster = async (): Promise<void> => {
    const volumes = await clusterVolumes(name);
    await run(kindBinary, ['delete', 'cluster', '--name', name, '--kubeconfig', kubeconfigPath], {
      env,
      timeoutMs: 5 * 60_000,
    });
    await removeNetwork(network);
    await rm(dir, { recursive: true, force: true });
    const left = await leftAfterDelete(name, network, volumes);
    if (left.length > 0) throw new Error(`kind cluster ${name}: still there after delete: ${left.join(', ')}`);
  };

  const started = Date.now();
  let phase = 'kind create cluster';
  const timer = setInterval(() => {
    progress(`kind cluster ${name}: ${phase} (${formatDuration(Date.now() - started)})`);
  }, PROGRESS_INTERVAL_MS);
  try {
    // A network left by a crashed run would otherwise be reused with whatever it holds.
    if (await dockerNetworkExists(network)) await removeNetwork(network);
    progress(`creating kind cluster ${name} from ${nodeImage} (network ${network})`);
    await run(
      kindBinary,
      [
        'create',
        'cluster',
        '--name',
        name,
        '--image',
        nodeImage,
        '--config',
        configPath,
        '--kubeconfig',
        kubeconfigPath,
      ],
      {
        env,
        timeoutMs,
        onLine: (line) => {
          const text = line.trim();
          if (text) progress(`kind: ${text}`);
        },
      },
    );
    const node = { nodeContainer };
    phase = 'CoreDNS without upstream, bridge CNI';
    // Before the CNI config exists the node is NotReady, so no CoreDNS Pod has started with kubeadm's Corefile.
    await nodeExec(node, [
      'kubectl',
      ADMIN_KUBECONFIG,
      '-n',
      'kube-system',
      'patch',
      'configmap',
      'coredns',
      '--type=merge',
      '-p',
      JSON.stringify({ data: { Corefile: OFFLINE_COREFILE } }),
    ]);
    await nodeExec(node, ['sh', '-c', 'mkdir -p /etc/cni/net.d && cp /kind/cni/*.conflist /etc/cni/net.d/']);
    phase = 'waiting for the node to become Ready and CoreDNS to roll out';
    const waitSeconds = `${Math.max(30, Math.round((timeoutMs - (Date.now() - started)) / 1000))}s`;
    await nodeExec(
      node,
      ['kubectl', ADMIN_KUBECONFIG, 'wait', '--for=condition=Ready', 'node', '--all', `--timeout=${waitSeconds}`],
      {
        timeoutMs,
      },
    );
    await nodeExec(
      node,
      [
        'kubectl',
        ADMIN_KUBECONFIG,
        '-n',
        'kube-system',
        'rollout',
        'status',
        'deployment/coredns',
        `--timeout=${waitSeconds}`,
      ],
      { timeoutMs },
    );
    const createDurationMs = Date.now() - started;
    progress(`kind cluster ${name} is Ready after ${formatDuration(createDurationMs)}; kubeconfig: ${kubeconfigPath}`);
    return {
      name,
      kubeconfigPath,
      kubeconfigYaml: await readFile(kubeconfigPath, 'utf8'),
      nodeContainer,
      network,
      kindBinary,
      createDurationMs,
      delete: deleteCluster,
    };
  } catch (error) {
    progress(`kind cluster ${name} failed during "${phase}"; deleting what was created`);
    await deleteCluster().catch((cleanupError: unknown) => {
      progress(`cleanup after the failure also failed: ${String(cleanupError)}`);
    });
    throw new Error(
      `creating kind cluster ${name} failed during "${phase}": ${error instanceof Error ? error.message : String(error)}`,
      {
        cause: error,
      },
    );
  } finally {
    clearInterval(timer);
  }
}
