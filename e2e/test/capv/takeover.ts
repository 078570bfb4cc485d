import { ADDRESS_RESOURCE, CLAIM_RESOURCE } from '@tally-ipam/api-types';
import { type Client, isNotFound } from '@tally-ipam/controller-kit/client';
import { expect } from 'vitest';
import type { IpamProviderUnderTest, ScenarioPools } from './providers.js';
import type { MachineState } from './state.js';
import { type CapvScenarioContext, type ScenarioFigures, withScenario } from './steps.js';

/** The two providers of the take-over, as the host runs them. */
export interface TakeOverProviders {
  /** The reference provider, running. */
  readonly reference: IpamProviderUnderTest;
  /** Stops it the way `clusterctl delete --ipam in-cluster` without `--include-crd` does: its CRDs and objects stay. */
  haltReference(): Promise<void>;
  /** Starts Tally with `--enable-in-cluster-ipam`, scoped to the namespace; it runs until the test stops it. */
  startTally(namespace: string): Promise<IpamProviderUnderTest>;
}

/** What must not change about an IPAddress across the take-over: the object itself, not only its address. */
interface AddressIdentity {
  readonly uid: string;
  readonly resourceVersion: string;
  readonly address: string;
}

async function addressIdentities(client: Client, namespace: string): Promise<Map<string, AddressIdentity>> {
  const items = (await client.list(ADDRESS_RESOURCE, { namespace })).items;
  return new Map(
    items.map((a) => [
      a.metadata.name,
      { uid: a.metadata.uid ?? '', resourceVersion: a.metadata.resourceVersion ?? '', address: a.spec.address },
    ]),
  );
}

/**
 * Issue 37's take-over with real machines: the reference provider serves a MachineDeployment of 3 CAPV Machines
 * from its own pool kinds; once consistent, it is stopped and Tally (`--enable-in-cluster-ipam`) started. Tally must
 * adopt every address without writing to a single IPAddress (uid and resourceVersion unchanged), its ledgers must then
 * hold exactly them, and it must go on serving: 3 → 6 (the first 3 Machines keep their addresses) → 3 (the ones left
 * keep theirs) → the Cluster deleted, everything released (no IPAddress or claim, no ledger entry, pools at 0 used).
 * No Machine ever changes address and the watch never sees an address held twice. Returns the phases' times.
 */
export async function runTakeOver(
  context: CapvScenarioContext,
  providers: TakeOverProviders,
): Promise<ScenarioFigures> {
  const { client, namespace } = context;
  let pools: ScenarioPools | undefined;
  const figures = await withScenario(context, providers.reference, async (run) => {
    pools = run.setup().pools;
    await run.createCluster();
    run.phaseDone('Cluster provisioned');
    const firstAddressesMs = await run.createMachines(3);
    run.phaseDone('3 Machines with addresses (reference)');
    const three = await run.converged(3, 'the 3 Machines, their claims, addresses and VMs to be consistent');
    run.phaseDone('3 consistent (reference)');

    // Every Machine's first addresses: it must keep them as long as it exists, whoever serves its claims.
    const firstSeen = new Map<string, MachineState>(three);
    const keptTheirs = (machines: ReadonlyMap<string, MachineState>, when: string): void => {
      for (const [name, state] of machines) {
        const first = firstSeen.get(name);
        if (first) expect(state, `${name} keeps its addresses ${when}`).toEqual(first);
        else firstSeen.set(name, state);
      }
    };

    // --- The switch. The snapshot is taken once the reference no longer runs, so nothing it wrote is missed.
    await providers.haltReference();
    const before = await addressIdentities(client, namespace);
    expect(before.size, "the 3 Machines' IPAddresses").toBe(6);
    run.phaseDone('reference stopped');
    const unchanged = async (when: string): Promise<void> => {
      const now = await addressIdentities(client, namespace);
      for (const [name, identity] of before) {
        const current = now.get(name);
        if (current) expect(current, `IPAddress ${name} untouched ${when}`).toEqual(identity);
      }
    };
    run.handOver(await providers.startTally(namespace));
    // Converged under Tally: its ledgers hold exactly these addresses and every claim reports Ready=True, which only
    // Tally writes, so it reconciled each of them.
    const adopted = await run.converged(3, 'Tally to adopt the 3 Machines’ addresses (ledgers, claims Ready)');
    expect(adopted, 'the same Machines with the same addresses after the take-over').toEqual(three);
    const now = await addressIdentities(client, namespace);
    expect([...now.keys()].sort(), 'the same IPAddresses after the take-over').toEqual([...before.keys()].sort());
    await unchanged('by the take-over');
    for (const [family, target] of [['v4', run.setup().pools.v4] as const, ['v6', run.setup().pools.v6] as const]) {
      const held = (await run.setup().provider.heldAddresses(client, target))?.sort();
      expect(held, `Tally's ledgers hold the ${family} addresses of ${target.ref.name}`).toEqual(
        [...three.values()].map((state) => state[family]).sort(),
      );
    }
    run.phaseDone('Tally took over');

    // --- Tally serves on: 3 → 6 → 3.
    await run.scale(6);
    const six = await run.converged(6, 'the 6 Machines to be consistent (Tally)');
    keptTheirs(six, 'at 6');
    await unchanged('at 6');
    run.phaseDone('scaled to 6 (Tally)');
    await run.scale(3);
    const left = await run.converged(3, 'the MachineDeployment to be consistent at 3 again (Tally)');
    keptTheirs(left, 'back at 3');
    await unchanged('back at 3');
    run.phaseDone('scaled to 3 (Tally)');

    await run.deleteCluster();
    run.phaseDone('deleted');
    expect(await client.list(CLAIM_RESOURCE, { namespace }).then((l) => l.items), 'no claim left').toEqual([]);
    expect(run.watch.events(), 'the address watch saw the scenario').toBeGreaterThan(0);
    expect(run.watch.doubles, 'no address was ever held twice').toEqual([]);
    return { provider: 'the reference provider, then Tally', firstAddressesMs, phases: run.phases };
  });
  // The pools were deleted on the way out; Tally, still running, removes their finalizer (the reference's
  // ProtectPool) once nothing is allocated: the cluster-scoped one would otherwise outlive the namespace.
  const deleted = pools;
  if (deleted) {
    await context.eventually("the pools to be deleted (Tally removes the reference's finalizer)", async () => {
      for (const target of [deleted.v4, deleted.v6]) {
        try {
          await client.get(target.resource, { namespace: target.namespace, name: target.ref.name });
          return undefined;
        } catch (error) {
          if (!isNotFound(error)) throw error;
        }
      }
      return true;
    });
  }
  return figures;
}
