/**
 * Tally built with a smaller ledger block (issue 33): the production bundle with `ADDRESS_BLOCK_BITS` (8: 256
 * addresses per TallyAddressLedger) replaced by 6, 5 or 4 (64, 32, 16 addresses). A build variant, not a runtime flag:
 * a ledger's name is a function of the address and the block size, so two replicas started with different flags would
 * hold one address in two different ledgers and both succeed — uniqueness must not depend on every replica being
 * started alike. The variants are opt-in contenders (`--contenders=tally,tally-64,…`).
 */

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const BLOCK_SIZE_VARIANTS = ['tally-64', 'tally-32', 'tally-16'] as const;
export type BlockSizeVariant = (typeof BLOCK_SIZE_VARIANTS)[number];

/** The bits of the address that number an entry within its block, per variant (production: 8). */
export const VARIANT_BLOCK_BITS: Readonly<Record<BlockSizeVariant, number>> = {
  'tally-64': 6,
  'tally-32': 5,
  'tally-16': 4,
};

/** The one line of the bundle that sets the block size, as esbuild writes `export const ADDRESS_BLOCK_BITS = 8`. */
export const BLOCK_BITS_LINE = 'var ADDRESS_BLOCK_BITS = 8;';

export function isBlockSizeVariant(contender: string): contender is BlockSizeVariant {
  return (BLOCK_SIZE_VARIANTS as readonly string[]).includes(contender);
}

/**
 * The bundle's text with its block size set to `bits`. Refuses a bundle holding the line other than exactly once
 * (renamed by esbuild, moved, or inlined): the bench must never measure an unpatched copy under a variant's name.
 */
export function withBlockBits(bundle: string, bits: number, bundlePath: string): string {
  if (!Number.isInteger(bits) || bits < 1 || bits > 8) {
    throw new Error(`block bits: must be an integer from 1 to 8 (256 entries per ledger at most), got ${bits}`);
  }
  const occurrences = bundle.split(BLOCK_BITS_LINE).length - 1;
  if (occurrences !== 1) {
    throw new Error(
      `${bundlePath}: "${BLOCK_BITS_LINE}" occurs ${occurrences} times, expected exactly once; ` +
        'the block-size variants cannot be built from this bundle',
    );
  }
  return bundle.replace(BLOCK_BITS_LINE, `var ADDRESS_BLOCK_BITS = ${bits};`);
}

/**
 * Writes a copy of the bundle per variant beside it (`main-64.mjs`, …), in the bundle's directory so that they are
 * removed with it. Returns each variant's path.
 */
export function writeVariantBundles(
  bundlePath: string,
  directory: string,
  variants: readonly BlockSizeVariant[],
): Map<BlockSizeVariant, string> {
  const bundle = readFileSync(bundlePath, 'utf8');
  const paths = new Map<BlockSizeVariant, string>();
  for (const variant of variants) {
    const bits = VARIANT_BLOCK_BITS[variant];
    const path = join(directory, `main-${2 ** bits}.mjs`);
    writeFileSync(path, withBlockBits(bundle, bits, bundlePath));
    paths.set(variant, path);
  }
  return paths;
}

/**
 * The scenarios a variant cannot run: they start on a prefill, which the bench writes with `AddressLedgers` as
 * compiled into this process (8 bits), so a variant would start on ledgers of another block size.
 */
export const PREFILLED_SCENARIOS: readonly string[] = ['full-pool', 'memory'];

/** Throws, naming the contender and the scenario, when a variant is asked for a scenario that starts on a prefill. */
export function refusePrefilledVariants(scenarios: readonly string[], contenders: readonly string[]): void {
  for (const scenario of scenarios) {
    if (!PREFILLED_SCENARIOS.includes(scenario)) continue;
    const variant = contenders.find(isBlockSizeVariant);
    if (variant) {
      throw new Error(
        `contender ${variant} cannot run scenario ${scenario}: it starts on a prefill written with 256-address ` +
          'ledgers; block-size variants run only burst, many-pools and steady',
      );
    }
  }
}
