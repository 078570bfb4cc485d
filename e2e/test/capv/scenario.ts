import { ADDRESS_RESOURCE, CLAIM_RESOURCE, CLUSTER_RESOURCE, PAUSED_ANNOTATION } from '@tally-ipam/api-types';
import { expect } from 'vitest';
import type { IpamProviderUnderTest } from './providers.js';
import { VSPHERE_VM_RESOURCE } from './resources.js';
import { waitForPauseBarrier } from './setup.js';
import { claimName } from './state.js';
import { type CapvScenarioContext, type ScenarioFigures, withScenario } from './steps.js';

/**
 * Issue 32's scenario, the same steps for any IPAM provider: CAPV, unmodified, creates the claims of a
 * MachineDeployment's VMs (two devices: one from a namespaced IPv4 pool, one from a cluster-scoped IPv6 pool), the
 * provider binds them, CAPV configures and powers on the VMs with those addresses; scaled 3 → 6 (while the Cluster
 * carries the paused annotation, so the new claims wait until it is removed) → 1, then the Cluster is deleted; every
 * address is released, and the watch never saw one held twice. Nothing waits on time: each step waits for its
 * outcome, with a deadline only against a hang.
 */
export function runCapvScenario(
  context: CapvScenarioContext,
  provider: IpamProviderUnderTest,
): Promise<ScenarioFigures> {
  const { client, namespace } = context;
  return withScenario(context, provider, async (run) => {
    const setup = run.setup();
    const { pools } = setup;
    await run.createCluster();
    run.phaseDone('Cluster provisioned');

    // --- 3 Machines. The figure: from the MachineDeployment's creation to every Machine reporting both addresses.
    const firstAddressesMs = await run.createMachines(3);
    run.phaseDone('3 Machines with addresses');
    const three = await run.converged(3, 'the 3 Machines, their claims, addresses and VMs to be consistent');
    run.phaseDone('3 consistent');

    // --- Pause: the Cluster's paused annotation pauses the IPAM provider's handling of its claims (the IPAM
    // contract: spec.paused or the annotation), while Cluster API and CAPV go on, so CAPV creates claims meanwhile.
    await client.mergePatch(
      CLUSTER_RESOURCE,
      { namespace, name: setup.clusterName },
      {
        metadata: { annotations: { [PAUSED_ANNOTATION]: 'true' } },
      },
    );
    const [firstKept] = three.values();
    if (!firstKept) throw new Error('no Machine to poke');
    await waitForPauseBarrier(setup, claimName(firstKept.vm, 0), run.eventually);
    await run.scale(6);
    const waiting = await run.eventually('CAPV to create the 6 claims of the 3 new VMs while paused', async () => {
      const vms = (await client.list(VSPHERE_VM_RESOURCE, { namespace })).items.map((vm) => vm.metadata.name);
      const fresh = vms.filter((vm) => ![...three.values()].some((kept) => kept.vm === vm));
      const claims = new Set((await client.list(CLAIM_RESOURCE, { namespace })).items.map((c) => c.metadata.name));
      const names = fresh.flatMap((vm) => [claimName(vm, 0), claimName(vm, 1)]);
      return fresh.length === 3 && names.every((name) => claims.has(name)) ? names : undefined;
    });
    // The barrier instead of a sleep: the provider decided on every new claim, and its log says it skipped it.
    await run.eventually('the provider to skip every new claim as paused', async () => {
      const skipped = await Promise.all(waiting.map((name) => provider.loggedPausedSkip({ namespace, name })));
      return skipped.every(Boolean) ? true : undefined;
    });
    const claimsWhilePaused = (await client.list(CLAIM_RESOURCE, { namespace })).items;
    const addressesWhilePaused = (await client.list(ADDRESS_RESOURCE, { namespace })).items;
    for (const name of waiting) {
      const claim = claimsWhilePaused.find((c) => c.metadata.name === name);
      expect(claim?.status?.addressRef?.name, `${name} stays unbound while paused`).toBeUndefined();
      expect(
        addressesWhilePaused.filter((a) => a.spec.claimRef.name === name),
        `no IPAddress for ${name}`,
      ).toEqual([]);
    }
    expect(addressesWhilePaused.length, 'only the 3 first VMs hold addresses while paused').toBe(6);
    for (const target of [pools.v4, pools.v6]) {
      const held = await provider.heldAddresses(client, target);
      if (held) expect(held.length, `${provider.name} holds only the first 3 addresses of ${target.ref.name}`).toBe(3);
    }
    run.phaseDone('paused: 6 new claims skipped');
    await client.mergePatch(
      CLUSTER_RESOURCE,
      { namespace, name: setup.clusterName },
      {
        metadata: { annotations: { [PAUSED_ANNOTATION]: null } },
      },
    );
    const six = await run.converged(6, 'the 6 Machines to be consistent once unpaused');
    for (const kept of three.values()) {
      expect(six.get(kept.machine), `${kept.machine} keeps its addresses`).toEqual(kept);
    }
    run.phaseDone('unpaused, 6 consistent');

    // --- Scale down to 1: 5 VMs destroyed, their 10 addresses released; the one left keeps its addresses.
    await run.scale(1);
    const one = await run.converged(1, 'the MachineDeployment to be consistent at 1');
    const [left] = one.values();
    if (!left) throw new Error('no Machine left at 1 replica');
    expect(six.get(left.machine), 'the Machine left kept its addresses').toEqual(left);
    run.phaseDone('scaled to 1');

    // --- Delete the Cluster: everything goes, every address is released.
    await run.deleteCluster();
    run.phaseDone('deleted');
    expect(run.watch.events(), 'the address watch saw the scenario').toBeGreaterThan(0);
    expect(run.watch.doubles, 'no address was ever held twice').toEqual([]);
    return { provider: provider.name, firstAddressesMs, phases: run.phases };
  });
}
