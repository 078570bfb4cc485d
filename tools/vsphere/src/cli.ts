#!/usr/bin/env node
import { formatDuration } from '@tally-ipam/testenv';
import { ensureCapv } from './capv-binary.js';
import { ensureVcsim } from './vcsim-binary.js';
import { CAPV_RELEASES, capvVersionFor, DEFAULT_CAPV_VERSION } from './versions.js';

const USAGE = `usage: tally-vsphere prepare [--capv VERSION]

  prepare   build (or find in the cache) CAPV's manager and the vCenter simulator for a CAPV release
            (default: the one paired with the run's Cluster API release, TALLY_CAPI_VERSION, else
            ${DEFAULT_CAPV_VERSION}; known: ${Object.keys(CAPV_RELEASES).join(', ')})

environment: TALLY_CACHE_DIR (cache root)`;

const log = (message: string): void => {
  console.error(`[tally-vsphere] ${message}`);
};

function capvArgument(args: readonly string[]): string {
  const index = args.indexOf('--capv');
  if (index === -1) return capvVersionFor();
  const value = args[index + 1];
  if (!value) throw new Error('--capv needs a version');
  return value;
}

async function main(args: readonly string[]): Promise<void> {
  if (args[0] !== 'prepare') {
    console.error(USAGE);
    process.exitCode = args[0] === undefined || args[0] === '--help' ? 0 : 2;
    return;
  }
  const version = capvArgument(args);
  const started = Date.now();
  // One after the other: on two cores two Go builds at once only slow each other down.
  const capv = await ensureCapv({ version, onProgress: log });
  log(
    `CAPV ${version}: ${capv.path} (${capv.builtNow ? `built in ${formatDuration(capv.buildDurationMs)}` : 'cached'})`,
  );
  const vcsim = await ensureVcsim({ capvVersion: version, onProgress: log });
  log(
    `vCenter simulator (govmomi ${vcsim.govmomi}): ${vcsim.path} ` +
      `(${vcsim.builtNow ? `built in ${formatDuration(vcsim.buildDurationMs)}` : 'cached'})`,
  );
  log(`prepared in ${formatDuration(Date.now() - started)}`);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  log(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
});
