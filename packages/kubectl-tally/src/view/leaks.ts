/** An IPAddress as leak detection sees it. */
export interface AddressRecord {
  readonly namespace: string;
  readonly name: string;
  readonly address: string;
  readonly claimName: string | undefined;
  /** How the claim is named in the set of existing claims (API group, namespace and name). */
  readonly claimKey: string | undefined;
  readonly pool: string;
  readonly createdMs: number | undefined;
}

/** A ledger entry as leak detection sees it. */
export interface EntryRecord {
  readonly ledger: string;
  readonly key: string;
  readonly address: string;
  /** The namespace the entry's claim and its IPAddress live in. */
  readonly namespace: string;
  readonly claimName: string;
  readonly pool: string;
  readonly heldSinceMs: number | undefined;
  /** Released entries wait out the reuse grace period on purpose: not a leak. */
  readonly released: boolean;
}

export interface Leak {
  readonly kind: 'IPAddress' | 'LedgerEntry';
  readonly namespace: string;
  /** The IPAddress's name, or `<ledger>/<entry key>`. */
  readonly name: string;
  readonly address: string;
  readonly pool: string;
  readonly claim: string;
  readonly sinceMs: number | undefined;
  readonly why: string;
}

/** The leaks at least `minAgeMs` old at `nowMs`; one of unknown age is kept (nothing says it is in flight). */
export function leaksOlderThan(leaks: readonly Leak[], nowMs: number, minAgeMs: number): Leak[] {
  return leaks.filter((leak) => leak.sinceMs === undefined || nowMs - leak.sinceMs >= minAgeMs);
}

/**
 * The leaks among what was read: IPAddresses whose claim does not exist (none named, or no claim of that name in
 * their namespace), and held ledger entries with no IPAddress of their address in their claim's namespace. An entry
 * whose IPAddress is not there yet is a moment of every allocation (the entry is written first), so the ages matter:
 * a leak is old. Released entries are not leaks.
 */
export function findLeaks(
  addresses: readonly AddressRecord[],
  claims: ReadonlySet<string>,
  entries: readonly EntryRecord[],
): Leak[] {
  const leaks: Leak[] = [];
  const addressKeys = new Set(addresses.map((record) => `${record.namespace}/${record.address}`));
  for (const record of addresses) {
    const claim = record.claimName;
    if (record.claimKey !== undefined && claims.has(record.claimKey)) continue;
    leaks.push({
      kind: 'IPAddress',
      namespace: record.namespace,
      name: record.name,
      address: record.address,
      pool: record.pool,
      claim: claim ?? '<none>',
      sinceMs: record.createdMs,
      why: claim === undefined ? 'names no claim' : `claim ${claim} does not exist`,
    });
  }
  for (const entry of entries) {
    if (entry.released || addressKeys.has(`${entry.namespace}/${entry.address}`)) continue;
    leaks.push({
      kind: 'LedgerEntry',
      namespace: entry.namespace,
      name: `${entry.ledger}/${entry.key}`,
      address: entry.address,
      pool: entry.pool,
      claim: entry.claimName,
      sinceMs: entry.heldSinceMs,
      why: `no IPAddress of ${entry.address} in ${entry.namespace}`,
    });
  }
  return leaks.sort((a, b) => (a.sinceMs ?? 0) - (b.sinceMs ?? 0));
}
