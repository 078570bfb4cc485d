import { ADDRESS_RESOURCE, CLAIM_RESOURCE, CLUSTER_NAME_LABEL, MACHINE_RESOURCE } from '@tally-ipam/api-types';
import type { Client } from '@tally-ipam/controller-kit/client';
import { parseCapvMetadata, type VcsimEndpoint, type VcsimVm } from '@tally-ipam/vsphere';
import { canonical, type IpamProviderUnderTest, type PoolUnderTest, type ScenarioPools } from './providers.js';
import { conditionOf, VSPHERE_MACHINE_RESOURCE, VSPHERE_VM_RESOURCE } from './resources.js';

/** What the scenario set up, for checking a state against it. */
export interface ScenarioSetup {
  readonly client: Client;
  readonly vcsim: VcsimEndpoint;
  readonly provider: IpamProviderUnderTest;
  readonly namespace: string;
  readonly clusterName: string;
  readonly deploymentName: string;
  readonly pools: ScenarioPools;
  /** The networks of device 0 and device 1. */
  readonly networks: readonly [string, string];
  /** The bootstrap data Secret every Machine names. */
  readonly bootstrapSecret: string;
}

/** One Machine of the MachineDeployment, converged: its VM and the two addresses it was configured with. */
export interface MachineState {
  readonly machine: string;
  readonly vm: string;
  readonly v4: string;
  readonly v6: string;
}

export interface StateCheck {
  /** Every Machine, by name, when nothing is wrong. */
  readonly machines: ReadonlyMap<string, MachineState>;
  /** What does not (yet) hold, in words; empty when the state is the converged one. */
  readonly problems: readonly string[];
}

/** The claim name CAPV gives device `device`'s first pool (`<vm>-<device>-<pool index>`, CAPV's util). */
export function claimName(vm: string, device: number): string {
  return `${vm}-${device}-0`;
}

function sameRef(a: { apiGroup?: string; kind: string; name: string }, b: PoolUnderTest['ref']): boolean {
  return a.apiGroup === b.apiGroup && a.kind === b.kind && a.name === b.name;
}

/** The VMs of this scenario in the simulator: CAPV names each after its VSphereVM, i.e. after its Machine. */
export function scenarioVms(vms: readonly VcsimVm[], deploymentName: string): VcsimVm[] {
  return vms.filter((vm) => !vm.template && vm.name.startsWith(`${deploymentName}-`));
}

/**
 * Checks the state after the MachineDeployment converged on `replicas`: every Machine has a VSphereMachine and a
 * VSphereVM; CAPV's two claims of each VM exist, name the device's pool and the Cluster, are bound and `Ready=True`;
 * each bound IPAddress is in its pool with the pool's prefix and gateway, and no address is held twice; the VSphereVM
 * reports exactly those addresses per device; the simulator's VM is powered on, its NICs on the devices' networks,
 * its cloud-init metadata configures exactly that address/prefix and gateway on the NIC of that MAC, its guest reports
 * them, and CAPV was given the bootstrap data Secret; the Machine reports both addresses; the provider's own bookkeeping and the
 * pools' counts hold exactly these addresses. Returns every deviation found, so a timeout names all of them.
 */
