import type { CommandName } from './args.js';

const COMMON = `
Flags every command takes:
  -o, --output FORMAT     json, yaml or wide (default: a table)
  -n, --namespace NAME    the namespace to look in (default: the context's, else default)
  -A, --all-namespaces    look in every namespace
      --kubeconfig PATH   the kubeconfig to use (default: KUBECONFIG, else ~/.kube/config)
      --context NAME      the kubeconfig context to use (default: its current context)
      --chunk-size N      objects per list request; long lists are read page by page (default 500)
  -h, --help              this help

kubectl tally only reads, with your credentials and RBAC; it never writes to the cluster. Errors go to stderr and
the exit status is 1 (2 for a usage error).`;

const MAIN = `kubectl tally: who holds what in Tally's IPAM pools (read-only)

Usage:
  kubectl tally <command> [flags]

Commands:
  pools                   every pool of Tally's APIs: counts, utilisation, exhaustion ETA, readiness
  who <address|CIDR>      who holds each address inside it: ledger entry, IPAddress, claim, pool, owners
  why <claim>             one screen on a claim: conditions, pool, pause, Events, the controller's last write
  leaks                   IPAddresses without a claim, ledger entries without an IPAddress

Run "kubectl tally <command> --help" for a command's own help.
${COMMON}`;

const POOLS = `kubectl tally pools: every pool of the APIs Tally serves

Usage:
  kubectl tally pools [-n NAME | -A] [--window DURATION] [-o json|yaml|wide]

Lists TallyIPPools and TallyPrefixPools (in the namespace, or all with -A), GlobalTallyIPPools and
GlobalTallyPrefixPools (cluster-scoped, always), the in-cluster provider's InClusterIPPools and
InClusterPrefixPools (namespaced) and GlobalInClusterIPPools and GlobalInClusterPrefixPools (cluster-scoped) when
their CRDs are installed, and Metal3 IPPools (ipam.metal3.io) when that CRD is installed. TOTAL, USED, FREE and
OUT-OF-RANGE are the pool's status counts (status.ipAddresses, or status.prefixes for a Tally prefix pool); a Metal3 IPPool's are counted from its ranges and its IPAddresses. UTILISATION
is USED/TOTAL as a bar. READY is Unknown for a pool without a Ready condition (in-cluster and Metal3 pools).

ETA is when the pool runs out at the recent allocation rate: the pool's IPAddresses created within the window give
the rate (their number divided by the window), and FREE divided by that rate is the time left. "—" when no address
of the pool was created within the window, "exhausted" when nothing is free. Released addresses no longer exist and
do not count, so the rate is that of allocations still held.

Flags:
      --window DURATION   the window of the allocation rate: 90s, 30m, 2h, 1d (default 1h, at most 366d)
  -o wide                 adds the Ready reason and the pool's age
${COMMON}`;

const WHO = `kubectl tally who: who holds the addresses inside an address or CIDR

Usage:
  kubectl tally who <address|CIDR> [-o json|yaml|wide]

For every held address (or prefix) that overlaps the argument (10.0.0.5, 10.0.0.0/24, fd00::/64): its ledger entry
(the TallyAddressLedger of its block, and since when it is held), its IPAddress, the claim, the pool, and the claim's
owners followed by ownerReferences up to the Machine and the Cluster. A missing object is shown as missing. Ledgers
are cluster-scoped, so who always searches every namespace; -n and -A are accepted and change nothing.
The argument is at most 64 characters; host bits of a CIDR are ignored.

  -o wide                 adds the whole owner chain and the ledger
${COMMON}`;

const WHY = `kubectl tally why: why a claim has, or waits for, its address

Usage:
  kubectl tally why <claim> [-n NAME] [-o json|yaml]

One screen on an IPAddressClaim: its conditions (reason, message, age); the pool it names (ready, paused,
exhausted, counts); pause as the controller reads it (the Cluster's spec.paused and its cluster.x-k8s.io/paused
annotation, the claim's and the pool's paused annotation, and the Cluster a labelled pool belongs to); the claim's
Events (events.k8s.io/v1, newest last); and what the controller last did with it (its last write, from the claim's
managedFields, and its last Event).
${COMMON}`;

const LEAKS = `kubectl tally leaks: addresses nobody holds any more

Usage:
  kubectl tally leaks [-n NAME | -A] [--min-age DURATION] [-o json|yaml|wide]

IPAddresses whose claim does not exist, and ledger entries (not released) with no IPAddress of their address in
their claim's namespace, each with its age. A ledger entry is written just before its IPAddress, so a young entry
without one is an allocation in flight: a leak is old, and younger ones are left out. Metal3 IPAddresses and
IPClaims count when that API is served.

      --min-age DURATION  list only leaks at least this old: 0s (all), 90s, 30m, 2h, 1d (default 1m)
${COMMON}`;

const HELP: Readonly<Record<CommandName, string>> = { pools: POOLS, who: WHO, why: WHY, leaks: LEAKS };

/** The help of a command, or of the plugin. */
export function helpText(command: CommandName | undefined): string {
  return command === undefined ? MAIN : HELP[command];
}
