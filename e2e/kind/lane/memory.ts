/**
 * Memory of a controller container as the kernel counts it for the memory limit: the container's cgroup (v1, the
 * host's hierarchy) inside the kind node, read and reset with `nodeExec`. `memory.max_usage_in_bytes` is the peak since
 * the cgroup was created or last reset (writing 0 resets it).
 */
import { CoreV1Api, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { laneNodeExec } from './kind.js';

export { mebibytes } from './mebibytes.js';

export interface ContainerCgroup {
  readonly pod: string;
  readonly node: string;
  readonly containerId: string;
}

/** The running `manager` container of every Pod matching `selector`. */
export async function managerContainers(
  kc: KubeConfig,
  namespace: string,
  selector: string,
): Promise<ContainerCgroup[]> {
  const pods = await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace, labelSelector: selector });
  return pods.items.flatMap((pod: V1Pod) => {
    const status = pod.status?.containerStatuses?.find((c) => c.name === 'manager');
    const id = status?.containerID?.replace(/^[a-z]+:\/\//, '');
    const node = pod.spec?.nodeName;
    if (!id || !node || pod.metadata?.deletionTimestamp) return [];
    if (!/^[0-9a-f]{64}$/.test(id))
      throw new Error(`Pod ${pod.metadata?.name}: container ID ${id.slice(0, 80)} is not a hex ID`);
    return [{ pod: pod.metadata?.name ?? '', node, containerId: id }];
  });
}

/** The marker `memoryUsageIfPresent`'s script prints when the container has no cgroup (any more). */
const GONE = 'no-cgroup';

function cgroupScript(
  containerId: string,
  body: string,
  missing = `echo "no memory cgroup for ${containerId}" >&2; exit 1`,
): string[] {
  // cgroupfs driver: …/<pod>/<id>; systemd driver: …/cri-containerd-<id>.scope. Both contain the ID.
  return [
    'sh',
    '-c',
    `d=$(find /sys/fs/cgroup/memory -type d -name "*${containerId}*" | head -n 1); ` +
      `[ -n "$d" ] || { ${missing}; }; ${body}`,
  ];
}

/** Resets the peak of the container's memory cgroup to its current usage. */
export async function resetPeakMemory(container: ContainerCgroup): Promise<void> {
  await laneNodeExec(container.node, cgroupScript(container.containerId, 'echo 0 > "$d/memory.max_usage_in_bytes"'));
}

export interface MemoryUsage {
  readonly usage: number;
  readonly peak: number;
  readonly limit: number;
  readonly rss: number;
}

/**
 * Current and peak usage of the container's memory cgroup, and the limit the kubelet set, in bytes; undefined when the
 * cgroup is gone (the container restarted, or its Pod was deleted, since it was listed).
 */
export async function memoryUsageIfPresent(container: ContainerCgroup): Promise<MemoryUsage | undefined> {
  const output = await laneNodeExec(
    container.node,
    cgroupScript(
      container.containerId,
      'cat "$d/memory.usage_in_bytes" "$d/memory.max_usage_in_bytes" "$d/memory.limit_in_bytes"; grep -E "^total_rss " "$d/memory.stat"',
      `echo ${GONE}; exit 0`,
    ),
  );
  if (output.trim() === GONE) return undefined;
  const lines = output.trim().split('\n');
  const numbers = [lines[0], lines[1], lines[2], lines[3]?.split(' ')[1]].map(Number);
  if (numbers.some((n) => !Number.isFinite(n))) {
    throw new Error(`unexpected cgroup output for ${container.pod}: ${output.slice(0, 200)}`);
  }
  const [usage = 0, peak = 0, limit = 0, rss = 0] = numbers;
  return { usage, peak, limit, rss };
}

/** `memoryUsageIfPresent` of a container that must be running: its cgroup gone is an error. */
export async function memoryUsage(container: ContainerCgroup): Promise<MemoryUsage> {
  const usage = await memoryUsageIfPresent(container);
  if (!usage) throw new Error(`Pod ${container.pod}: no memory cgroup for container ${container.containerId}`);
  return usage;
}
