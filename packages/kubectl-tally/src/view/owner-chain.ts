/** One object of a chain, as the lookup returned it: its owner references are all the walk reads. */
export interface ChainObject {
  readonly apiVersion?: string | undefined;
  readonly kind?: string | undefined;
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string | undefined;
    readonly uid?: string | undefined;
    readonly ownerReferences?: readonly OwnerLink[] | undefined;
  };
}

export interface OwnerLink {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
  readonly controller?: boolean | undefined;
}

/** One step of the chain: the owner named, and whether it was found (a missing owner ends the chain). */
export interface ChainLink {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace: string | undefined;
  /** `found`; `missing` (not found, or a different uid: the owner was re-created); `unreadable` (the lookup failed). */
  readonly state: 'found' | 'missing' | 'unreadable';
  readonly detail?: string | undefined;
}

/** Finds an owner; undefined when it does not exist. A throw is reported as `unreadable` (RBAC, an unknown kind). */
export type OwnerLookup = (link: OwnerLink, namespace: string | undefined) => Promise<ChainObject | undefined>;

/** Longest chain walked: Cluster API's are claim → InfraMachine → Machine → MachineSet → MachineDeployment → Cluster. */
export const MAX_CHAIN_LENGTH = 8;

/** The owner a walk follows: the controller reference, else the first one (owners are listed in a stable order). */
export function nextOwner(object: ChainObject): OwnerLink | undefined {
  const owners = object.metadata.ownerReferences ?? [];
  return owners.find((owner) => owner.controller === true) ?? owners[0];
}

/**
 * Walks the owners of `start` up: the controller owner of each object (else its first owner), until an object has
 * none, an owner is missing or unreadable, an object repeats (a cycle of references) or `MAX_CHAIN_LENGTH` links.
 * Owners are in the object's namespace (owner references never cross namespaces); a cluster-scoped owner is looked
 * up by the lookup as it knows its kind.
 */
export async function walkOwnerChain(start: ChainObject, lookup: OwnerLookup): Promise<ChainLink[]> {
  const chain: ChainLink[] = [];
  const seen = new Set<string>([start.metadata.uid ?? `${start.kind}/${start.metadata.name}`]);
  const namespace = start.metadata.namespace;
  let current = start;
  while (chain.length < MAX_CHAIN_LENGTH) {
    const owner = nextOwner(current);
    if (!owner) break;
    const base = { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.name, namespace };
    if (seen.has(owner.uid)) {
      chain.push({ ...base, state: 'found', detail: 'owner reference cycle: the walk stops here' });
      break;
    }
    seen.add(owner.uid);
    let found: ChainObject | undefined;
    try {
      found = await lookup(owner, namespace);
    } catch (error) {
      chain.push({ ...base, state: 'unreadable', detail: error instanceof Error ? error.message : String(error) });
      break;
    }
    if (!found) {
      chain.push({ ...base, state: 'missing' });
      break;
    }
    if (found.metadata.uid !== undefined && found.metadata.uid !== owner.uid) {
      chain.push({
        ...base,
        state: 'missing',
        detail: `a ${owner.kind} of that name exists with another uid (re-created)`,
      });
      break;
    }
    chain.push({ ...base, state: 'found' });
    current = found;
  }
  return chain;
}

/** The chain as one cell: `SimMachine/m1 <- Machine/m1 <- Cluster/c1`, a missing owner marked `(missing)`. */
export function formatChain(chain: readonly ChainLink[]): string {
  if (chain.length === 0) return '<none>';
  return chain
    .map((link) => `${link.kind}/${link.name}${link.state === 'found' ? '' : ` (${link.state})`}`)
    .join(' <- ');
}

/** The first link of a kind in the chain, as a cell: its name, `name (missing)`, or `<none>`. */
export function linkOfKind(chain: readonly ChainLink[], kind: string): string {
  const link = chain.find((candidate) => candidate.kind === kind);
  if (!link) return '<none>';
  return link.state === 'found' ? link.name : `${link.name} (${link.state})`;
}