export async function checkState(setup: ScenarioSetup, replicas: number): Promise<StateCheck> {
  const { client, namespace, pools } = setup;
  const problems: string[] = [];
  const machines = (
    await client.list(MACHINE_RESOURCE, {
      namespace,
      labelSelector: `cluster.x-k8s.io/deployment-name=${setup.deploymentName}`,
    })
  ).items;
  const vsphereMachines = new Set(
    (await client.list(VSPHERE_MACHINE_RESOURCE, { namespace })).items.map((m) => m.metadata.name),
  );
  const vms = new Map(
    (await client.list(VSPHERE_VM_RESOURCE, { namespace })).items.map((vm) => [vm.metadata.name, vm]),
  );
  const claims = new Map((await client.list(CLAIM_RESOURCE, { namespace })).items.map((c) => [c.metadata.name, c]));
  const addresses = new Map(
    (await client.list(ADDRESS_RESOURCE, { namespace })).items.map((a) => [a.metadata.name, a]),
  );
  const simulated = new Map(scenarioVms(await setup.vcsim.vms(), setup.deploymentName).map((vm) => [vm.name, vm]));
  const count = (what: string, actual: number, expected: number): void => {
    if (actual !== expected) problems.push(`${actual} ${what}, expected ${expected}`);
  };
  count('Machines', machines.length, replicas);
  count('VSphereMachines', vsphereMachines.size, replicas);
  count('VSphereVMs', vms.size, replicas);
  count('IPAddressClaims', claims.size, 2 * replicas);
  count('IPAddresses', addresses.size, 2 * replicas);
  count('VMs in the simulator', simulated.size, replicas);

  const states = new Map<string, MachineState>();
  for (const machine of machines) {
    const name = machine.metadata.name;
    const vmName = machine.spec.infrastructureRef.name;
    const vm = vms.get(vmName);
    if (!vsphereMachines.has(vmName) || !vm) {
      problems.push(`Machine ${name}: no VSphereMachine/VSphereVM ${vmName} yet`);
      continue;
    }
    const simulatedVm = simulated.get(vmName);
    const metadata = simulatedVm?.metadata ? parseCapvMetadata(simulatedVm.metadata) : undefined;
    const found: string[] = [];
    for (const [device, target] of [pools.v4, pools.v6].entries()) {
      const where = `${vmName} device ${device}`;
      const claim = claims.get(claimName(vmName, device));
      if (!claim) {
        problems.push(`${where}: no claim ${claimName(vmName, device)}`);
        continue;
      }
      if (!sameRef(claim.spec.poolRef, target.ref)) problems.push(`${where}: claim names ${claim.spec.poolRef.name}`);
      if (claim.metadata.labels?.[CLUSTER_NAME_LABEL] !== setup.clusterName)
        problems.push(`${where}: claim unlabelled`);
      const ready = conditionOf(claim, 'Ready')?.status;
      if (setup.provider.claimsReportReady ? ready !== 'True' : ready !== undefined) {
        problems.push(`${where}: claim Ready is ${ready}`);
      }
      const address = claim.status?.addressRef?.name ? addresses.get(claim.status.addressRef.name) : undefined;
      if (!address) {
        problems.push(`${where}: claim not bound to an existing IPAddress`);
        continue;
      }
      const ip = canonical(address.spec.address);
      if (address.spec.claimRef.name !== claim.metadata.name) problems.push(`${where}: ${ip} names another claim`);
      if (!sameRef(address.spec.poolRef, target.ref) || !target.contains(ip)) problems.push(`${where}: ${ip} off-pool`);
      if (address.spec.prefix !== target.prefix) problems.push(`${where}: prefix ${address.spec.prefix}`);
      if (canonical(address.spec.gateway ?? '0.0.0.0') !== canonical(target.gateway)) {
        problems.push(`${where}: gateway ${address.spec.gateway}`);
      }
      found.push(ip);
      const status = vm.status?.network?.[device];
      const reported = (status?.ipAddrs ?? []).map(canonical);
      if (reported.length !== 1 || reported[0] !== ip)
        problems.push(`${where}: VSphereVM reports [${reported}] not ${ip}`);
      if (vm.spec.network.devices[device]?.networkName !== setup.networks[device]) problems.push(`${where}: network`);
      const mac = status?.macAddr.toLowerCase() ?? '';
      const nic = simulatedVm?.nics[device];
      if (simulatedVm?.powerState !== 'poweredOn') problems.push(`${where}: VM not powered on`);
      if (nic?.mac.toLowerCase() !== mac || nic.network !== setup.networks[device]) {
        problems.push(`${where}: the VM's NIC ${nic?.mac}/${nic?.network} is not ${mac}/${setup.networks[device]}`);
      }
      const configured = metadata?.nics.find((n) => n.mac === mac);
      const expected = `${ip}/${target.prefix}`;
      if (configured?.addresses.length !== 1 || canonicalPrefix(configured.addresses[0] ?? '') !== expected) {
        problems.push(`${where}: the VM is configured with [${configured?.addresses}], not ${expected}`);
      }
      const gateway = device === 0 ? configured?.gateway4 : configured?.gateway6;
      if (!gateway || canonical(gateway) !== canonical(target.gateway))
        problems.push(`${where}: VM gateway ${gateway}`);
      const guest = simulatedVm?.guestNet.find((n) => n.mac.toLowerCase() === mac)?.addresses.map(canonicalPrefix);
      if (guest?.length !== 1 || guest[0] !== expected) problems.push(`${where}: the guest reports [${guest}]`);
      // CAPV reports the guest's addresses as ExternalIP (and the VM's name as InternalDNS).
      const reportedIPs = (machine.status?.addresses ?? [])
        .filter((a) => a.type === 'ExternalIP')
        .map((a) => a.address);
      if (reportedIPs.filter((a) => canonical(a) === ip).length !== 1) {
        problems.push(`Machine ${name}: reports [${reportedIPs}], not ${ip} once`);
      }
    }
    const externalIPs = (machine.status?.addresses ?? []).filter((a) => a.type === 'ExternalIP');
    if (externalIPs.length !== 2) problems.push(`Machine ${name}: ${externalIPs.length} addresses, not its 2`);
    // CAPV puts the bootstrap data into the clone spec; govmomi's simulator drops a clone spec's extraConfig (README,
    // "What the simulator does not do"), so what is checked is that CAPV was given the Secret.
    if (vm.spec.bootstrapRef?.name !== setup.bootstrapSecret) problems.push(`${vmName}: no bootstrap data Secret`);
    const [v4, v6] = found;
    if (v4 !== undefined && v6 !== undefined) states.set(name, { machine: name, vm: vmName, v4, v6 });
  }
  for (const [family, target] of [
    ['v4', pools.v4],
    ['v6', pools.v6],
  ] as const) {
    const held = [...states.values()].map((state) => state[family]).sort();
    if (new Set(held).size !== held.length) problems.push(`${family}: an address is held twice: ${held}`);
    const bookkept = await setup.provider.heldAddresses(client, target);
    if (bookkept && bookkept.sort().join() !== held.join()) problems.push(`${family}: provider holds [${bookkept}]`);
    const pool = await client.get(target.resource, { namespace: target.namespace, name: target.ref.name });
    const used = pool.status?.ipAddresses?.used;
    if (used !== replicas) problems.push(`${family}: pool counts ${used} used`);
  }
  return { machines: problems.length === 0 ? states : new Map(), problems };
}

/** `address/prefix` with the address in canonical text. */
export function canonicalPrefix(text: string): string {
  const slash = text.lastIndexOf('/');
  return slash < 0 ? canonical(text) : `${canonical(text.slice(0, slash))}${text.slice(slash)}`;
}
