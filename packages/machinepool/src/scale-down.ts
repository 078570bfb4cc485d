import { DELETE_MACHINE_ANNOTATION } from './constants.js';
import { compareCodePoints } from './provider-ids.js';

/** One replica that may be removed: its InfraMachine and the Machine CAPI created for it. */
export interface ScaleDownCandidate {
  /** InfraMachine (and Machine) name. */
  readonly name: string;
  /** The InfraMachine reports `status.initialization.provisioned: true`. */
  readonly provisioned: boolean;
  /** The provider marked the instance outdated (e.g. built from an older template): replaced first. */
  readonly outdated: boolean;
  /** Annotations of the owner Machine (the cluster autoscaler sets `cluster.x-k8s.io/delete-machine` there). */
  readonly machineAnnotations: Readonly<Record<string, string>>;
  /** RFC 3339 creation time of the InfraMachine, when known. */
  readonly creationTimestamp?: string | undefined;
}

/** The provider's preference among otherwise equal candidates; negative = delete `a` first. */
export type DeletionPreference = (a: ScaleDownCandidate, b: ScaleDownCandidate) => number;

/** Default preference: newest first (the replica that has served least), then by name for a total order. */
export const newestFirst: DeletionPreference = (a, b) => {
  const byAge = (b.creationTimestamp ?? '').localeCompare(a.creationTimestamp ?? '');
  return byAge !== 0 ? byAge : compareCodePoints(b.name, a.name);
};

function hasDeleteAnnotation(candidate: ScaleDownCandidate): boolean {
  return Object.hasOwn(candidate.machineAnnotations, DELETE_MACHINE_ANNOTATION);
}

/**
 * Which replicas to remove so that the provisioned ones come down to `desiredReplicas`, as CAPD's DockerMachinePool
 * does: outdated replicas first, then replicas whose Machine carries `cluster.x-k8s.io/delete-machine`, then the
 * provider's preference. Only provisioned replicas count and are removed — deleting one that is still coming up
 * would not bring the pool closer to its size. Returns the names in deletion order; empty when nothing is in excess.
 */
export function selectReplicasToDelete(
  candidates: readonly ScaleDownCandidate[],
  desiredReplicas: number,
  preference: DeletionPreference = newestFirst,
): string[] {
  const provisioned = candidates.filter((candidate) => candidate.provisioned);
  const excess = provisioned.length - Math.max(0, desiredReplicas);
  if (excess <= 0) return [];
  const rank = (candidate: ScaleDownCandidate): number => {
    if (candidate.outdated) return 0;
    return hasDeleteAnnotation(candidate) ? 1 : 2;
  };
  return [...provisioned]
    .sort((a, b) => rank(a) - rank(b) || preference(a, b))
    .slice(0, excess)
    .map((candidate) => candidate.name);
}
