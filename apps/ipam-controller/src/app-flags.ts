import {
  type ControllerAppIdentity,
  type ControllerFlags,
  FlagError,
  parseControllerFlags,
  readPackageVersion,
} from '@tally-ipam/controller-kit';

/** The Lease name of the controller (CAPI providers use `<provider>-leader-election` style names). */
export const LEADER_ELECTION_ID = 'tally-ipam-controller-leader-election';

/** The executable's names and usage text; the kit's `runControllerApp` does the rest of the command line. */
export const IPAM_CONTROLLER_APP: ControllerAppIdentity = {
  // Field manager of every write, and the prefix of the Events' reporting controller.
  name: 'tally-ipam',
  command: 'tally-ipam-controller',
  description: [
    'Runs the Tally IPAM provider. With no --kubeconfig, no $KUBECONFIG and not in a pod, it starts an embedded local',
    'control plane, installs the CRDs, and runs a demo (pools, a Cluster, claims) until Ctrl-C.',
    '',
    "  --enable-metal3-ipam[=true|false]  Also serve Metal3's IPAM API (ipam.metal3.io IPPool, IPClaim, IPAddress)",
    "                                     from the same address ledgers, in place of Metal3's own IPAM controller;",
    '                                     needs the ipam.metal3.io CRDs. Default false.',
  ].join('\n'),
  leaderElectionId: LEADER_ELECTION_ID,
  version: readPackageVersion(new URL('../package.json', import.meta.url)),
  // About four requests per claim (finalizer, IPAddress, status, shares of ledger and pool status writes): Cluster
  // API's 20/30 would cap binding at ~5 claims/s, where the README's bench measured 36-84 claims/s (~420 requests/s).
  // This still bounds a runaway loop while leaving that throughput alone.
  managerDefaults: { kubeAPIQPS: 500, kubeAPIBurst: 1000 },
  // Without --kubeconfig, $KUBECONFIG or a pod it runs the demo: ~/.kube/config is not read unless named.
  explicitClusterOnly: true,
  webhookPurpose: 'admission',
};

/** The kit's manager and webhook flags; `given` lets the demo pick free ports for the ones not given. */
export type AppFlags = ControllerFlags;

/** Parses the controller's command line; throws `FlagError` naming flag and value. */
export function parseAppFlags(argv: readonly string[]): AppFlags {
  return parseControllerFlags(argv, IPAM_CONTROLLER_APP);
}

/** The app's own flag, taken off the command line before the kit parses the rest. */
export const ENABLE_METAL3_FLAG = 'enable-metal3-ipam';

/**
 * Takes `--enable-metal3-ipam` (alone: true; `=true` / `=false`) out of the command line; the rest goes to the kit's
 * parser. Throws `FlagError` naming the flag and the value for anything else.
 */
export function takeMetal3Flag(argv: readonly string[]): { readonly enableMetal3: boolean; readonly rest: string[] } {
  let enableMetal3 = false;
  const rest: string[] = [];
  for (const arg of argv) {
    const match = /^--?enable-metal3-ipam(?:=(.*))?$/.exec(arg);
    if (!match) {
      rest.push(arg);
      continue;
    }
    const value = match[1];
    if (value !== undefined && value !== 'true' && value !== 'false') {
      throw new FlagError(ENABLE_METAL3_FLAG, value, 'must be true or false');
    }
    enableMetal3 = value !== 'false';
  }
  return { enableMetal3, rest };
}
