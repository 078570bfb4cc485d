import { overlapsTarget, type Target } from './target.js';

/** A ledger entry, flattened with the ledger it is in. */
export interface HeldEntry {
  readonly ledger: string;
  readonly key: string;
  readonly address: string;
  readonly prefix: number | undefined;
  readonly pool: {
    readonly apiGroup: string;
    readonly kind: string;
    readonly name: string;
    readonly namespace?: string | undefined;
  };
  readonly claim: {
    readonly apiGroup: string;
    readonly kind: string;
    readonly namespace: string;
    readonly name: string;
    readonly uid: string;
  };
  readonly heldSince: string;
  readonly releasedAt: string | undefined;
}

/** An IPAddress (Cluster API's or Metal3's), flattened. */
export interface HeldAddress {
  readonly apiGroup: string;
  readonly namespace: string;
  readonly name: string;
  readonly address: string;
  readonly prefix: number | undefined;
  readonly claimName: string | undefined;
  readonly pool: { readonly kind: string; readonly name: string };
  readonly createdAt: string | undefined;
}

/** One held address: its ledger entry and its IPAddress, either of which may be missing. */
export interface Holding {
  readonly address: string;
  readonly prefix: number | undefined;
  /** The namespace of the claim (and of its IPAddress). */
  readonly namespace: string;
  readonly entry: HeldEntry | undefined;
  readonly ipAddress: HeldAddress | undefined;
}

function holdingKey(namespace: string, address: string, prefix: number | undefined): string {
  return `${namespace}/${address}/${prefix ?? ''}`;
}

/**
 * The holdings that overlap the target, joined: an entry and an IPAddress are one holding when they name the same
 * address (and prefix length) in the same namespace. An IPAddress records its address's prefix length, an entry only
 * a prefix allocation's, so an IPAddress is joined to a single-address entry of its address whatever its prefix.
 * Sorted by address, then namespace.
 */
export function joinHoldings(
  target: Target,
  entries: readonly HeldEntry[],
  addresses: readonly HeldAddress[],
): Holding[] {
  const byKey = new Map<
    string,
    { entry?: HeldEntry; ipAddress?: HeldAddress; namespace: string; address: string; prefix: number | undefined }
  >();
  for (const entry of entries) {
    if (!overlapsTarget(target, entry.address, entry.prefix)) continue;
    byKey.set(holdingKey(entry.claim.namespace, entry.address, entry.prefix), {
      entry,
      namespace: entry.claim.namespace,
      address: entry.address,
      prefix: entry.prefix,
    });
  }
  for (const ipAddress of addresses) {
    const asPrefix = holdingKey(ipAddress.namespace, ipAddress.address, ipAddress.prefix);
    const asSingle = holdingKey(ipAddress.namespace, ipAddress.address, undefined);
    const joined = byKey.get(asPrefix) ?? byKey.get(asSingle);
    if (joined && joined.ipAddress === undefined) {
      joined.ipAddress = ipAddress;
      continue;
    }
    // An IPAddress without an entry is held all the same (the ledger is rebuilt from it): shown if it overlaps.
    if (!overlapsTarget(target, ipAddress.address)) continue;
    byKey.set(`${asSingle}/${ipAddress.apiGroup}/${ipAddress.name}`, {
      ipAddress,
      namespace: ipAddress.namespace,
      address: ipAddress.address,
      prefix: undefined,
    });
  }
  return [...byKey.values()]
    .map((value) => ({
      address: value.address,
      prefix: value.prefix,
      namespace: value.namespace,
      entry: value.entry,
      ipAddress: value.ipAddress,
    }))
    .sort((a, b) => compareAddresses(a.address, b.address) || a.namespace.localeCompare(b.namespace));
}

/** Orders address text numerically when both parse as the same family (10.0.0.9 before 10.0.0.10). */
function compareAddresses(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  if (pa.length === 4 && pb.length === 4 && [...pa, ...pb].every(Number.isInteger)) {
    for (let i = 0; i < 4; i += 1) if ((pa[i] ?? 0) !== (pb[i] ?? 0)) return (pa[i] ?? 0) - (pb[i] ?? 0);
    return 0;
  }
  return a.localeCompare(b);
}
