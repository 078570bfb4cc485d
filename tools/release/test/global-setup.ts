import { ensureClusterctl } from '@tally-ipam/testenv';

/** clusterctl is built (once per machine, into the binary cache) before any test runs, never inside a test's timeout. */
export default async function setup(): Promise<void> {
  await ensureClusterctl({ onProgress: (message) => process.stderr.write(`[clusterctl] ${message}\n`) });
}
