import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { metal3CRDDirectory, tallyAddressLockCustomResourceDefinition, tallyCRDDirectory } from '@tally-ipam/api-types';
import { createGlobalSetup, type GlobalSetup } from '@tally-ipam/testenv/vitest';

/**
 * One control plane of the package's own (never an external test cluster: its lock CRD is the retired one): Tally's
 * CRDs with the lock CRD retired — the state `setupIPAMProvider({ addressLedgers: true })` requires before it
 * allocates — Metal3's CRDs and Cluster API's core and IPAM CRDs.
 */
const setup: GlobalSetup = async (project) => {
  const crds = mkdtempSync(join(tmpdir(), 'metal3-ipam-crds-'));
  const lockFile = 'ipam.cluster.x-k8s.io_tallyaddresslocks.yaml';
  for (const file of readdirSync(tallyCRDDirectory())) {
    if (file !== lockFile) cpSync(join(tallyCRDDirectory(), file), join(crds, file));
  }
  // JSON is YAML: the retired lock CRD as the library builds it.
  writeFileSync(join(crds, lockFile), JSON.stringify(tallyAddressLockCustomResourceDefinition({ retired: true })));
  const teardown = await createGlobalSetup({
    ignoreTestKubeconfig: true,
    crds: [crds, metal3CRDDirectory()],
    capiCRDs: ['ipam.cluster.x-k8s.io', 'cluster.x-k8s.io'],
  })(project);
  return async () => {
    try {
      await teardown();
    } finally {
      rmSync(crds, { recursive: true, force: true });
    }
  };
};

export default setup;
